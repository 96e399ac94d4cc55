/* Registry entry of the tiled direct schedule (families/depthwise/tiled_direct.cu): an output tile
 * per block with the input tile + halo in shared memory; forward, 1/2/3-D, any groups, every dtype
 * and layout, no workspace. Each configuration (families/depthwise/tiled_configs.h: co4, co8, co16
 * output channels per thread) supports every forward problem for which one input channel's stage
 * (tile + halo, and its weights for the block's channels) fits 96 KiB after shrinking the
 * block; the implicit GEMM serves large kernels with many channels better anyway.
 *
 * Heuristic table (worth_routing; the schedule sits above the implicit GEMM):
 *
 *   worth routing when groups == 1 and C_in <= 8 (stems: a GEMM reduction of C_in x taps
 *     starves its k-tiles; the tile here reuses each staged input for every output channel
 *     of the block and every tap)
 *   config: co16 when C_out >= 32, co8 when C_out >= 8, else co4. */
#include "registry.h"
#include "refuse.h"
#include "problem_internal.h"
#include "tiled_configs.h"

CONVND_KERNEL(tiled_direct);

#define CONVND_TILED_NAME(name, CO_T) #name,
static const char *const tiled_configs[] = {CONVND_TILED_CONFIGS(CONVND_TILED_NAME)};
#undef CONVND_TILED_NAME

static int32_t tiled_supports(const convnd_conv_params *params, int32_t config, char *reason,
                              size_t reason_len) {
    if (config < 0 || config >= CONVND_TILED_CONFIG_COUNT)
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    if (params->mode != CONVND_FORWARD)
        return convnd_refuse(reason, reason_len,
                             "mode=%s: the tiled_direct schedule is forward only",
                             convnd_mode_name((convnd_mode)params->mode));
    convnd_tiled_geometry g;
    if (!convnd_tiled_geometry_for(params, config, &g))
        return convnd_refuse(reason, reason_len,
                             "one input channel's tile + halo and weights (stride %lldx%lld, "
                             "dilation %lldx%lld, kernel %lldx%lld) exceed %d bytes of shared "
                             "memory",
                             (long long)params->s[1], (long long)params->s[2],
                             (long long)params->d[1], (long long)params->d[2],
                             (long long)params->k[1], (long long)params->k[2], CONVND_TILED_SMEM);
    return 1;
}

static int32_t tiled_worth_routing(const convnd_conv_params *params, int32_t config) {
    char why[256];
    if (params->groups != 1 || params->C_in > 8 || !tiled_supports(params, config, why, sizeof why))
        return 0;
    const int32_t want = params->C_out >= 32 ? 2 : params->C_out >= 8 ? 1 : 0;
    return config == want;
}

static convnd_status tiled_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&tiled_direct_kernel, a);
}

CONVND_SCHEDULE_ENTRY(
    tiled_direct, tiled,
    "small C_in (stems): output tile per block, input tile + halo in shared memory",
    "families/depthwise/tiled_direct.c, families/depthwise/tiled_direct.cu",
    CONVND_TILED_CONFIG_COUNT, tiled_configs, NULL, CONVND_NEEDS_SM80, 0);
