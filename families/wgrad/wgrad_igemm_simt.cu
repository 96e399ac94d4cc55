/* Implicit-GEMM weight gradient on CUDA cores (wgrad_igemm_kernel, families/wgrad/wgrad_igemm.cuh):
 * exact f32 FMA register tiles (igemm_simt_mma); f16/bf16 inputs are staged as f32. One launcher,
 * one tile of families/wgrad/wgrad_igemm_configs.h's SIMT table per configuration (the dispatch:
 * config_dispatch.cuh). */
#include "portability.cuh"
#include "config_dispatch.cuh"
#include "igemm_mma.cuh"
#include "wgrad_igemm.cuh"
#include "wgrad_igemm_configs.h"
#include "launch_abi.h"

namespace CONVND_NS {

struct wgrad_igemm_simt_family {
    static constexpr const char *name = "wgrad_igemm_simt";
    template <typename T, int BM, int BN, int BK, int TM, int TN, int SPLITS>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma =
            igemm_simt_mma<BM, BN, BK, wgrad_igemm_smem<float, BM, BN, BK, true>::LD, TM, TN>;
        return wgrad_igemm_launch_tile<T, float, mma, BM, BN, BK>(a, SPLITS, spec);
    }
};
CONVND_DEFINE_CONFIG_DISPATCH(wgrad_igemm_simt_dispatch, CONVND_WGRAD_IGEMM_SIMT_CONFIGS)

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_igemm_simt) {
    return CONVND_NS::convnd_launch_by_dtype(a->params.dtype, "wgrad_igemm_simt", [&](auto t) {
        using T = typename decltype(t)::type;
        return CONVND_NS::wgrad_igemm_simt_dispatch<CONVND_NS::wgrad_igemm_simt_family, T>(a);
    });
}
