/* Tensor-core phase-decomposed transposed convolution, bf16 (instances of convT_tc.cuh). */
#include "portability.cuh"
#include "convT_tc.cuh"

extern "C" convnd_status CONVND_LAUNCHER(convT_tc_bf16)(const convnd_launch_args *a) {
    return CONVND_NS::convT_tc_launch<convnd_bf16>(a);
}
