/* Tensor-core implicit GEMM, f16 (instances of igemm_tc.cuh). */
#include "portability.cuh"
#include "igemm_tc.cuh"

extern "C" convnd_status CONVND_LAUNCHER(igemm_tc_f16)(const convnd_launch_args *a) {
    return CONVND_NS::igemm_tc_launch<convnd_half>(a);
}
