/* Tensor-core phase-decomposed transposed convolution, f16 (instances of convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

extern "C" convnd_status CONVND_LAUNCHER(convT_tc_f16)(const convnd_launch_args *a) {
    return CONVND_NS::convT_tc_launch<convnd_half>(a);
}
