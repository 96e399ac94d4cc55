/* A test-only build of the weight-gradient kernels (families/wgrad/wgrad.cu) whose split-K adds its
 * partials with atomics in arrival order (primitives/planted_bugs.h): the determinism check must
 * see the result change with the thread order. Launcher: convnd_planted_arrival_wgrad_splitk. */
#define CONVND_EMU 1
#define CONVND_PLANTED_BUG CONVND_PLANT_WGRAD_ARRIVAL_ORDER
#define CONVND_NS convnd_planted_arrival
#define CONVND_LAUNCHER(name) convnd_planted_arrival_##name
#include "wgrad.cu"
