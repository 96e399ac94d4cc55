/* Registry entry of the depthwise weight-gradient schedule (families/wgrad/wgrad_depthwise.cu, SPEC
 * §10): WGRAD problems with one input channel per group (depthwise, any channel multiplier, the
 * causal 1-D case included), every dtype and layout. A block reduces a tile of channels over one
 * split-K chunk of N * prod(O); configurations s1/s16/s64 cut the reduction into at most that many
 * chunks (f32 partials in the workspace, summed in a fixed order: deterministic).
 *
 * Heuristic (worth_routing): every depthwise wgrad; the config is the fewest chunks whose blocks
 * fill two waves of an H200 (264 blocks) while each chunk keeps at least 256 positions (one per
 * thread), else the most that keeps 256, else s1. */
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"
#include "wgrad_split.h"

CONVND_KERNEL(wgrad_depthwise);

#define WGRAD_DEPTHWISE_NAME(name, count) #name,
static const char *const depthwise_names[] = {CONVND_WGRAD_DEPTHWISE_CONFIGS(WGRAD_DEPTHWISE_NAME)};
#undef WGRAD_DEPTHWISE_NAME
#define DEPTHWISE_CONFIGS ((int32_t)(sizeof depthwise_names / sizeof depthwise_names[0]))

static const double two_waves = 264.0;
static const int64_t min_chunk = 256;

/* Channel tile of the kernel's blocks: 32 when x and dy are channels-last, else 1. */
static int64_t channel_tile(const convnd_conv_params *c) {
    return c->xs[1] == 1 && c->ys[1] == 1 ? 32 : 1;
}

static int32_t depthwise_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                  size_t reason_len) {
    if (params->mode != CONVND_WGRAD)
        return convnd_refuse(reason, reason_len, "wgrad_depthwise: mode=%s, wgrad only",
                             convnd_mode_name((convnd_mode)params->mode));
    if (config < 0 || config >= DEPTHWISE_CONFIGS)
        return convnd_refuse(reason, reason_len, "wgrad_depthwise: config %d out of range",
                             (int)config);
    const convnd_conv_params c = *params;
    if (c.cin_g != 1)
        return convnd_refuse(reason, reason_len,
                             "wgrad_depthwise: C_in/groups=%lld, depthwise only (one input "
                             "channel per group)",
                             (long long)c.cin_g);
    const int64_t blocks = (c.C_out + channel_tile(&c) - 1) / channel_tile(&c);
    if (blocks > 0x7fffffff)
        return convnd_refuse(reason, reason_len,
                             "wgrad_depthwise: %lld channel blocks exceed the grid limit 2^31-1",
                             (long long)blocks);
    const int64_t splits = convnd_wgrad_depthwise_splits(&c, config);
    if ((double)splits * (double)c.w_numel * 4.0 >= 0x1p62)
        return convnd_refuse(reason, reason_len,
                             "wgrad_depthwise: the partials (splits x dw elements x 4 bytes) do "
                             "not fit a workspace");
    return 1;
}

static size_t depthwise_workspace(const convnd_conv_params *params, int32_t config) {
    const convnd_conv_params c = *params;
    const int64_t splits = convnd_wgrad_depthwise_splits(&c, config);
    if (splits <= 1) return 0;
    const double bytes = (double)splits * (double)c.w_numel * 4.0;
    return bytes < 0x1p62 ? (size_t)bytes : SIZE_MAX;
}

static int32_t depthwise_worth_routing(const convnd_conv_params *params, int32_t config) {
    const convnd_conv_params c = *params;
    if (c.cin_g != 1) return 0;
    const double blocks = (double)((c.C_out + channel_tile(&c) - 1) / channel_tile(&c));
    const int64_t R = c.N * c.out[0] * c.out[1] * c.out[2];
    int32_t pick = -1, longest = 0;
    for (int32_t i = 0; i < DEPTHWISE_CONFIGS; ++i) {
        const int64_t s = convnd_wgrad_depthwise_splits(&c, i);
        if (s > 1 && R / s < min_chunk) continue;
        longest = i; /* the configs are listed by ascending count */
        if (pick < 0 && blocks * (double)s >= two_waves) pick = i;
    }
    return config == (pick >= 0 ? pick : longest);
}

static convnd_status depthwise_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&wgrad_depthwise_kernel, a);
}

/* x and dy through xs / ys (dw has no view) */
CONVND_SCHEDULE_ENTRY(wgrad_depthwise, depthwise,
                      "weight gradient with one input channel per group, deterministic split-K",
                      "families/wgrad/wgrad_depthwise.c, families/wgrad/wgrad_depthwise.cu",
                      DEPTHWISE_CONFIGS, depthwise_names, depthwise_workspace, CONVND_NEEDS_SM80,
                      CONVND_READS_VIEWS);
