/* CUDA-core (SIMT) f32 implicit GEMM with exact FMA: configuration index -> tile template
 * arguments (igemm_configs.h). */
#include "portability.cuh"
#include "igemm_configs.h"
#include "igemm_io.cuh"

namespace CONVND_NS {

__host__ static convnd_status igemm_simt_launch(const convnd_launch_args *a) {
    int32_t index = 0;
#define CONVND_IGEMM_SIMT_LAUNCH(cname, BM, BN, BK, TM, TN, STAGES)                                \
    if (a->config == index++) {                                                                    \
        using mma = igemm_simt_mma<BM, BN, BK, igemm_ld<float, BK>::value, TM, TN>;                \
        if (a->params.io_dim >= 0)                                                                 \
            return igemm_io_launch_tile<float, mma, BM, BN, BK, STAGES>(a, "igemm_simt:" #cname);  \
        return igemm_launch_tile<float, mma, BM, BN, BK, STAGES>(a, "igemm_simt:" #cname);         \
    }
    CONVND_IGEMM_SIMT_CONFIGS(CONVND_IGEMM_SIMT_LAUNCH)
#undef CONVND_IGEMM_SIMT_LAUNCH
    return convnd_error(CONVND_ERR_INTERNAL, "igemm_simt: config %d out of range [0, %d)",
                        (int)a->config, (int)index);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(igemm_simt) {
    return CONVND_NS::igemm_simt_launch(a);
}
