/* The tensor-core implicit GEMM's launch: configuration index -> tile template arguments
 * (igemm_configs.h). Each element type has its own .cu (igemm_tc_f16.cu, igemm_tc_bf16.cu,
 * igemm_tc_tf32.cu) so that the instances compile in parallel. */
#ifndef CONVND_IGEMM_TC_CUH
#define CONVND_IGEMM_TC_CUH

#include "igemm_configs.h"
#include "igemm_io.cuh"

namespace CONVND_NS {

template <typename T> __host__ convnd_status igemm_tc_launch(const convnd_launch_args *a) {
    int32_t index = 0;
#define CONVND_IGEMM_TC_LAUNCH(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                        \
    if (a->config == index++) {                                                                    \
        using mma = igemm_tc_mma<T, BM, BN, BK, WARPS_M, WARPS_N>;                                 \
        if constexpr (igemm_smem_layout<T, mma, BM, BN, STAGES>::BYTES <= CONVND_IGEMM_MAX_SMEM) { \
            if (a->params.io_dim >= 0)                                                             \
                return igemm_io_launch_tile<T, mma, BM, BN, BK, STAGES>(a, "igemm_tc:" #cname);    \
            return igemm_launch_tile<T, mma, BM, BN, BK, STAGES>(a, "igemm_tc:" #cname);           \
        }                                                                                          \
        return convnd_error(CONVND_ERR_INTERNAL,                                                   \
                            "igemm_tc:" #cname ": not built for %d-byte "                          \
                            "elements (too much shared memory)",                                   \
                            (int)sizeof(T));                                                       \
    }
    CONVND_IGEMM_TC_CONFIGS(CONVND_IGEMM_TC_LAUNCH)
#undef CONVND_IGEMM_TC_LAUNCH
    return convnd_error(CONVND_ERR_INTERNAL, "igemm_tc: config %d out of range [0, %d)",
                        (int)a->config, (int)index);
}

} // namespace CONVND_NS

#endif
