/* The implicit-GEMM configurations, listed once: the registry (schedules/implicit_gemm.c, plain
 * C) takes their names from here and the kernels (kernels/igemm_*.cu) their template arguments,
 * so a configuration index means the same tile shape on both sides.
 *
 * Tensor cores (igemm_tc): X(name, BM, BN, BK, WARPS_M, WARPS_N, STAGES)
 *   a block computes a BM x BN tile of the GEMM (output pixels x output channels of one group)
 *   with WARPS_M x WARPS_N warps, each owning a (BM/WARPS_M) x (BN/WARPS_N) tile of 16x8 mma.sync
 *   accumulators; BK input channels of one kernel tap per pipeline stage.
 * CUDA cores (igemm_simt): X(name, BM, BN, BK, TM, TN, STAGES)
 *   (BM/TM) x (BN/TN) threads, each owning a TM x TN register tile of exact-FMA accumulators. */
#ifndef CONVND_IGEMM_CONFIGS_H
#define CONVND_IGEMM_CONFIGS_H

/* Large tiles for big GEMMs, a medium one, and a small one for small spatial sizes or few
 * output channels (fewer idle rows, more blocks to fill the GPU). */
#define CONVND_IGEMM_TC_CONFIGS(X)                                                                 \
    X(128x128x32_s3, 128, 128, 32, 2, 4, 3)                                                        \
    X(64x64x32_s3, 64, 64, 32, 2, 2, 3)                                                            \
    X(32x64x32_s2, 32, 64, 32, 1, 2, 2)

#define CONVND_IGEMM_SIMT_CONFIGS(X)                                                               \
    X(128x128x8_s3, 128, 128, 8, 8, 8, 3)                                                          \
    X(64x64x8_s3, 64, 64, 8, 4, 4, 3)                                                              \
    X(32x32x8_s2, 32, 32, 8, 4, 4, 2)

#endif
