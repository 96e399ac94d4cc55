/* Implicit-GEMM weight gradient on CUDA cores (wgrad_igemm_kernel, families/wgrad/wgrad_igemm.cuh):
 * exact f32 FMA register tiles (igemm_simt_mma); f16/bf16 inputs are staged as f32. One launcher,
 * configurations from families/wgrad/wgrad_igemm_configs.h (the same index as the registry's). */
#include "portability.cuh"
#include "igemm_mma.cuh"
#include "wgrad_igemm.cuh"
#include "wgrad_igemm_configs.h"
#include "launch_abi.h"

namespace CONVND_NS {

template <typename T> static convnd_status wgrad_igemm_simt_typed(const convnd_launch_args *a) {
    int32_t index = 0;
#define WGRAD_IGEMM_SIMT_CASE(name, BM, BN, BK, TM, TN, SPLITS)                                    \
    if (a->config == index++)                                                                      \
        return wgrad_igemm_launch_tile<                                                            \
            T, float,                                                                              \
            igemm_simt_mma<BM, BN, BK, wgrad_igemm_smem<float, BM, BN, BK, true>::LD, TM, TN>, BM, \
            BN, BK>(a, SPLITS, "wgrad_igemm_simt:" #name);
    CONVND_WGRAD_IGEMM_SIMT_CONFIGS(WGRAD_IGEMM_SIMT_CASE)
#undef WGRAD_IGEMM_SIMT_CASE
    return convnd_error(CONVND_ERR_INTERNAL, "wgrad_igemm_simt: config %d out of range",
                        (int)a->config);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_igemm_simt) {
    return CONVND_NS::convnd_launch_by_dtype(a->params.dtype, "wgrad_igemm_simt", [&](auto t) {
        return CONVND_NS::wgrad_igemm_simt_typed<typename decltype(t)::type>(a);
    });
}
