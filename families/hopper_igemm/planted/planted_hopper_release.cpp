/* The Hopper tier with each stage released while its wgmma is still in flight. */
#define CONVND_PLANTED_BUG CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT
#define CONVND_NS convnd_planted_hopper_release
#define CONVND_LAUNCHER(name) convnd_planted_release_##name
#include "planted_hopper.inc"
