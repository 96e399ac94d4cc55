/* Registry entries of the implicit-GEMM schedules (families/igemm/igemm_*.cu): forward convolution
 * as a GEMM of output pixels x output channels over (tap, input channel), one GEMM per group.
 *
 *   igemm_tc    tensor cores (mma.sync): f16, bf16, and f32 when the caller allows TF32
 *   igemm_simt  CUDA cores, f32 with exact FMA (any math setting)
 *
 * Configurations (tile shapes) come from families/igemm/igemm_configs.h. Every configuration
 * handles every forward problem of its dtypes (1/2/3-D, groups, stride, dilation, asymmetric and
 * negative padding, both layouts, any channel count, the epilogue). Channels-last x and w with
 * channel counts that are a multiple of 16 bytes take the 16-byte cp.async path, 1x1 kernels a
 * pointwise variant of it; anything else a per-element gather (picked at launch, not refused).
 *
 * A prefix input and a state output (SPEC §12) run a separate kernel instance
 * (igemm_io_kernel in families/igemm/igemm_kernel.cuh; the kernels above stay as they are): its A
 * loader reads each tap from the prefix or from x (primitives/io_axis.cuh, shared with `direct`),
 * 16 bytes at a time when both are channels-last in whole chunks and aligned, else element by
 * element, and its blocks write the state. Built for the configurations with BK <= 32
 * (CONVND_IGEMM_IO_MAX_BK); the two BK = 64 ones refuse prefix/state problems with that reason.
 *
 * Heuristic table (worth_routing; the planner takes the first (schedule, config) in registry
 * order that supports the problem and is worth routing, so igemm_tc's rows come first):
 *
 *   schedule    config         worth routing when (tiles = blocks of the config's BM x BN tile,
 *                              ceil(M/BM) * ceil(cout_g/BN) * groups, M = N*prod(O))
 *   ----------  -------------  ---------------------------------------------------------------
 *   igemm_tc    128x256x64_s4  GEMM-shaped (below), cout_g >= 192, cin_g >= 32 and tiles >= 96
 *   igemm_tc    256x128x64_s4  GEMM-shaped, cout_g >= 96, cin_g >= 32 and tiles >= 96
 *   igemm_tc    128x128x32_s3  GEMM-shaped, cout_g >= 96 and tiles >= 96
 *   igemm_tc    64x64x32_s3    GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   igemm_tc    32x64x32_s2    GEMM-shaped (small M or few output channels)
 *   igemm_simt  128x128x8_s3   GEMM-shaped, cout_g >= 96 and tiles >= 96 (exact f32)
 *   igemm_simt  64x64x8_s3     GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   igemm_simt  32x32x8_s2     GEMM-shaped
 *
 *   The two 64-channel k-tile configurations need 192 KiB of shared memory (f16/bf16 only;
 *   supports() refuses them for TF32 and on GPUs that allow a block less, e.g. sm_89).
 *   cin_g >= BK/2 (all rows but the last of each variant): at most half a k-tile idle.
 *
 *   tiles >= 96: at least 3/4 of a wave (3/4 of the device's SMs: 96 of an H200's 132). With fewer,
 * the next smaller tile's 4x as many blocks keep more SMs busy than the big tile's better reuse
 * gains. cout_g >= 3/4 BN: at most a quarter of the tile's columns idle.
 *
 *   GEMM-shaped: cin_g >= 8 and cout_g >= 8. Below that (depthwise and near-depthwise
 *   convolutions) a k-tile of BK channels or a BN-wide column block would be mostly zeros, and
 *   the direct (or a depthwise) schedule wins. Layout and alignment do not decide: the gather
 *   path (channels-first, odd channel counts) still beats the direct schedule by reusing every
 *   loaded element BM or BN times from shared memory. */
#include "gemm_family.h"
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"

/* The implicit GEMM's own refusal: transposed mode (convT_* runs those). */
static int32_t igemm_forward_only(const convnd_conv_params *params, char *reason,
                                  size_t reason_len) {
    if (params->mode == CONVND_FORWARD) return 1;
    return convnd_refuse(reason, reason_len,
                         "mode=%s: the implicit GEMM implements forward convolution only",
                         convnd_mode_name((convnd_mode)params->mode));
}

/* reads a prefix and writes a state (SPEC §12) on the configurations with BK <= 32 */
CONVND_GEMM_FAMILY(igemm, CONVND_FORWARD, igemm_forward_only, 1,
                   "forward implicit GEMM on tensor cores (mma.sync + ldmatrix, cp.async "
                   "pipeline, register epilogue)",
                   "the same GEMM view on CUDA cores, exact f32 FMA", "families/igemm/igemm.c");
