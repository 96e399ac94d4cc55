/* Tensor-core phase-decomposed transposed convolution, bf16 (instances of convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

CONVND_TC_UNIT(convT_tc_bf16, convnd_bf16, convT_tc_family)
