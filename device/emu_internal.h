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

/* Runs block `linear_id` of the launch on w. 0 on success; else -1 with w->block.message set
 * (the detail only: the caller prefixes kernel and block). */
int convnd_emu_run_block(convnd_emu_worker *w, const convnd_emu_launch *launch, uint64_t linear_id,
                         convnd_emu_order order, uint64_t seed);

#endif
