/* The emulated CUDA device: the interface between the portability layer's emulation half
 * (primitives/portability.cuh with CONVND_EMU=1, compiled into every kernel) and the emulator core
 * (device/emu_*.c).
 *
 * Model: a launch runs its grid on host worker threads, one block at a time per worker. The
 * threads of a block are cooperative fibers: a fiber runs until it reaches __syncthreads, a
 * warp-collective operation, or the end of the kernel, then the block's scheduler runs the next
 * one in the selected order (forward, reverse or seeded shuffle). Shared memory is a per-worker
 * arena, poisoned (0xFF bytes: NaN for f32/f16/bf16) at block start.
 *
 * Plain C so the core is C; the structs are read directly by inline code in the header (the fast
 * path of threadIdx, blockIdx, cp.async and shared memory makes no call). */
#ifndef CONVND_EMU_H
#define CONVND_EMU_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes and limits of the emulated device: those of an sm_90 GPU. */
#define CONVND_EMU_WARP 32
#define CONVND_EMU_MAX_THREADS 1024
#define CONVND_EMU_MAX_SMEM 232448u       /* 227 KiB of shared memory per block */
#define CONVND_EMU_MAX_STATIC_SMEM 49152u /* 48 KiB of static shared memory */
#define CONVND_EMU_MAX_SHARED_VARS 32     /* distinct CONVND_SHARED declarations per kernel */

/* threadIdx, blockIdx, blockDim, gridDim (the header typedefs uint3 to this). */
typedef struct convnd_emu_dim3 {
    unsigned x, y, z;
} convnd_emu_dim3;

/* One deferred cp.async copy. src == NULL: zero-fill. */
typedef struct convnd_emu_copy {
    void *dst;
    const void *src;
    uint32_t bytes;
    uint32_t group; /* index of the commit group it belongs to */
} convnd_emu_copy;

/* The last arriving lane of a warp-collective operation calls this with every lane's argument
 * (args[lane], NULL for lanes outside `lanes`) while the other lanes wait. */
typedef void (*convnd_emu_warp_fn)(void *const *args, uint32_t lanes);

typedef struct convnd_emu_warp {
    uint32_t lanes;   /* lanes that exist (a partial last warp has fewer than 32) */
    uint32_t exited;  /* lanes whose thread returned from the kernel */
    uint32_t arrived; /* lanes waiting at the pending collective */
    uint32_t mask;    /* the pending collective's mask */
    convnd_emu_warp_fn fn;
    const char *name;
    void *args[CONVND_EMU_WARP];
} convnd_emu_warp;

typedef struct convnd_emu_shared_var {
    const void *key; /* address of a static unique to the declaration (and template instance) */
    size_t offset, bytes;
} convnd_emu_shared_var;

struct convnd_emu_launch;

/* The block being run by one worker. */
typedef struct convnd_emu_block {
    convnd_emu_dim3 block_idx, block_dim, grid_dim;
    unsigned char *smem; /* the arena: dynamic shared memory at offset 0, static after it */
    size_t dynamic_smem, smem_used, static_smem;
    convnd_emu_shared_var vars[CONVND_EMU_MAX_SHARED_VARS];
    int32_t num_vars;
    uint32_t num_threads, num_warps;
    convnd_emu_warp *warps;
    const struct convnd_emu_launch *launch;
    uint64_t linear_id;
    int32_t released; /* a warp collective completed: waiting lanes became runnable */
    int32_t copies;   /* convnd_emu_copies: when a cp.async lands */
    uint64_t copy_seed;
    int32_t failed; /* an error was recorded in message; the block is abandoned */
    char message[768];
    struct convnd_emu_hopper *hopper; /* sm_90 async state (device/emu_hopper.h), lazily made */
} convnd_emu_block;

typedef enum convnd_emu_thread_state {
    CONVND_EMU_READY = 0,
    CONVND_EMU_RUNNING = 1,
    CONVND_EMU_AT_BARRIER = 2,
    CONVND_EMU_AT_WARP_OP = 3,
    CONVND_EMU_EXITED = 4,
    CONVND_EMU_AT_WAIT = 5 /* mbarrier, named barrier or warpgroup op (device/emu_hopper.h) */
} convnd_emu_thread_state;

struct convnd_emu_fiber;

/* One thread of the block (one fiber). */
typedef struct convnd_emu_thread {
    convnd_emu_dim3 thread_idx;
    uint32_t linear, warp, lane;
    convnd_emu_block *block;
    /* cp.async queue, oldest first */
    convnd_emu_copy *copies;
    uint32_t num_copies, copies_cap;
    uint32_t groups_committed;
    uint32_t copies_issued; /* this block: seeds the early/late choice of the mixed mode */
    /* private to the core */
    int32_t state; /* convnd_emu_thread_state */
    int32_t in_kernel;
    uint64_t barriers;    /* __syncthreads calls so far in this block */
    const void *wait_key; /* CONVND_EMU_AT_WAIT: what it waits for, and how to describe it */
    const char *wait_what;
    /* the mbarrier phase (address, parity) whose last try_wait returned false before it
     * completed: the next try_wait on it blocks (device/emu_mbarrier.c) */
    const void *timed_out_bar;
    uint32_t timed_out_parity;
    struct convnd_emu_fiber *fiber;
} convnd_emu_thread;

/* The thread (fiber) running on this host thread; NULL outside a kernel. The default TLS model:
 * an initial-exec variable would mark libconvnd.so STATIC_TLS, and then a dlopen after other
 * libraries took the static TLS surplus (Python importing torch, then convnd) fails with
 * "cannot allocate memory in static TLS block". Linking an executable relaxes the access to
 * the fast model anyway. */
#if defined(__GNUC__)
#define CONVND_EMU_TLS __thread /* no C++ TLS wrapper call on each access */
#else
#define CONVND_EMU_TLS _Thread_local
#endif
extern CONVND_EMU_TLS convnd_emu_thread *convnd_emu_self;

/* One launch. invoke(ctx) runs the kernel body for the current thread. */
typedef struct convnd_emu_launch {
    const char *kernel;   /* how the launch site spells the kernel */
    const char *launcher; /* the function that launched it */
    const char *file;
    int line;
    convnd_emu_dim3 grid, block;
    size_t dynamic_smem;
    void (*invoke)(void *ctx);
    void *ctx;
} convnd_emu_launch;

/* Runs the whole grid (synchronously). On a device error (bad configuration, divergent barrier,
 * incomplete warp collective, shared memory overflow...) returns CONVND_ERR_DEVICE with a
 * message naming the kernel, the block and the threads. */
convnd_status convnd_emu_run(const convnd_emu_launch *launch);

/* ---- called by kernel code (through the portability layer) ------------------------------- */
void convnd_emu_syncthreads(void);
/* Static shared variable: the same region for every thread of the block, poisoned. */
void *convnd_emu_static_shared(const void *key, size_t bytes, size_t align);
/* Blocks until every lane of `mask` (that exists) reached the same operation; the last one
 * calls fn. Lanes outside the mask must not call it. */
void convnd_emu_warp_collective(const char *name, uint32_t mask, void *arg, convnd_emu_warp_fn fn);
/* Shuffles (kind: 0 idx, 1 up, 2 down, 3 xor) of a 64-bit payload; votes (kind: 0 ballot,
 * 1 any, 2 all). */
uint64_t convnd_emu_shfl(int kind, uint32_t mask, uint64_t value, int lane_arg, int width);
uint32_t convnd_emu_vote(int kind, uint32_t mask, int predicate);
void convnd_emu_syncwarp(uint32_t mask);
/* cp.async: in the mixed mode, whether the copy t issues now lands at once (1) or at its wait. */
int convnd_emu_copy_lands_now(convnd_emu_thread *t);
/* cp.async: performs the copies of every committed group but the newest `pending` ones. */
void convnd_emu_cp_async_wait(uint32_t pending);
void convnd_emu_cp_async_grow(convnd_emu_thread *t);
/* The emulated mma.sync's arithmetic: row-major d (m x n) = a (m x k) * b (k x n) + c, each element
 * a chain of fmaf in increasing k. n <= CONVND_EMU_MMA_MAX_N. d may be c. */
#define CONVND_EMU_MMA_MAX_N 32
void convnd_emu_mma_f32(int m, int n, int k, const float *a, const float *b, const float *c,
                        float *d);
/* Plain 16-byte vector stores (convnd_st_vec) to global memory: convnd_st_vec counts each
 * (shared-memory stores are not counted), and convnd_emu_global_vector_stores16 returns how many
 * there were in this process so far, all launches and threads together, so that a test can
 * assert that a kernel took its 16-byte store path. */
void convnd_emu_count_vector_store16(const void *p);
uint64_t convnd_emu_global_vector_stores16(void);
/* Reports a kernel-side error (misuse of a primitive) and abandons the block: never returns. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void convnd_emu_fail(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
