/* Private to device/emu_hopper.c, emu_mbarrier.c, emu_wgmma.c and emu_tma.c: the per-block
 * state of the sm_90 asynchronous primitives. */
#ifndef CONVND_EMU_HOPPER_INTERNAL_H
#define CONVND_EMU_HOPPER_INTERNAL_H

#include "emu_internal.h"
#include "emu_hopper.h"

#define CONVND_EMU_WARPGROUP 128
#define CONVND_EMU_MAX_WARPGROUPS (CONVND_EMU_MAX_THREADS / CONVND_EMU_WARPGROUP)

typedef struct convnd_emu_hopper convnd_emu_hopper;

/* The last thread of a warpgroup to reach a warpgroup-collective operation runs fn with every
 * thread's argument (args[i] of thread first + i). */
typedef void (*convnd_emu_wg_fn)(convnd_emu_hopper *h, uint32_t wg, void *const *args);

typedef struct convnd_emu_wg_rendezvous {
    uint32_t arrived;
    const char *name;
    convnd_emu_wg_fn fn;
    void *args[CONVND_EMU_WARPGROUP];
} convnd_emu_wg_rendezvous;

/* One wgmma.mma_async of a warpgroup, waiting for its wait_group. */
typedef struct convnd_emu_wgmma_op {
    uint32_t group;  /* the commit group it belongs to */
    uint32_t n, k;   /* m64nNkK */
    int32_t chained; /* the accumulators are those of an earlier pending op: read them then */
    int32_t scale_d;
    float *d[CONVND_EMU_WARPGROUP]; /* each thread's accumulator registers */
    float *c;     /* !chained && scale_d: the accumulators at issue, [thread][n / 2] */
    float *a, *b; /* operands read at issue: a[m][k] (64 x K), b[n][k] */
    /* Their raw bits at issue, checked again at the covering wait_group: the hardware may read
     * the operands any time in between, so shared memory changed there gives undefined results. */
    uint32_t *raw_a, *raw_b;
    uint64_t desc_a, desc_b;
    int32_t type, trans_a, trans_b;
} convnd_emu_wgmma_op;

#define CONVND_EMU_WGMMA_MAX_N 256

typedef struct convnd_emu_wgmma_queue {
    convnd_emu_wgmma_op **ops;
    uint32_t num, cap;
    uint32_t committed; /* commit_group calls so far */
    float *carry;       /* the last performed op's result, [thread][N / 2] */
    const float *carry_d;
} convnd_emu_wgmma_queue;

/* One TMA operation: a load (signals bar) or a store (bulk group of its thread). */
typedef struct convnd_emu_tma_op {
    convnd_tmap map;
    uint32_t smem;  /* shared-window address of the box */
    uint64_t *bar;  /* loads */
    uint32_t group; /* stores: bulk async-group */
    int32_t coords[5];
    uint16_t offsets[3];
} convnd_emu_tma_op;

typedef struct convnd_emu_tma_queue {
    convnd_emu_tma_op *ops;
    uint32_t num, cap;
    uint32_t committed;
} convnd_emu_tma_queue;

struct convnd_emu_hopper {
    convnd_emu_block *block;
    int32_t used; /* a primitive ran in the current block: reset at the next one */
    /* The shared memory as the async proxy sees it: updated by fence.proxy.async and by the
     * async proxy's own writes. A byte the async proxy reads that differs was written by an
     * ordinary store after the last fence. */
    unsigned char *shadow;
    struct {
        uint32_t arrived, count;
    } named[16];
    convnd_emu_wg_rendezvous wg[CONVND_EMU_MAX_WARPGROUPS];
    convnd_emu_wgmma_queue wgmma[CONVND_EMU_MAX_WARPGROUPS];
    uint8_t wgmma_fenced[CONVND_EMU_MAX_THREADS];
    convnd_emu_tma_queue loads;                          /* block-wide, issue order */
    convnd_emu_tma_queue stores[CONVND_EMU_MAX_THREADS]; /* per thread (bulk groups are) */
};

/* The calling thread's block state, created on first use. */
convnd_emu_hopper *convnd_emu_hopper_get(void);
/* Warpgroup rendezvous (whole warpgroup of the calling thread). */
void convnd_emu_wg_collective(const char *name, void *arg, convnd_emu_wg_fn fn);
/* Fails unless [addr, addr + bytes) of shared memory is as the async proxy last saw it. */
void convnd_emu_proxy_check(convnd_emu_hopper *h, uint32_t addr, uint32_t bytes,
                            const char *reader);
/* A write by the async proxy: shared memory and its async view both get the bytes. */
void convnd_emu_proxy_write(convnd_emu_hopper *h, uint32_t addr, const void *src, uint32_t bytes);
/* Swizzled shared-window address (mode 0 none, 1 32B, 2 64B, 3 128B, as CUtensorMapSwizzle):
 * bits [4, 4 + mode) ^= bits [7, 7 + mode). */
static inline uint32_t convnd_emu_swizzle(uint32_t addr, uint32_t mode) {
    const uint32_t mask = (1u << mode) - 1u;
    return addr ^ (((addr >> 7) & mask) << 4);
}
/* complete_tx from the async proxy (no running thread needed): 0, or -1 with the block failed. */
int convnd_emu_mbarrier_complete_tx_in(convnd_emu_block *b, uint64_t *bar, uint32_t tx);
void convnd_emu_mbarrier_describe(const uint64_t *bar, char *buf, size_t len);
/* Performs the queued TMA loads (the async proxy's progress). */
int convnd_emu_tma_progress(convnd_emu_hopper *h);
void convnd_emu_tma_reset(convnd_emu_hopper *h);
void convnd_emu_wgmma_reset(convnd_emu_hopper *h);
/* Block end: fails (returns -1, message set) for wgmma / bulk stores never waited for. */
int convnd_emu_wgmma_end(convnd_emu_hopper *h, char *msg, size_t len);
int convnd_emu_tma_end(convnd_emu_hopper *h, char *msg, size_t len);
/* f16 / bf16 bits to float. */
float convnd_emu_half_to_f32(uint16_t h);
float convnd_emu_bf16_to_f32(uint16_t h);

#endif
