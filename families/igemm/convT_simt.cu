/* CUDA-core (SIMT) f32 phase-decomposed transposed convolution with exact FMA: one tile of the
 * implicit GEMM's SIMT table (igemm_configs.h; the dispatch over it: config_dispatch.cuh). */
#include "portability.cuh"
#include "config_dispatch.cuh"
#include "igemm_configs.h"
#include "convT_kernel.cuh"

namespace CONVND_NS {

struct convT_simt_family {
    static constexpr const char *name = "convT_simt";
    template <typename T, int BM, int BN, int BK, int TM, int TN, int STAGES>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma = convT_simt_mma_kmajor<BM, BN, BK, igemm_ld<float, BK>::value,
                                          convT_ldb<float, BN>::value, TM, TN>;
        return convT_launch_tile<float, mma, BM, BN, BK, STAGES>(a, spec);
    }
};
CONVND_DEFINE_CONFIG_DISPATCH(convT_simt_dispatch, CONVND_IGEMM_SIMT_CONFIGS)

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(convT_simt) {
    return CONVND_NS::convT_simt_dispatch<CONVND_NS::convT_simt_family, float>(a);
}
