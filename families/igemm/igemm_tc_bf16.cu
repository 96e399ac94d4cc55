/* Tensor-core implicit GEMM, bf16 (instances of igemm_tc.cuh). */
#include "portability.cuh"
#include "igemm_tc.cuh"

CONVND_TC_UNIT(igemm_tc_bf16, convnd_bf16, igemm_tc_family)
