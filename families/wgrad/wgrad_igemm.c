/* Registry entries of the implicit-GEMM weight-gradient schedules (families/wgrad/wgrad_igemm_*.cu,
 * SPEC §10): per group, dw_g[C_out/g, (C_in/g) * prod(K)] = dy_g * X_g over the reduction
 * N * prod(O), with deterministic split-K (f32 partials in the workspace, summed in a fixed order).
 *
 *   wgrad_igemm_tc    tensor cores (mma.sync): f16, bf16, and f32 when the caller allows TF32
 *   wgrad_igemm_simt  CUDA cores, exact f32 FMA: every dtype (16-bit inputs staged as f32)
 *
 * Configurations (tile x most splits) come from families/wgrad/wgrad_igemm_configs.h; each runs
 * every WGRAD problem of its dtypes within the grid limits (groups * splits blocks along z).
 *
 * Heuristic (worth_routing; the planner takes the first (schedule, config) in registry order
 * that supports the problem and is worth routing, so the tensor-core rows come first):
 *   GEMM-shaped only: cout_g >= 16 and (C_in/g) * prod(K) >= 16 — below that (depthwise) most
 *   of a tile would be idle; wgrad_depthwise, wgrad_splitk or wgrad_direct take those.
 *   Tile: 64 x 64 when both GEMM sides are >= 48, else 32 x 32.
 *   Splits: the fewest of the config's counts (1, 8, 32) whose blocks fill two waves of an H200
 *   (264 blocks), keeping at least 4 k-tiles per chunk; else the most that keeps 4. */
#include "arch.h"
#include "gemm_family.h"
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"
#include "wgrad_igemm_configs.h"
#include "wgrad_split.h"

typedef struct wgrad_igemm_config {
    int32_t bm, bn, bk;
    int64_t splits; /* at most */
} wgrad_igemm_config;

#define WGRAD_IGEMM_NAME(name, BM, BN, BK, A, B, SPLITS) #name,
#define WGRAD_IGEMM_SHAPE(name, BM, BN, BK, A, B, SPLITS) {BM, BN, BK, SPLITS},
static const char *const simt_names[] = {CONVND_WGRAD_IGEMM_SIMT_CONFIGS(WGRAD_IGEMM_NAME)};
static const wgrad_igemm_config simt_shapes[] = {
    CONVND_WGRAD_IGEMM_SIMT_CONFIGS(WGRAD_IGEMM_SHAPE)};
static const char *const tc_names[] = {CONVND_WGRAD_IGEMM_TC_CONFIGS(WGRAD_IGEMM_NAME)};
static const wgrad_igemm_config tc_shapes[] = {CONVND_WGRAD_IGEMM_TC_CONFIGS(WGRAD_IGEMM_SHAPE)};
#define WGRAD_VEC_NAME(name, BM, BN, BK, A, B, STAGES, SPLITS) #name,
#define WGRAD_VEC_SHAPE(name, BM, BN, BK, A, B, STAGES, SPLITS) {BM, BN, BK, SPLITS},
static const char *const vec_names[] = {CONVND_WGRAD_VEC_TC_CONFIGS(WGRAD_VEC_NAME)};
static const wgrad_igemm_config vec_shapes[] = {CONVND_WGRAD_VEC_TC_CONFIGS(WGRAD_VEC_SHAPE)};
#undef WGRAD_IGEMM_NAME
#undef WGRAD_IGEMM_SHAPE
#undef WGRAD_VEC_NAME
#undef WGRAD_VEC_SHAPE
#define SIMT_CONFIGS ((int32_t)(sizeof simt_shapes / sizeof simt_shapes[0]))
#define TC_CONFIGS ((int32_t)(sizeof tc_shapes / sizeof tc_shapes[0]))
#define VEC_CONFIGS ((int32_t)(sizeof vec_shapes / sizeof vec_shapes[0]))

/* The vector family's descriptor (defined below): its one variant reads vec_shapes. */
static const convnd_gemm_family wgrad_vec_family;

/* Routing wants blocks for two waves of the device's SMs; chunks shorter than 4 k-tiles are not
 * worth the partials' traffic. */
static const int64_t min_ktiles_per_split = 4;

static int64_t gemm_columns(const convnd_conv_params *c) {
    return c->cin_g * c->k[0] * c->k[1] * c->k[2];
}

/* The grid of config f on c: x (N tiles), y (M tiles), z (groups * splits). z saturates at
 * INT64_MAX: groups can be near 2^63 on a problem with empty or one-element groups, and the
 * product is only compared against the launch limit. */
static void grid_of(const convnd_conv_params *c, const wgrad_igemm_config *f, int64_t g[3]) {
    g[0] = (gemm_columns(c) + f->bn - 1) / f->bn;
    g[1] = (c->cout_g + f->bm - 1) / f->bm;
    const int64_t splits = convnd_wgrad_igemm_splits(c, f->splits, f->bk);
    g[2] = c->groups > INT64_MAX / splits ? INT64_MAX : c->groups * splits;
}

/* family f's variant v's configuration table */
static const wgrad_igemm_config *shapes_of(const convnd_gemm_family *f, convnd_gemm_variant v,
                                           int32_t *count) {
    if (f == &wgrad_vec_family) {
        *count = VEC_CONFIGS;
        return vec_shapes;
    }
    *count = v == CONVND_GEMM_TC ? TC_CONFIGS : SIMT_CONFIGS;
    return v == CONVND_GEMM_TC ? tc_shapes : simt_shapes;
}

/* The vector path's own conditions (families/wgrad/wgrad_vec.cuh): 16-bit tensor-core dtypes
 * (its k-major operands are read by ldmatrix.trans), x and dy channels-last in whole 16-byte
 * chunks (channels per group and every other stride multiples of 8 elements), 32-bit offsets. */
static int32_t wgrad_vec_refuses(const char *name, const convnd_conv_params *c, char *reason,
                                 size_t reason_len) {
    if (c->dtype != CONVND_F16 && c->dtype != CONVND_BF16)
        return convnd_refuse(reason, reason_len,
                             "%s: dtype=%s: f16/bf16 only (k-major operands through "
                             "ldmatrix.trans; wgrad_igemm_tc runs TF32)",
                             name, convnd_dtype_name((convnd_dtype)c->dtype));
    if (c->xs[1] != 1 || c->ys[1] != 1)
        return convnd_refuse(reason, reason_len,
                             "%s: x and dy must be channels-last (channel strides %lld, %lld; "
                             "wgrad_igemm_tc gathers any layout)",
                             name, (long long)c->xs[1], (long long)c->ys[1]);
    if (c->cin_g % 8 || c->cout_g % 8)
        return convnd_refuse(reason, reason_len,
                             "%s: C_in/groups=%lld and C_out/groups=%lld must be multiples of 8 "
                             "(16-byte chunks of channels)",
                             name, (long long)c->cin_g, (long long)c->cout_g);
    for (int32_t i = 0; i < 5; ++i)
        if (i != 1 && (c->xs[i] % 8 || c->ys[i] % 8))
            return convnd_refuse(reason, reason_len,
                                 "%s: stride[%d] of x (%lld) or dy (%lld) is not a multiple of 8 "
                                 "elements (a view off the 16-byte chunks)",
                                 name, (int)i, (long long)c->xs[i], (long long)c->ys[i]);
    if (c->index64)
        return convnd_refuse(reason, reason_len,
                             "%s: the problem needs 64-bit offsets (wgrad_igemm_tc runs it)", name);
    return 1;
}

static int32_t wgrad_igemm_supports(const convnd_gemm_family *f, convnd_gemm_variant v,
                                    const convnd_conv_params *params, int32_t config, char *reason,
                                    size_t reason_len) {
    const char *name = f->names[v];
    int32_t count;
    const wgrad_igemm_config *shapes = shapes_of(f, v, &count);
    if (f == &wgrad_vec_family && params->mode == CONVND_WGRAD &&
        !wgrad_vec_refuses(name, params, reason, reason_len))
        return 0;
    if (v == CONVND_GEMM_TC && params->dtype == CONVND_F32 && !params->allow_tf32)
        return convnd_refuse(reason, reason_len,
                             "%s: dtype=f32 needs math=allow_tf32 (tensor cores round f32 to "
                             "TF32)",
                             name);
    if (params->mode != CONVND_WGRAD)
        return convnd_refuse(reason, reason_len, "%s: mode=%s, wgrad only", name,
                             convnd_mode_name((convnd_mode)params->mode));
    if (config < 0 || config >= count)
        return convnd_refuse(reason, reason_len, "%s: config %d out of range", name, (int)config);
    const convnd_conv_params c = *params;
    int64_t g[3];
    grid_of(&c, &shapes[config], g);
    if (g[0] > 0x7fffffff || g[1] > 65535 || g[2] > 65535)
        return convnd_refuse(reason, reason_len,
                             "%s: grid %lld x %lld x %lld (groups x splits) exceeds the launch "
                             "limits (2^31-1, 65535, 65535)",
                             name, (long long)g[0], (long long)g[1], (long long)g[2]);
    const int64_t splits = convnd_wgrad_igemm_splits(&c, shapes[config].splits, shapes[config].bk);
    if (splits > 1 && (double)splits * (double)c.w_numel * 4.0 >= 0x1p62)
        return convnd_refuse(reason, reason_len,
                             "%s: the partials (splits x dw elements x 4 bytes) do not fit a "
                             "workspace",
                             name);
    return 1;
}

static size_t wgrad_igemm_workspace(const convnd_gemm_family *f, convnd_gemm_variant v,
                                    const convnd_conv_params *params, int32_t config) {
    int32_t count;
    const wgrad_igemm_config *shapes = shapes_of(f, v, &count);
    if (config < 0 || config >= count) return SIZE_MAX;
    const convnd_conv_params c = *params;
    const int64_t splits = convnd_wgrad_igemm_splits(&c, shapes[config].splits, shapes[config].bk);
    if (splits <= 1) return 0;
    const double bytes = (double)splits * (double)c.w_numel * 4.0;
    return bytes < 0x1p62 ? (size_t)bytes : SIZE_MAX;
}

/* The heuristic in the header comment: 1 when config is the pick for p. */
static int32_t wgrad_igemm_worth_routing(const convnd_gemm_family *f, convnd_gemm_variant v,
                                         const convnd_conv_params *params, int32_t config) {
    int32_t count;
    const wgrad_igemm_config *shapes = shapes_of(f, v, &count);
    if (config < 0 || config >= count) return 0;
    const convnd_conv_params c = *params;
    const int64_t cols = gemm_columns(&c);
    if (c.cout_g < 16 || cols < 16) return 0;
    /* the vector path: 128 x 128 when both sides fill 3/4 of it, 128 x 64 for few columns,
     * else 64 x 64; the gather path: 64 x 64 or 32 x 32 */
    const int vec = f == &wgrad_vec_family;
    const int32_t tile = vec ? (c.cout_g >= 96 ? 128 : 64) : c.cout_g >= 48 && cols >= 48 ? 64 : 32;
    const int32_t tile_n = vec && tile == 128 && cols < 96 ? 64 : tile;
    const int64_t R = c.N * c.out[0] * c.out[1] * c.out[2];
    const double two_waves = 2.0 * (double)convnd_device_sm_count();
    int32_t pick = -1, longest = -1;
    for (int32_t i = 0; i < count; ++i) {
        const wgrad_igemm_config *f = &shapes[i];
        if (f->bm != tile || f->bn != tile_n) continue;
        const int64_t ktiles = (R + f->bk - 1) / f->bk;
        if (f->splits > 1 && ktiles < f->splits * min_ktiles_per_split) continue;
        longest = i; /* configs of a tile are listed by ascending split count */
        int64_t g[3];
        grid_of(&c, f, g);
        if (pick < 0 && (double)g[0] * (double)g[1] * (double)g[2] >= two_waves) pick = i;
    }
    return config == (pick >= 0 ? pick : longest);
}

CONVND_DECLARE_LAUNCHER(wgrad_igemm_tc);
CONVND_DECLARE_LAUNCHER(wgrad_igemm_simt);
static const convnd_gemm_family wgrad_igemm_family = {
    .names = {"wgrad_igemm_tc", "wgrad_igemm_simt"},
    .kernels = {CONVND_GEMM_KERNEL_EVERY_DTYPE(wgrad_igemm_tc),
                CONVND_GEMM_KERNEL_EVERY_DTYPE(wgrad_igemm_simt)},
    .supports = wgrad_igemm_supports,
    .worth_routing = wgrad_igemm_worth_routing,
    .workspace_size = wgrad_igemm_workspace,
};

/* Element-aligned x or dy (valid in the API) off 16 bytes: the gather path's configuration of
 * the same k-tile depth and split count (hence the same workspace) runs it instead. */
static convnd_status wgrad_vec_launch(const convnd_gemm_family *f, convnd_gemm_variant v,
                                      const convnd_launch_args *a) {
    if (((uintptr_t)a->x | (uintptr_t)a->w) % 16) {
        convnd_launch_args b = *a;
        b.config = -1;
        for (int32_t i = 0; i < TC_CONFIGS; ++i)
            if (tc_shapes[i].bm == 64 && tc_shapes[i].bk == vec_shapes[a->config].bk &&
                tc_shapes[i].splits == vec_shapes[a->config].splits)
                b.config = i;
        if (b.config < 0)
            return convnd_error(CONVND_ERR_INTERNAL, "wgrad_vec_tc:%s: no gather configuration",
                                vec_names[a->config]);
        return convnd_schedule_wgrad_igemm_tc.launch(&b);
    }
    return CONVND_LAUNCH(&f->kernels[v][0], a);
}

CONVND_DECLARE_LAUNCHER(wgrad_vec_tc);
static const convnd_gemm_family wgrad_vec_family = {
    .names = {"wgrad_vec_tc", NULL},
    .kernels = {CONVND_GEMM_KERNEL_EVERY_DTYPE(wgrad_vec_tc)},
    .supports = wgrad_igemm_supports,
    .worth_routing = wgrad_igemm_worth_routing,
    .workspace_size = wgrad_igemm_workspace,
    .launch = wgrad_vec_launch,
};

CONVND_GEMM_FAMILY_SCHEDULE(wgrad_vec_tc, wgrad_vec_family, TC, VEC_CONFIGS, vec_names,
                            "the weight gradient's implicit GEMM with 16-byte cp.async of "
                            "channels-last x and dy on mma.sync (ldmatrix.trans), f16/bf16",
                            "families/wgrad/wgrad_igemm.c, families/wgrad/wgrad_vec_tc.cu",
                            CONVND_NEEDS_SM80_MMA, CONVND_READS_VIEWS);

/* x and dy through xs / ys (dw has no view) */
CONVND_GEMM_FAMILY_SCHEDULE(
    wgrad_igemm_tc, wgrad_igemm_family, TC, TC_CONFIGS, tc_names,
    "weight gradient as an implicit GEMM per group on mma.sync, deterministic split-K",
    "families/wgrad/wgrad_igemm.c, families/wgrad/wgrad_igemm_tc.cu", CONVND_NEEDS_SM80_MMA,
    CONVND_READS_VIEWS);
CONVND_GEMM_FAMILY_SCHEDULE(wgrad_igemm_simt, wgrad_igemm_family, SIMT, SIMT_CONFIGS, simt_names,
                            "the same on CUDA cores, exact f32 FMA, every dtype",
                            "families/wgrad/wgrad_igemm.c, families/wgrad/wgrad_igemm_simt.cu",
                            CONVND_NEEDS_SM80, CONVND_READS_VIEWS);
