/* Private to the emulator core: a worker (one per host thread that runs blocks) and the block
 * runner shared by emu_block.c and emu_grid.c. */
#ifndef CONVND_EMU_INTERNAL_H
#define CONVND_EMU_INTERNAL_H

#include "emu.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CONVND_EMU_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define CONVND_EMU_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CONVND_EMU_POISON(p, n) ((void)(p), (void)(n))
#define CONVND_EMU_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#define CONVND_EMU_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef struct convnd_emu_worker {
    convnd_emu_thread threads[CONVND_EMU_MAX_THREADS]; /* fixed: fibers point into it */
    uint32_t num_fibers;                               /* threads[0..num_fibers) have a fiber */
    uint32_t order[CONVND_EMU_MAX_THREADS];
    convnd_emu_warp warps[CONVND_EMU_MAX_THREADS / CONVND_EMU_WARP];
    unsigned char *arena; /* CONVND_EMU_MAX_SMEM bytes, 128-byte aligned */
    size_t stack_bytes;
    convnd_emu_block block;
} convnd_emu_worker;

/* This host thread's worker, created on first use (NULL when out of memory). */
convnd_emu_worker *convnd_emu_worker_get(void);
convnd_emu_worker *convnd_emu_worker_new(void);
void convnd_emu_worker_free(convnd_emu_worker *w);

/* How a launch runs: thread order, cp.async landing, and their seed. */
typedef struct convnd_emu_settings {
    convnd_emu_order order;
    uint64_t seed; /* of the order */
    convnd_emu_copies copies;
    uint64_t copy_seed;
} convnd_emu_settings;

/* Acquires what blocks of n threads need on w (fiber stacks, cp.async queues), so that a launch
 * fails before its first block rather than in the middle. 0, or -1 when out of memory. */
int convnd_emu_worker_prepare(convnd_emu_worker *w, uint32_t n);

/* Runs block `linear_id` of the launch on w. 0 on success; else -1 with w->block.message set
 * (the detail only: the caller prefixes kernel and block). */
int convnd_emu_run_block(convnd_emu_worker *w, const convnd_emu_launch *launch, uint64_t linear_id,
                         const convnd_emu_settings *settings);

/* The host worker threads a launch would use now (after caps, before the grid's own limit). */
int32_t convnd_emu_host_threads(void);

/* Test hook: while on, creating a fiber fails on every host thread but the caller's (a helper
 * thread running out of memory). */
void convnd_emu_inject_fiber_failure(int on);

#endif
