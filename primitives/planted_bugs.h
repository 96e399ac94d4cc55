/* Bugs that a test plants in a kernel instance built only for it (tests/planted/), to prove that
 * the emulated device's thread orders and cp.async modes catch them. The library itself always
 * builds with CONVND_PLANTED_BUG 0, where every test below is a constant false. */
#ifndef CONVND_PLANTED_BUGS_H
#define CONVND_PLANTED_BUGS_H

#define CONVND_PLANT_NONE 0
/* implicit GEMM main loop: the barrier moved below the prefetch, which then refills the stage
 * other warps may still be reading (write-after-read) */
#define CONVND_PLANT_PREFETCH_ABOVE_BARRIER 1
/* implicit GEMM: the barrier between the last math and the C-tile store (which reuses the stage
 * buffers) removed */
#define CONVND_PLANT_NO_BARRIER_BEFORE_C_STORE 2
/* wgrad split-K: the partials added into one f32 per dw element with atomics, in the order they
 * arrive, instead of written apart and summed in a fixed order (an order-dependent result) */
#define CONVND_PLANT_WGRAD_ARRIVAL_ORDER 3
/* implicit-GEMM wgrad main loop: the barrier after the math removed, so the next k-tile's loads
 * refill the stage other threads are still reading (write-after-read) */
#define CONVND_PLANT_WGRAD_IGEMM_NO_STAGE_BARRIER 4
/* depthwise wgrad: the barriers between the steps of the lanes' reduction tree removed */
#define CONVND_PLANT_WGRAD_DEPTHWISE_NO_TREE_BARRIER 5
/* hopper_igemm consumers: the stage whose wgmma is still in flight released (empty mbarrier)
 * instead of the previous one, whose wait_group just completed */
#define CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT 6
/* hopper_igemm consumers: the wait on a stage's full mbarrier dropped (read before the TMA
 * load has landed) */
#define CONVND_PLANT_HOPPER_NO_FULL_WAIT 7
/* wgrad_vec_tc main loop: the one barrier per k-tile removed, so a thread computes on a stage
 * whose other threads' copies have not landed, and refills the stage others still read */
#define CONVND_PLANT_WGRAD_VEC_NO_STAGE_BARRIER 8

#ifndef CONVND_PLANTED_BUG
#define CONVND_PLANTED_BUG CONVND_PLANT_NONE
#endif

#endif
