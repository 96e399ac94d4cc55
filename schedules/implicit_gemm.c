/* Registry entries of the implicit-GEMM schedules (kernels/igemm_*.cu): forward convolution as
 * a GEMM of output pixels x output channels over (tap, input channel), one GEMM per group.
 *
 *   igemm_tc    tensor cores (WMMA): f16, bf16, and f32 when the caller allows TF32
 *   igemm_simt  CUDA cores, f32 with exact FMA (any math setting)
 *
 * Configurations (tile shapes) come from kernels/igemm_configs.h. Every configuration handles
 * every forward problem of its dtypes (1/2/3-D, groups, stride, dilation, asymmetric and
 * negative padding, both layouts, any channel count, the epilogue). Channels-last x and w with
 * channel counts that are a multiple of 16 bytes take the 16-byte cp.async path, 1x1 kernels a
 * pointwise variant of it; anything else a per-element gather (picked at launch, not refused).
 *
 * Heuristic table (worth_routing; the planner takes the first (schedule, config) in registry
 * order that supports the problem and is worth routing, so igemm_tc's rows come first):
 *
 *   schedule    config         worth routing when (tiles = blocks of the config's BM x BN tile,
 *                              ceil(M/BM) * ceil(cout_g/BN) * groups, M = N*prod(O))
 *   ----------  -------------  ---------------------------------------------------------------
 *   igemm_tc    128x128x32_s3  GEMM-shaped (below), cout_g >= 96 and tiles >= 96
 *   igemm_tc    64x64x32_s3    GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   igemm_tc    32x64x32_s2    GEMM-shaped (small M or few output channels)
 *   igemm_simt  128x128x8_s3   GEMM-shaped, cout_g >= 96 and tiles >= 96 (exact f32)
 *   igemm_simt  64x64x8_s3     GEMM-shaped, cout_g >= 48 and tiles >= 96
 *   igemm_simt  32x32x8_s2     GEMM-shaped
 *
 *   tiles >= 96: at least 3/4 of a wave on an H200's 132 SMs. With fewer, the next smaller
 *   tile's 4x as many blocks keep more SMs busy than the big tile's better reuse gains.
 *   cout_g >= 3/4 BN: at most a quarter of the tile's columns idle.
 *
 *   GEMM-shaped: cin_g >= 8 and cout_g >= 8. Below that (depthwise and near-depthwise
 *   convolutions) a k-tile of BK channels or a BN-wide column block would be mostly zeros, and
 *   the direct (or a depthwise) schedule wins. Layout and alignment do not decide: the gather
 *   path (channels-first, odd channel counts) still beats the direct schedule by reusing every
 *   loaded element BM or BN times from shared memory. */
#include "registry.h"
#include "refuse.h"
#include "problem_internal.h"
#include "igemm_configs.h"

CONVND_DECLARE_LAUNCHER(igemm_tc_f16);
CONVND_DECLARE_LAUNCHER(igemm_tc_bf16);
CONVND_DECLARE_LAUNCHER(igemm_tc_tf32);
CONVND_DECLARE_LAUNCHER(igemm_simt);

/* kernels/igemm_limits.cu: the kernels use 32-bit indices. */
int convnd_igemm_needs_index64(const convnd_conv_params *p);

/* One configuration's tile, as the planner's table needs it. */
typedef struct igemm_tile {
    int32_t bm, bn;
} igemm_tile;

#define CONVND_IGEMM_NAME(cname, ...) #cname,
#define CONVND_IGEMM_TILE(cname, BM, BN, ...) {BM, BN},
static const char *const igemm_tc_configs[] = {CONVND_IGEMM_TC_CONFIGS(CONVND_IGEMM_NAME)};
static const igemm_tile igemm_tc_tiles[] = {CONVND_IGEMM_TC_CONFIGS(CONVND_IGEMM_TILE)};
static const char *const igemm_simt_configs[] = {CONVND_IGEMM_SIMT_CONFIGS(CONVND_IGEMM_NAME)};
static const igemm_tile igemm_simt_tiles[] = {CONVND_IGEMM_SIMT_CONFIGS(CONVND_IGEMM_TILE)};
#undef CONVND_IGEMM_NAME
#undef CONVND_IGEMM_TILE

#define IGEMM_COUNT(a) ((int32_t)(sizeof(a) / sizeof(a[0])))

/* What both schedules share: forward mode, 32-bit indices, grid limits. */
static int32_t igemm_supports_common(const convnd_problem *p, const igemm_tile *tile, char *reason,
                                     size_t reason_len) {
    if (p->mode != CONVND_FORWARD)
        return convnd_refuse(reason, reason_len,
                             "mode=%s: the implicit GEMM implements forward convolution only",
                             convnd_mode_name(p->mode));
    convnd_conv_params params;
    if (convnd_params_from_problem(p, &params) != CONVND_OK)
        return convnd_refuse(reason, reason_len, "invalid problem: %s", convnd_last_error());
    if (convnd_igemm_needs_index64(&params))
        return convnd_refuse(
            reason, reason_len,
            "needs 64-bit indices (x has %lld, w %lld, y %lld elements, or a padding "
            "this large): the implicit GEMM indexes in 32 bits",
            (long long)params.x_numel, (long long)params.w_numel, (long long)params.y_numel);
    if (params.groups > 65535)
        return convnd_refuse(reason, reason_len, "groups=%lld exceeds the grid's 65535 z blocks",
                             (long long)params.groups);
    if ((params.cout_g + tile->bn - 1) / tile->bn > 65535)
        return convnd_refuse(reason, reason_len,
                             "C_out/groups=%lld needs more than 65535 column blocks of %d",
                             (long long)params.cout_g, (int)tile->bn);
    return 1;
}

static int32_t igemm_tc_supports(const convnd_problem *p, int32_t config, char *reason,
                                 size_t reason_len) {
    if (config < 0 || config >= IGEMM_COUNT(igemm_tc_configs))
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    if (p->dtype == CONVND_F32 && p->math != CONVND_MATH_ALLOW_TF32)
        return convnd_refuse(reason, reason_len,
                             "dtype=f32 with math=default (exact FMA): tensor cores need "
                             "math=ALLOW_TF32 (igemm_simt runs exact f32)");
    if (p->dtype != CONVND_F32 && p->dtype != CONVND_F16 && p->dtype != CONVND_BF16)
        return convnd_refuse(reason, reason_len, "dtype=%d not supported", (int)p->dtype);
    return igemm_supports_common(p, &igemm_tc_tiles[config], reason, reason_len);
}

static int32_t igemm_simt_supports(const convnd_problem *p, int32_t config, char *reason,
                                   size_t reason_len) {
    if (config < 0 || config >= IGEMM_COUNT(igemm_simt_configs))
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    if (p->dtype != CONVND_F32)
        return convnd_refuse(reason, reason_len,
                             "dtype=%s: the CUDA-core implicit GEMM is f32 only (igemm_tc runs f16 "
                             "and bf16)",
                             convnd_dtype_name(p->dtype));
    return igemm_supports_common(p, &igemm_simt_tiles[config], reason, reason_len);
}

/* The heuristic table in the header comment. Configs are listed largest first, and the last
 * one takes whatever GEMM-shaped problem the larger tiles would not fill the GPU with. */
static int32_t igemm_worth_routing(const convnd_problem *p, const igemm_tile *tiles, int32_t count,
                                   int32_t config) {
    if (p->mode != CONVND_FORWARD || config < 0 || config >= count) return 0;
    const int64_t cin_g = p->C_in / p->groups, cout_g = p->C_out / p->groups;
    if (cin_g < 8 || cout_g < 8) return 0;
    if (config == count - 1) return 1;
    int64_t out[CONVND_MAX_DIMS];
    if (convnd_output_size(p, out) != CONVND_OK) return 0;
    int64_t m = p->N; /* fits: validation bounded the element counts */
    for (int32_t t = 0; t < p->dims; ++t)
        m *= out[t];
    const igemm_tile *tile = &tiles[config];
    const double blocks = (double)((m + tile->bm - 1) / tile->bm) *
                          (double)((cout_g + tile->bn - 1) / tile->bn) * (double)p->groups;
    return cout_g >= (int64_t)tile->bn * 3 / 4 && blocks >= 96.0;
}

static int32_t igemm_tc_worth_routing(const convnd_problem *p, int32_t config) {
    return igemm_worth_routing(p, igemm_tc_tiles, IGEMM_COUNT(igemm_tc_tiles), config);
}

static int32_t igemm_simt_worth_routing(const convnd_problem *p, int32_t config) {
    return igemm_worth_routing(p, igemm_simt_tiles, IGEMM_COUNT(igemm_simt_tiles), config);
}

static convnd_status igemm_tc_launch(const convnd_launch_args *a) {
    switch (a->params.dtype) {
    case CONVND_F16:
        return CONVND_CALL_LAUNCHER(igemm_tc_f16, a);
    case CONVND_BF16:
        return CONVND_CALL_LAUNCHER(igemm_tc_bf16, a);
    default:
        return CONVND_CALL_LAUNCHER(igemm_tc_tf32, a);
    }
}

static convnd_status igemm_simt_launch(const convnd_launch_args *a) {
    return CONVND_CALL_LAUNCHER(igemm_simt, a);
}

const convnd_schedule convnd_schedule_igemm_tc = {
    .name = "igemm_tc",
    .num_configs = IGEMM_COUNT(igemm_tc_configs),
    .config_names = igemm_tc_configs,
    .supports = igemm_tc_supports,
    .worth_routing = igemm_tc_worth_routing,
    .workspace_size = NULL,
    .launch = igemm_tc_launch,
};

const convnd_schedule convnd_schedule_igemm_simt = {
    .name = "igemm_simt",
    .num_configs = IGEMM_COUNT(igemm_simt_configs),
    .config_names = igemm_simt_configs,
    .supports = igemm_simt_supports,
    .worth_routing = igemm_simt_worth_routing,
    .workspace_size = NULL,
    .launch = igemm_simt_launch,
};
