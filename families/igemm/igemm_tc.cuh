/* The tensor-core implicit GEMM's tile (igemm_configs.h's tensor-core table; the dispatch over it
 * and the unit per configuration: config_shard.cuh). Each element type has its own .cu
 * (igemm_tc_f16.cu, igemm_tc_bf16.cu, igemm_tc_tf32.cu). */
#ifndef CONVND_IGEMM_TC_CUH
#define CONVND_IGEMM_TC_CUH

#include "config_shard.cuh"
#include "igemm_io.cuh"

namespace CONVND_NS {

struct igemm_tc_family {
    static constexpr const char *name = "igemm_tc";
    template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
    static convnd_status tile(const convnd_launch_args *a, const char *spec) {
        using mma = igemm_tc_mma<T, BM, BN, BK, WARPS_M, WARPS_N>;
        if constexpr (igemm_smem_layout<T, mma, BM, BN, STAGES>::BYTES <= CONVND_IGEMM_MAX_SMEM) {
            if (a->params.io_dim >= 0)
                return igemm_io_launch_tile<T, mma, BM, BN, BK, STAGES>(a, spec);
            return igemm_launch_tile<T, mma, BM, BN, BK, STAGES>(a, spec);
        }
        return convnd_error(CONVND_ERR_INTERNAL,
                            "%s: not built for %d-byte elements (too much shared memory)", spec,
                            (int)sizeof(T));
    }
};

} // namespace CONVND_NS

#endif
