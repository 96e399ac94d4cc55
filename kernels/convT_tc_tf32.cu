/* Tensor-core phase-decomposed transposed convolution, f32 with TF32 allowed (instances of
 * convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

extern "C" convnd_status CONVND_LAUNCHER(convT_tc_tf32)(const convnd_launch_args *a) {
    return CONVND_NS::convT_tc_launch<float>(a);
}
