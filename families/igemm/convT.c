/* Registry entries of the phase-decomposed transposed convolution (families/igemm/convT_*.cu): the
 * output split into its S0*S1*S2 phases (o mod S per dimension), each an implicit GEMM over only
 * the taps that reach it (families/igemm/convT_geometry.cuh derives them), all phases in one grid,
 * on the implicit GEMM's own kernel body and tiles. No zero insertion, no multiply by a
 * structurally-zero tap.
 *
 *   convT_tc    tensor cores (mma.sync): f16, bf16, and f32 when the caller allows TF32
 *   convT_simt  CUDA cores, f32 with exact FMA (any math setting)
 *
 * Configurations are the implicit GEMM's tiles (families/igemm/igemm_configs.h), same names. Every
 * configuration handles every transposed problem of its dtypes within the limits below: 1/2/3-D,
 * groups, stride, dilation, asymmetric and negative padding (cropping, and the bias-only
 * extension of a negative padding_after), both layouts (mixed too), any channel count, the
 * epilogue. Stride 1 is the same code with one phase: the forward GEMM with the weight read
 * transposed and flipped. Channels-last x and weight with C_in/g and C_out/g multiples of 16
 * bytes take 16-byte cp.async paths for both (x's pointwise variant when no phase has two taps
 * along a dimension); anything else a per-element gather (picked at launch, not refused).
 *
 * Refused (supports() says why): forward mode; strides above 16 in a dimension or more than 64
 * phases (families/igemm/convT_limits.h: the phase tables travel in the kernel's parameters);
 * problems needing 64-bit indices; grids past 65535 groups or column blocks.
 *
 * Heuristic table (worth_routing; the planner takes the first (schedule, config) in registry
 * order that supports the problem and is worth routing, so convT_tc's rows come first):
 *
 *   schedule    config         worth routing when (tiles = ceil(M/BM) * ceil(cout_g/BN) * groups,
 *                              M = N*prod(O), the rows of all phases together)
 *   ----------  -------------  ---------------------------------------------------------------
 *   convT_tc    128x256x64_s4  GEMM-shaped (below), cout_g >= 192, cin_g >= 32 and tiles >= 96
 *   convT_tc    256x128x64_s4  GEMM-shaped, cout_g >= 96, cin_g >= 32 and tiles >= 96
 *   convT_tc    128x128x32_s3  GEMM-shaped, cout_g >= 96 and tiles >= 96
 *   convT_tc    64x64x32_s3    GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   convT_tc    32x64x32_s2    GEMM-shaped (small outputs or few output channels)
 *   convT_simt  128x128x8_s3   GEMM-shaped, cout_g >= 96 and tiles >= 96 (exact f32)
 *   convT_simt  64x64x8_s3     GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   convT_simt  32x32x8_s2     GEMM-shaped
 *
 *   GEMM-shaped: C_in/g >= 8 and C_out/g >= 8, as for the forward implicit GEMM (the same
 *   tiles, the same reasons: below that a k-tile or a column block is mostly zeros, and the
 *   direct schedule, which the planner falls back to, wins on such depthwise-like problems).
 *   The two 64-channel k-tile configurations need 192 KiB of shared memory (f16/bf16 only;
 *   supports() refuses them for TF32 and on GPUs that allow a block less, e.g. sm_89).
 *   cin_g >= BK/2 (all rows but the last of each variant): at most half a k-tile idle.
 *   tiles >= 96: 3/4 of a wave (3/4 of the device's SMs: 96 of an H200's 132); cout_g >= 3/4 BN: at
 * most a quarter of the tile's columns idle. The phase split costs a partial row block per phase,
 * which these counts ignore (at most S0*S1*S2 extra blocks). */
#include "convT_limits.h"
#include "error.h"
#include "gemm_family.h"
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"
/* convT's own refusals: forward mode, and the phase limits. */
static int32_t convT_mode_and_phases(const convnd_conv_params *params, char *reason,
                                     size_t reason_len) {
    if (params->mode != CONVND_TRANSPOSED)
        return convnd_refuse(reason, reason_len,
                             "mode=%s: convT implements transposed convolution only (igemm_tc "
                             "and igemm_simt run forward ones)",
                             convnd_mode_name((convnd_mode)params->mode));
    int64_t phases = 1;
    for (int t = 0; t < 3; ++t) {
        if (params->s[t] > CONVND_CONVT_MAX_STRIDE)
            return convnd_refuse(reason, reason_len,
                                 "stride=%lld in a dimension: convT handles strides up to %d "
                                 "(its phase tables are kernel parameters)",
                                 (long long)params->s[t], CONVND_CONVT_MAX_STRIDE);
        phases *= params->s[t];
    }
    if (phases > CONVND_CONVT_MAX_PHASES)
        return convnd_refuse(reason, reason_len,
                             "strides %lld x %lld x %lld make %lld output phases: convT handles "
                             "up to %d",
                             (long long)params->s[0], (long long)params->s[1],
                             (long long)params->s[2], (long long)phases, CONVND_CONVT_MAX_PHASES);
    return 1;
}

/* The heuristic table in the header comment is the forward implicit GEMM's. */
CONVND_GEMM_FAMILY(convT, CONVND_TRANSPOSED, convT_mode_and_phases, 0,
                   "transposed mode by phase decomposition: one implicit GEMM per output phase, "
                   "on tensor cores",
                   "the same on CUDA cores, exact f32 FMA", "families/igemm/convT.c");
