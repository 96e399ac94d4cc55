/* Tensor-core phase-decomposed transposed convolution, f16 (instances of convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

CONVND_TC_UNIT(convT_tc_f16, convnd_half, convT_tc_family)
