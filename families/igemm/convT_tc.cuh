/* The tensor-core phase-decomposed transposed convolution's tile: the implicit GEMM's tensor-core
 * tiles (igemm_configs.h) as they are (the dispatch over them and the unit per configuration:
 * config_shard.cuh). Each element type has its own .cu (convT_tc_f16.cu, convT_tc_bf16.cu,
 * convT_tc_tf32.cu). */
#ifndef CONVND_CONVT_TC_CUH
#define CONVND_CONVT_TC_CUH

#include "config_shard.cuh"
#include "convT_kernel.cuh"

namespace CONVND_NS {

struct convT_tc_family {
    static constexpr const char *name = "convT_tc";
    template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma = convT_tc_mma_kmajor<T, BM, BN, BK, WARPS_M, WARPS_N>;
        if constexpr (igemm_smem_layout<T, mma, BM, BN, STAGES>::BYTES <= CONVND_IGEMM_MAX_SMEM)
            return convT_launch_tile<T, mma, BM, BN, BK, STAGES>(a, spec);
        return convnd_error(CONVND_ERR_INTERNAL,
                            "%s: not built for %d-byte elements (too much shared memory)", spec,
                            (int)sizeof(T));
    }
};

} // namespace CONVND_NS

#endif
