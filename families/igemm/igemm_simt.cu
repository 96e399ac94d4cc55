/* CUDA-core (SIMT) f32 implicit GEMM with exact FMA: one tile of igemm_configs.h's SIMT table
 * (the dispatch over it: config_dispatch.cuh). */
#include "portability.cuh"
#include "config_dispatch.cuh"
#include "igemm_configs.h"
#include "igemm_io.cuh"

namespace CONVND_NS {

struct igemm_simt_family {
    static constexpr const char *name = "igemm_simt";
    template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma = igemm_simt_mma<BM, BN, BK, igemm_ld<float, BK>::value, TM, TN>;
        if (a->params.io_dim >= 0)
            return igemm_io_launch_tile<float, mma, BM, BN, BK, STAGES>(a, spec);
        return igemm_launch_tile<float, mma, BM, BN, BK, STAGES>(a, spec);
    }
};
CONVND_DEFINE_CONFIG_DISPATCH(igemm_simt_dispatch, CONVND_IGEMM_SIMT_CONFIGS)

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(igemm_simt) {
    return CONVND_NS::igemm_simt_dispatch<CONVND_NS::igemm_simt_family, float>(a);
}
