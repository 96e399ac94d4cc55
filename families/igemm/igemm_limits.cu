/* What the implicit-GEMM registry entries (families/igemm/gemm_tiles.c, plain C) must know from the
 * kernel headers: whether a problem needs 64-bit indices, which the igemm kernels (32-bit only)
 * refuse, the dynamic shared memory of a tensor-core configuration, and whether this build has
 * it. Defined once, in the emulated-device build, which is always part of the library; the rule
 * itself stays in conv_index.cuh. */
#include "portability.cuh"
#include "conv_index.cuh"
#include "igemm_configs.h"
#include "config_shard.cuh"
#include "convT_kernel.cuh"

#if defined(CONVND_EMU)
namespace CONVND_NS {
/* The larger of the forward (igemm_tc) and transposed (convT_tc) kernels' shared memory. */
template <typename T> static size_t gemm_tc_smem_bytes(int32_t config) {
    int32_t index = 0;
#define CONVND_GEMM_TC_SMEM(cname, BM, BN, BK, WARPS_M, WARPS_N, STAGES)                           \
    if (config == index++) {                                                                       \
        const size_t f = igemm_smem_layout<T, igemm_tc_mma<T, BM, BN, BK, WARPS_M, WARPS_N>, BM,   \
                                           BN, STAGES>::BYTES;                                     \
        const size_t t =                                                                           \
            igemm_smem_layout<T, convT_tc_mma_kmajor<T, BM, BN, BK, WARPS_M, WARPS_N>, BM, BN,     \
                              STAGES>::BYTES;                                                      \
        return f > t ? f : t;                                                                      \
    }
    CONVND_IGEMM_TC_CONFIGS(CONVND_GEMM_TC_SMEM)
#undef CONVND_GEMM_TC_SMEM
    return 0;
}
} // namespace CONVND_NS

/* Bytes of dynamic shared memory tensor-core configuration `config` needs for elements of
 * elem_bytes (2: f16/bf16, 4: TF32); 0 for a config out of range. */
extern "C" size_t convnd_gemm_tc_smem_bytes(int32_t config, int32_t elem_bytes) {
    return elem_bytes == 4 ? CONVND_NS::gemm_tc_smem_bytes<float>(config)
                           : CONVND_NS::gemm_tc_smem_bytes<convnd_half>(config);
}

/* Whether tensor-core configuration `config` is built (CMake CONVND_SKIP_TC_CONFIGS). */
extern "C" int convnd_gemm_tc_built(int32_t config) {
    return CONVND_NS::tc_config_built(config) ? 1 : 0;
}

#endif
