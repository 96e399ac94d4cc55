/* A test-only build of the implicit-GEMM weight gradient (families/wgrad/wgrad_igemm_*.cu) without the
 * barrier after each k-tile's math (primitives/planted_bugs.h): the next k-tile's loads refill a
 * stage other threads still read. Launchers: convnd_planted_stage_wgrad_igemm_simt / _tc. */
#define CONVND_EMU 1
#define CONVND_PLANTED_BUG CONVND_PLANT_WGRAD_IGEMM_NO_STAGE_BARRIER
#define CONVND_NS convnd_planted_stage
#define CONVND_LAUNCHER(name) convnd_planted_stage_##name
#include "wgrad_igemm_simt.cu"
#include "wgrad_igemm_tc.cu"
