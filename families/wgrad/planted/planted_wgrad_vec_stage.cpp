/* A test-only build of the weight gradient's vector path (families/wgrad/wgrad_vec_tc.cu) without
 * its one barrier per k-tile (primitives/planted_bugs.h): a thread computes on a stage before the
 * other threads' copies have landed, and refills the stage others still read. Launcher:
 * convnd_planted_vec_stage_wgrad_vec_tc. */
#define CONVND_EMU 1
#define CONVND_PLANTED_BUG CONVND_PLANT_WGRAD_VEC_NO_STAGE_BARRIER
#define CONVND_NS convnd_planted_vec_stage
#define CONVND_LAUNCHER(name) convnd_planted_vec_stage_##name
#include "wgrad_vec_tc.cu"
