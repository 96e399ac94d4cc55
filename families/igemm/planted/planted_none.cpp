/* The same test-only build without a planted bug: the control that the harness itself passes. */
#define CONVND_NS convnd_planted_none
#define PLANTED_TC convnd_planted_none_igemm_tc_f16
#define PLANTED_SIMT convnd_planted_none_igemm_simt
#include "planted_igemm.inc"
