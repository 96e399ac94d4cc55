/* The implicit GEMM with its main-loop barrier moved below the prefetch. */
#define CONVND_PLANTED_BUG CONVND_PLANT_PREFETCH_ABOVE_BARRIER
#define CONVND_NS convnd_planted_prefetch
#define PLANTED_TC convnd_planted_prefetch_igemm_tc_f16
#define PLANTED_SIMT convnd_planted_prefetch_igemm_simt
#include "planted_igemm.inc"
