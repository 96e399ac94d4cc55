/* Tensor-core phase-decomposed transposed convolution, f32 with TF32 allowed (instances of
 * convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

CONVND_TC_UNIT(convT_tc_tf32, float, convT_tc_family)
