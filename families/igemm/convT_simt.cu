/* CUDA-core (SIMT) f32 phase-decomposed transposed convolution with exact FMA: configuration
 * index -> the implicit GEMM's SIMT tiles (igemm_configs.h). */
#include "portability.cuh"
#include "igemm_configs.h"
#include "convT_kernel.cuh"

namespace CONVND_NS {

__host__ static convnd_status convT_simt_launch(const convnd_launch_args *a) {
    int32_t index = 0;
#define CONVND_CONVT_SIMT_LAUNCH(cname, BM, BN, BK, TM, TN, STAGES)                                \
    if (a->config == index++)                                                                      \
        return convT_launch_tile<float,                                                            \
                                 convT_simt_mma_kmajor<BM, BN, BK, igemm_ld<float, BK>::value,     \
                                                       convT_ldb<float, BN>::value, TM, TN>,       \
                                 BM, BN, BK, STAGES>(a, "convT_simt:" #cname);
    CONVND_IGEMM_SIMT_CONFIGS(CONVND_CONVT_SIMT_LAUNCH)
#undef CONVND_CONVT_SIMT_LAUNCH
    return convnd_error(CONVND_ERR_INTERNAL, "convT_simt: config %d out of range [0, %d)",
                        (int)a->config, (int)index);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(convT_simt) {
    return CONVND_NS::convT_simt_launch(a);
}
