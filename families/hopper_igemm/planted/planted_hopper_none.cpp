/* The same test-only build of the Hopper tier without a planted bug: the control. */
#define CONVND_NS convnd_planted_hopper_none
#define CONVND_LAUNCHER(name) convnd_planted_none_##name
#include "planted_hopper.inc"
