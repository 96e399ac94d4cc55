/* The tensor-core phase-decomposed transposed convolution: configuration index -> tile template
 * arguments, the implicit GEMM's tensor-core tiles (igemm_configs.h) as they are. Each element
 * type has its own .cu (convT_tc_f16.cu, convT_tc_bf16.cu, convT_tc_tf32.cu) so that the
 * instances compile in parallel. */
#ifndef CONVND_CONVT_TC_CUH
#define CONVND_CONVT_TC_CUH

#include "igemm_configs.h"
#include "convT_kernel.cuh"

namespace CONVND_NS {

template <typename T> __host__ convnd_status convT_tc_launch(const convnd_launch_args *a) {
    int32_t index = 0;
#define CONVND_CONVT_TC_LAUNCH(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                        \
    if (a->config == index++) {                                                                    \
        using mma = convT_tc_mma_kmajor<T, BM, BN, BK, WARPS_M, WARPS_N>;                          \
        if constexpr (igemm_smem_layout<T, mma, BM, BN, STAGES>::BYTES <= CONVND_IGEMM_MAX_SMEM)   \
            return convT_launch_tile<T, mma, BM, BN, BK, STAGES>(a, "convT_tc:" #cname);           \
        return convnd_error(CONVND_ERR_INTERNAL,                                                   \
                            "convT_tc:" #cname ": not built for %d-byte "                          \
                            "elements (too much shared memory)",                                   \
                            (int)sizeof(T));                                                       \
    }
    CONVND_IGEMM_TC_CONFIGS(CONVND_CONVT_TC_LAUNCH)
#undef CONVND_CONVT_TC_LAUNCH
    return convnd_error(CONVND_ERR_INTERNAL, "convT_tc: config %d out of range [0, %d)",
                        (int)a->config, (int)index);
}

} // namespace CONVND_NS

#endif
