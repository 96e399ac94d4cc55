/* Tensor-core implicit GEMM, f32 with TF32 allowed (instances of igemm_tc.cuh). */
#include "portability.cuh"
#include "igemm_tc.cuh"

CONVND_TC_UNIT(igemm_tc_tf32, float, igemm_tc_family)
