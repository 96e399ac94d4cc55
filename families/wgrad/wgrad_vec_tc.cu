/* The weight gradient's channels-last vector path on tensor cores (wgrad_vec_kernel,
 * families/wgrad/wgrad_vec.cuh): f16 and bf16, one tile of families/wgrad/wgrad_igemm_configs.h's
 * vector table per configuration (the dispatch: config_dispatch.cuh). The split count is a
 * launch argument, so a tile's three split variants share one kernel. */
#include "portability.cuh"
#include "config_dispatch.cuh"
#include "wgrad_vec.cuh"
#include "wgrad_igemm_configs.h"
#include "launch_abi.h"

namespace CONVND_NS {

struct wgrad_vec_tc_family {
    static constexpr const char *name = "wgrad_vec_tc";
    template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int SPLITS>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma = wgrad_vec_mma<T, BM, BN, BK, WARPS_M, WARPS_N>;
        return wgrad_vec_launch_tile<T, mma, BM, BN, BK, STAGES>(a, SPLITS, spec);
    }
};
CONVND_DEFINE_CONFIG_DISPATCH(wgrad_vec_tc_dispatch, CONVND_WGRAD_VEC_TC_CONFIGS)

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_vec_tc) {
    const convnd_dtype dt = (convnd_dtype)a->params.dtype;
    if (dt == CONVND_F16)
        return CONVND_NS::wgrad_vec_tc_dispatch<CONVND_NS::wgrad_vec_tc_family, convnd_half>(a);
    if (dt == CONVND_BF16)
        return CONVND_NS::wgrad_vec_tc_dispatch<CONVND_NS::wgrad_vec_tc_family, convnd_bf16>(a);
    return convnd_error(CONVND_ERR_INTERNAL, "wgrad_vec_tc: dtype %d is not f16/bf16", (int)dt);
}
