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
/* hopper_igemm consumers: the stage whose wgmma is still in flight released (empty mbarrier)
 * instead of the previous one, whose wait_group just completed */
#define CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT 3
/* hopper_igemm consumers: the wait on a stage's full mbarrier dropped (read before the TMA
 * load has landed) */
#define CONVND_PLANT_HOPPER_NO_FULL_WAIT 4

#ifndef CONVND_PLANTED_BUG
#define CONVND_PLANTED_BUG CONVND_PLANT_NONE
#endif

#endif
