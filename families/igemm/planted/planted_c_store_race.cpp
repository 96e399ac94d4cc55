/* The implicit GEMM without the barrier before its C-tile store. */
#define CONVND_PLANTED_BUG CONVND_PLANT_NO_BARRIER_BEFORE_C_STORE
#define CONVND_NS convnd_planted_c_store
#define PLANTED_TC convnd_planted_c_store_igemm_tc_f16
#define PLANTED_SIMT convnd_planted_c_store_igemm_simt
#include "planted_igemm.inc"
