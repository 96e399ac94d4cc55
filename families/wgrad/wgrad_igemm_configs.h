/* The implicit-GEMM weight-gradient configurations, listed once: the registry
 * (families/wgrad/wgrad_igemm.c, plain C) takes their names from here and the kernels
 * (families/wgrad/wgrad_igemm_*.cu) their template arguments, so a configuration index means the
 * same tile and split count on both sides.
 *
 * The GEMM of one group: dw_g[M = C_out/g, N = (C_in/g) * prod(K)] = dy_g[M, R] * X_g[R, N], the
 * reduction R = N_batch * prod(O). A block computes a BM x BN tile of dw_g over one split-K chunk
 * of R, BK reduction positions per pipeline stage. SPLITS is the most chunks R is cut into (fewer
 * when R has fewer k-tiles); with more than one, each chunk's f32 partial goes to the workspace and
 * a second kernel sums them in a fixed order.
 *
 * A name's _kN is the most split-K chunks (SPLITS); the implicit GEMMs' _sN counts pipeline
 * stages (igemm_configs.h): one meaning per suffix.
 *
 * CUDA cores (wgrad_igemm_simt): X(name, BM, BN, BK, TM, TN, SPLITS), (BM/TM) x (BN/TN) threads
 *   each owning a TM x TN tile of exact-FMA accumulators (igemm_simt_mma, any dtype staged as f32).
 * Tensor cores (wgrad_igemm_tc): X(name, BM, BN, BK, WARPS_M, WARPS_N, SPLITS), mma.sync warps
 *   (tc_warp_mma.cuh): f16, bf16, and f32 as TF32 when the caller allows it. */
#ifndef CONVND_WGRAD_IGEMM_CONFIGS_H
#define CONVND_WGRAD_IGEMM_CONFIGS_H

#define CONVND_WGRAD_IGEMM_SIMT_CONFIGS(X)                                                         \
    X(64x64x8_k1, 64, 64, 8, 4, 4, 1)                                                              \
    X(64x64x8_k8, 64, 64, 8, 4, 4, 8)                                                              \
    X(64x64x8_k32, 64, 64, 8, 4, 4, 32)                                                            \
    X(32x32x8_k1, 32, 32, 8, 2, 2, 1)                                                              \
    X(32x32x8_k8, 32, 32, 8, 2, 2, 8)                                                              \
    X(32x32x8_k32, 32, 32, 8, 2, 2, 32)

#define CONVND_WGRAD_IGEMM_TC_CONFIGS(X)                                                           \
    X(64x64x32_k1, 64, 64, 32, 2, 2, 1)                                                            \
    X(64x64x32_k8, 64, 64, 32, 2, 2, 8)                                                            \
    X(64x64x32_k32, 64, 64, 32, 2, 2, 32)                                                          \
    X(32x32x32_k1, 32, 32, 32, 1, 1, 1)                                                            \
    X(32x32x32_k8, 32, 32, 32, 1, 1, 8)                                                            \
    X(32x32x32_k32, 32, 32, 32, 1, 1, 32)

/* The channels-last vector path on tensor cores (wgrad_vec_tc, families/wgrad/wgrad_vec.cuh):
 * X(name, BM, BN, BK, WARPS_M, WARPS_N, STAGES, SPLITS), f16/bf16, STAGES k-tiles of cp.async in
 * flight (48 KiB of shared memory at most, so no opt-in is needed on any GPU: 128x128 three
 * stages, the others four). 64x64 warp tiles for 128x128, as CUTLASS's sm80 default. */
#define CONVND_WGRAD_VEC_TC_CONFIGS(X)                                                             \
    X(128x128x32_k1, 128, 128, 32, 2, 2, 3, 1)                                                     \
    X(128x128x32_k8, 128, 128, 32, 2, 2, 3, 8)                                                     \
    X(128x128x32_k32, 128, 128, 32, 2, 2, 3, 32)                                                   \
    X(128x64x32_k1, 128, 64, 32, 2, 2, 4, 1)                                                       \
    X(128x64x32_k8, 128, 64, 32, 2, 2, 4, 8)                                                       \
    X(128x64x32_k32, 128, 64, 32, 2, 2, 4, 32)                                                     \
    X(64x64x32_k1, 64, 64, 32, 2, 2, 4, 1)                                                         \
    X(64x64x32_k8, 64, 64, 32, 2, 2, 4, 8)                                                         \
    X(64x64x32_k32, 64, 64, 32, 2, 2, 4, 32)

#endif
