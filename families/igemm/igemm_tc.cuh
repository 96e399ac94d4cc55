/* The tensor-core implicit GEMM's launch: configuration index -> tile template arguments
 * (igemm_configs.h). Each element type has its own .cu (igemm_tc_f16.cu, igemm_tc_bf16.cu,
 * igemm_tc_tf32.cu), and the GPU build compiles each configuration apart (config_shard.cuh), so
 * that the instances compile in parallel. */
#ifndef CONVND_IGEMM_TC_CUH
#define CONVND_IGEMM_TC_CUH

#include "config_shard.cuh"
#include "igemm_io.cuh"

namespace CONVND_NS {

/* Configuration CFG of CONVND_IGEMM_TC_CONFIGS; defined (its kernels built) only in the units that
 * build configurations (config_shard.cuh). */
template <typename T, int CFG>
__host__ convnd_status igemm_tc_config(const convnd_launch_args *a)
#if CONVND_SHARD_BUILDS_CONFIGS
{
#define CONVND_IGEMM_TC_LAUNCH(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                        \
    if constexpr (CFG == tc_config_index(#cname)) {                                                \
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
    return convnd_error(CONVND_ERR_INTERNAL, "igemm_tc: no configuration %d", CFG);
}
#else
    ;
#endif

template <typename T> __host__ convnd_status igemm_tc_launch(const convnd_launch_args *a) {
    switch (a->config) {
#define CONVND_IGEMM_TC_CASE(cname, ...)                                                           \
    case tc_config_index(#cname):                                                                  \
        if constexpr (tc_config_built(tc_config_index(#cname)))                                    \
            return igemm_tc_config<T, tc_config_index(#cname)>(a);                                 \
        else /* supports() refuses it first */                                                     \
            return tc_config_not_built("igemm_tc:" #cname);
        CONVND_IGEMM_TC_CONFIGS(CONVND_IGEMM_TC_CASE)
#undef CONVND_IGEMM_TC_CASE
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "igemm_tc: config %d out of range [0, %d)",
                            (int)a->config, tc_config_count);
    }
}

} // namespace CONVND_NS

#endif
