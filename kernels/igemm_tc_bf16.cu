/* Tensor-core implicit GEMM, bf16 (instances of igemm_tc.cuh). */
#include "portability.cuh"
#include "igemm_tc.cuh"

extern "C" convnd_status CONVND_LAUNCHER(igemm_tc_bf16)(const convnd_launch_args *a) {
    return CONVND_NS::igemm_tc_launch<convnd_bf16>(a);
}
