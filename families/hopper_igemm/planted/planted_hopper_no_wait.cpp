/* The Hopper tier with the consumers' wait on a stage's full mbarrier dropped. */
#define CONVND_PLANTED_BUG CONVND_PLANT_HOPPER_NO_FULL_WAIT
#define CONVND_NS convnd_planted_hopper_no_wait
#define CONVND_LAUNCHER(name) convnd_planted_no_wait_##name
#include "planted_hopper.inc"
