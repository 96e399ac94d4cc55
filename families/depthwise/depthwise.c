/* Registry entry of the depthwise schedule (groups = C_in, C_out = multiplier * C_in), forward,
 * 1/2/3-D, every dtype and layout, no workspace. Configurations
 * (families/depthwise/depthwise_configs.h):
 *
 *   config   kernel                        supports
 *   -------  ----------------------------  -----------------------------------------------------
 *   cl_r4    depthwise_cl.cu, runs of 4    every depthwise problem (one row of the block's staged
 *   cl_r8    depthwise_cl.cu, runs of 8    weights fits 48 KiB: kernel width up to ~1500)
 *   cf_tile  depthwise_tile.cu             input tile + halo + a weight slab fits 96 KiB
 *   stream4  depthwise_stream.cu, window 4 kernel 1 in the leading dims, D*(K-1)+1 <= 4 along W
 *   stream8  depthwise_stream.cu, window 8 likewise, <= 8
 *
 * Heuristic table (worth_routing, one config per problem; the schedule sits above the implicit
 * GEMM, which declines depthwise problems):
 *
 *   x and y channels-last, kernel 1 in the leading dims, stride 1 along W, span <= 8 and at
 *     least 64 outputs along W (the 1-D causal conv of sequence models)  -> stream4 / stream8
 *   x and y channels-last, stride 1 along W and kernel width >= 5       -> cl_r8 (longer runs
 *     amortize the K-1 inputs of overlap)
 *   x and y channels-last otherwise, or mixed layouts                   -> cl_r4
 *   x and y channels-first                                              -> cf_tile (cl_r4 when
 *     the tile does not fit) */
#include "registry.h"
#include "refuse.h"
#include "problem_internal.h"
#include "depthwise_configs.h"

CONVND_KERNEL(depthwise_cl);
CONVND_KERNEL(depthwise_tile);
CONVND_KERNEL(depthwise_stream);

#define CONVND_DW_NAME(name, path, param) #name,
static const char *const depthwise_configs[] = {CONVND_DEPTHWISE_CONFIGS(CONVND_DW_NAME)};
#undef CONVND_DW_NAME

/* The domain shared by every configuration. */
static int32_t depthwise_domain(const convnd_conv_params *params, char *reason, size_t reason_len) {
    if (params->mode != CONVND_FORWARD)
        return convnd_refuse(reason, reason_len, "mode=%s: the depthwise schedule is forward only",
                             convnd_mode_name((convnd_mode)params->mode));
    if (params->cin_g != 1)
        return convnd_refuse(
            reason, reason_len,
            "not depthwise: groups=%lld, C_in=%lld (depthwise needs groups == C_in)",
            (long long)params->groups, (long long)params->C_in);
    return 1;
}

static int32_t depthwise_config_fits(const convnd_conv_params *params, int32_t config, char *reason,
                                     size_t reason_len) {
    const convnd_dw_config c = convnd_dw_config_at(config);
    if (c.path == CONVND_DW_PATH_CL) {
        convnd_unit_geometry g;
        const int32_t vec = convnd_dw_vec(params->dtype);
        if (!convnd_unit_geometry_for(params, convnd_dw_div_up(params->C_out, vec), vec, &g))
            return convnd_refuse(reason, reason_len,
                                 "kernel width %lld: one row of a channel vector's staged weights "
                                 "exceeds %d bytes of shared memory",
                                 (long long)params->k[2], CONVND_DW_WEIGHT_SMEM);
        return 1;
    }
    if (c.path == CONVND_DW_PATH_TILE) {
        convnd_dw_tile_geometry g;
        if (!convnd_dw_tile_geometry_for(params, c.param, &g))
            return convnd_refuse(
                reason, reason_len,
                "the input tile + halo (stride %lldx%lld, dilation %lldx%lld, kernel "
                "%lldx%lld) exceeds %d bytes of shared memory",
                (long long)params->s[1], (long long)params->s[2], (long long)params->d[1],
                (long long)params->d[2], (long long)params->k[1], (long long)params->k[2],
                CONVND_DW_TILE_SMEM);
        return 1;
    }
    if (params->k[0] != 1 || params->k[1] != 1)
        return convnd_refuse(
            reason, reason_len,
            "kernel %lldx%lld in the leading dims: the stream path walks W only (needs "
            "1x1 there)",
            (long long)params->k[0], (long long)params->k[1]);
    if (convnd_dw_span_w(params) > c.param)
        return convnd_refuse(
            reason, reason_len,
            "kernel span dilation*(K-1)+1 = %lld along W exceeds the register window "
            "of %d",
            (long long)convnd_dw_span_w(params), (int)c.param);
    return 1;
}

static int32_t depthwise_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                  size_t reason_len) {
    if (config < 0 || config >= CONVND_DW_CONFIG_COUNT)
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    if (!depthwise_domain(params, reason, reason_len)) return 0;
    return depthwise_config_fits(params, config, reason, reason_len);
}

/* The configuration the heuristic table above picks (-1 outside the domain). */
static int32_t depthwise_preferred(const convnd_conv_params *params) {
    char why[256];
    if (!depthwise_domain(params, why, sizeof why)) return -1;
    const int32_t cl = params->x_cl && params->y_cl, cf = !params->x_cl && !params->y_cl;
    int32_t want = 0; /* cl_r4 */
    if (cl && params->k[0] == 1 && params->k[1] == 1 && params->s[2] == 1 && params->out[2] >= 64 &&
        convnd_dw_span_w(params) <= 8)
        want = convnd_dw_span_w(params) <= 4 ? 3 : 4; /* stream4, stream8 */
    else if (cl && params->s[2] == 1 && params->k[2] >= 5)
        want = 1; /* cl_r8 */
    else if (cf)
        want = 2; /* cf_tile */
    return depthwise_config_fits(params, want, why, sizeof why) ? want : 0;
}

static int32_t depthwise_worth_routing(const convnd_conv_params *params, int32_t config) {
    return config == depthwise_preferred(params);
}

static convnd_status depthwise_launch(const convnd_launch_args *a) {
    if (a->config < 0 || a->config >= CONVND_DW_CONFIG_COUNT)
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise: config %d out of range",
                            (int)a->config);
    switch (convnd_dw_config_at(a->config).path) {
    case CONVND_DW_PATH_CL:
        return CONVND_LAUNCH(&depthwise_cl_kernel, a);
    case CONVND_DW_PATH_TILE:
        return CONVND_LAUNCH(&depthwise_tile_kernel, a);
    default:
        return CONVND_LAUNCH(&depthwise_stream_kernel, a);
    }
}

CONVND_SCHEDULE_ENTRY(depthwise, depthwise,
                      "groups = C_in (multiplier allowed), 1/2/3-D: channels-last vector paths, "
                      "channels-first tile + halo, streaming causal 1-D",
                      "families/depthwise/depthwise.c, families/depthwise/depthwise*.cu",
                      CONVND_DW_CONFIG_COUNT, depthwise_configs, NULL, CONVND_NEEDS_SM80, 0);
