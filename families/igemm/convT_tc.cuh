/* The tensor-core phase-decomposed transposed convolution: configuration index -> tile template
 * arguments, the implicit GEMM's tensor-core tiles (igemm_configs.h) as they are. Each element
 * type has its own .cu (convT_tc_f16.cu, convT_tc_bf16.cu, convT_tc_tf32.cu), and the GPU build
 * compiles each configuration apart (config_shard.cuh), so that the instances compile in
 * parallel. */
#ifndef CONVND_CONVT_TC_CUH
#define CONVND_CONVT_TC_CUH

#include "config_shard.cuh"
#include "convT_kernel.cuh"

namespace CONVND_NS {

/* Configuration CFG of CONVND_IGEMM_TC_CONFIGS; defined (its kernels built) only in the units that
 * build configurations (config_shard.cuh). */
template <typename T, int CFG>
__host__ convnd_status convT_tc_config(const convnd_launch_args *a)
#if CONVND_SHARD_BUILDS_CONFIGS
{
#define CONVND_CONVT_TC_LAUNCH(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                        \
    if constexpr (CFG == tc_config_index(#cname)) {                                                \
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
    return convnd_error(CONVND_ERR_INTERNAL, "convT_tc: no configuration %d", CFG);
}
#else
    ;
#endif

template <typename T> __host__ convnd_status convT_tc_launch(const convnd_launch_args *a) {
    switch (a->config) {
#define CONVND_CONVT_TC_CASE(cname, ...)                                                           \
    case tc_config_index(#cname):                                                                  \
        if constexpr (tc_config_built(tc_config_index(#cname)))                                    \
            return convT_tc_config<T, tc_config_index(#cname)>(a);                                 \
        else /* supports() refuses it first */                                                     \
            return tc_config_not_built("convT_tc:" #cname);
        CONVND_IGEMM_TC_CONFIGS(CONVND_CONVT_TC_CASE)
#undef CONVND_CONVT_TC_CASE
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "convT_tc: config %d out of range [0, %d)",
                            (int)a->config, tc_config_count);
    }
}

} // namespace CONVND_NS

#endif
