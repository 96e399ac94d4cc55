/* The implicit-GEMM configurations, listed once: the registry (families/igemm/igemm.c, plain
 * C) takes their names from here and the kernels (families/igemm/igemm_*.cu) their template arguments,
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
 * output channels (fewer idle rows, more blocks to fill the GPU). The three largest are
 * CUTLASS-sm80-style 64x64 warp tiles (the 128x128 one: 4 warps, 3 stages of 32 channels, as
 * CUTLASS's default); the two largest 8 warps with k-tiles of 64 channels in 4 stages:
 * 192 KiB of shared memory for f16/bf16, so they run where a block may have that much (sm_80,
 * sm_90; not sm_86/sm_89), and not for TF32 (384 KiB; CONVND_IGEMM_MAX_SMEM). */
#define CONVND_IGEMM_TC_CONFIGS(X)                                                                 \
    X(128x256x64_s4, 128, 256, 64, 2, 4, 4)                                                        \
    X(256x128x64_s4, 256, 128, 64, 4, 2, 4)                                                        \
    X(128x128x32_s3, 128, 128, 32, 2, 2, 3)                                                        \
    X(64x64x32_s3, 64, 64, 32, 2, 2, 3)                                                            \
    X(32x64x32_s2, 32, 64, 32, 1, 2, 2)

/* The most dynamic shared memory a block may opt in to on any supported GPU (sm_90: 227 KiB);
 * a configuration x dtype that needs more is not built, and supports() refuses it. */
#define CONVND_IGEMM_MAX_SMEM 232448

/* A prefix input or a state output (SPEC §12) runs a separate kernel instance (igemm_io_kernel),
 * built for the configurations with k-tiles of at most this many channels (all of igemm_simt's,
 * igemm_tc's three smaller ones); supports() refuses the others with that reason. */
#define CONVND_IGEMM_IO_MAX_BK 32

#define CONVND_IGEMM_SIMT_CONFIGS(X)                                                               \
    X(128x128x8_s3, 128, 128, 8, 8, 8, 3)                                                          \
    X(64x64x8_s3, 64, 64, 8, 4, 4, 3)                                                              \
    X(32x32x8_s2, 32, 32, 8, 4, 4, 2)

#endif
