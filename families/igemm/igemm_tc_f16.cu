/* Tensor-core implicit GEMM, f16 (instances of igemm_tc.cuh). */
#include "portability.cuh"
#include "igemm_tc.cuh"

CONVND_TC_UNIT(igemm_tc_f16, convnd_half, igemm_tc_family)
