/* Implicit-GEMM weight gradient on tensor cores (wgrad_igemm_kernel,
 * families/wgrad/wgrad_igemm.cuh): mma.sync warps (tc_warp_mma.cuh, B n-major) with f32
 * accumulators; f16 and bf16, and f32 as TF32 (the registry admits f32 only when the caller allows
 * TF32). One launcher, one tile of families/wgrad/wgrad_igemm_configs.h's tensor-core table per
 * configuration (the dispatch: config_dispatch.cuh). */
#include "portability.cuh"
#include "config_dispatch.cuh"
#include "tc_warp_mma.cuh"
#include "wgrad_igemm.cuh"
#include "wgrad_igemm_configs.h"
#include "launch_abi.h"

namespace CONVND_NS {

/* The warp-MMA core of one configuration: B n-major, A and B rows LD apart. */
template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N>
struct wgrad_tc_mma
    : tc_warp_mma<T, BM, BN, BK, wgrad_igemm_smem<T, BM, BN, BK, false>::LD, WARPS_M, WARPS_N,
                  false, wgrad_igemm_smem<T, BM, BN, BK, false>::LD> {};

struct wgrad_igemm_tc_family {
    static constexpr const char *name = "wgrad_igemm_tc";
    template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int SPLITS>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        return wgrad_igemm_launch_tile<T, T, wgrad_tc_mma<T, BM, BN, BK, WARPS_M, WARPS_N>, BM, BN,
                                       BK>(a, SPLITS, spec);
    }
};
CONVND_DEFINE_CONFIG_DISPATCH(wgrad_igemm_tc_dispatch, CONVND_WGRAD_IGEMM_TC_CONFIGS)

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_igemm_tc) {
    if (a->params.dtype == CONVND_F32 && !a->params.allow_tf32)
        return convnd_error(CONVND_ERR_INTERNAL, "wgrad_igemm_tc: f32 without TF32 allowed");
    return CONVND_NS::convnd_launch_by_dtype(a->params.dtype, "wgrad_igemm_tc", [&](auto t) {
        using T = typename decltype(t)::type;
        return CONVND_NS::wgrad_igemm_tc_dispatch<CONVND_NS::wgrad_igemm_tc_family, T>(a);
    });
}
