/* The sm_90 (Hopper) asynchronous primitives of the emulated device, as the PTX ISA defines them
 * (sections cited in device/README.md, "Hopper primitives"): mbarrier, named barriers,
 * elect.sync, setmaxnreg, wgmma (matrix descriptors, deferred completion), TMA (tensor maps,
 * tiled / im2col loads, stores with bulk groups) and fence.proxy.async. Kernels reach them through
 * primitives/hopper_*.cuh, which maps the same names onto PTX on the GPU.
 *
 * Blocking model: a thread that waits (mbarrier try_wait, bar.sync, a warpgroup rendezvous)
 * yields with state CONVND_EMU_AT_WAIT. Asynchronous copies (TMA loads) are performed as late as
 * possible: when no thread of the block can run any more. A wait that then still cannot
 * complete is reported with the barrier's state, never a hang. */
#ifndef CONVND_EMU_HOPPER_H
#define CONVND_EMU_HOPPER_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"
#include "emu_tmap.h"

#ifdef __cplusplus
extern "C" {
#endif

struct convnd_emu_block;

/* ---- core hooks (device/emu_block.c) ---------------------------------------------------- */
/* Block start: reset the block's async state (when the worker ever used it). */
void convnd_emu_hopper_block_start(struct convnd_emu_block *b);
/* No thread can run: perform queued asynchronous copies. 1 when that made a thread runnable. */
int convnd_emu_hopper_progress(struct convnd_emu_block *b);
/* Every thread exited: 0, or -1 with b->message set (wgmma or bulk stores never waited for). */
int convnd_emu_hopper_block_end(struct convnd_emu_block *b);
/* Appends the state of what `key` is (an mbarrier's phase and counts...) to buf. */
void convnd_emu_hopper_describe(const struct convnd_emu_block *b, const void *key, char *buf,
                                size_t len);
void convnd_emu_hopper_free(struct convnd_emu_hopper *h);

/* Blocks the calling thread on `key` until convnd_emu_hopper_release(key). */
void convnd_emu_hopper_wait(const void *key, const char *what);
/* Makes every thread waiting on key runnable. */
void convnd_emu_hopper_release(struct convnd_emu_block *b, const void *key);

/* ---- shared-memory addresses --------------------------------------------------------------- */
/* The shared-window address of p (its offset in the block's shared memory); fails when p is not
 * shared memory. */
uint32_t convnd_emu_smem_addr(const void *p, const char *what);

/* ---- mbarrier (PTX ISA "mbarrier") ---------------------------------------------------------- */
void convnd_emu_mbarrier_init(uint64_t *bar, uint32_t count);
/* arrive (count >= 1) with an optional expect-tx of tx bytes first; returns the state token. */
uint64_t convnd_emu_mbarrier_arrive(uint64_t *bar, uint32_t count, uint32_t tx);
void convnd_emu_mbarrier_expect_tx(uint64_t *bar, uint32_t tx);
void convnd_emu_mbarrier_complete_tx(uint64_t *bar, uint32_t tx);
/* try_wait.parity: returns (1) once the phase with this parity has completed; blocks until then. */
int convnd_emu_mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity);
/* try_wait with a state token returned by arrive. */
int convnd_emu_mbarrier_try_wait(uint64_t *bar, uint64_t state);
/* test_wait.parity: never blocks. */
int convnd_emu_mbarrier_test_wait_parity(uint64_t *bar, uint32_t parity);

/* ---- named barriers, elect.sync, setmaxnreg ---------------------------------------------- */
void convnd_emu_named_barrier(uint32_t id, uint32_t count, int wait);
int convnd_emu_elect_sync(uint32_t mask);
void convnd_emu_setmaxnreg(int increase, uint32_t regs);

/* ---- fence.proxy.async -------------------------------------------------------------------- */
void convnd_emu_fence_proxy_async(void);

/* ---- wgmma (PTX ISA 9.7.15) --------------------------------------------------------------- */
typedef enum convnd_emu_wgmma_type {
    CONVND_EMU_WGMMA_F16 = 0,
    CONVND_EMU_WGMMA_BF16 = 1,
    CONVND_EMU_WGMMA_TF32 = 2
} convnd_emu_wgmma_type;
/* wgmma.mma_async.sync.aligned.m64nNkK.f32.T.T: d (N/2 floats per thread) = A(desc_a) *
 * B(desc_b) + (scale_d ? d : 0). Warpgroup-collective; the MMA happens at the covering
 * wait_group, and until then d reads as NaN. */
void convnd_emu_wgmma_mma_async(float *d, uint32_t n, convnd_emu_wgmma_type type, uint64_t desc_a,
                                uint64_t desc_b, int scale_d, int trans_a, int trans_b);
void convnd_emu_wgmma_fence(void);
void convnd_emu_wgmma_commit_group(void);
void convnd_emu_wgmma_wait_group(uint32_t pending);
/* Decodes one operand element (row r of M/N, column k of K) through a descriptor: for tests. */
float convnd_emu_wgmma_operand(const struct convnd_emu_block *b, uint64_t desc,
                               convnd_emu_wgmma_type type, int mn_major, uint32_t r, uint32_t k);

/* ---- TMA (PTX ISA cp.async.bulk.tensor, 5.5) ------------------------------------------- */
void convnd_emu_tma_load(void *smem_dst, const convnd_tmap *map, uint64_t *bar,
                         const int32_t *coords, uint32_t rank, const uint16_t *offsets,
                         uint32_t num_offsets);
void convnd_emu_tma_store(const convnd_tmap *map, const void *smem_src, const int32_t *coords,
                          uint32_t rank);
void convnd_emu_bulk_commit_group(void);
void convnd_emu_bulk_wait_group(uint32_t pending);

#ifdef __cplusplus
}
#endif

#endif
