/* Registry entry of the grouped schedule (families/depthwise/grouped.cu): forward grouped
 * convolution (groups > 1) with few channels per group, several groups per block, 1/2/3-D, every
 * dtype and layout, no workspace. Configurations (families/depthwise/grouped_configs.h) differ in
 * the run along W (R) and the output channels per thread (CO); each supports every grouped problem
 * whose staged weight row (K2 taps x C_in/groups x CO floats per slice) fits 48 KiB.
 *
 * Heuristic table (worth_routing; the schedule sits above the implicit GEMM):
 *
 *   worth routing when groups > 1, C_in/groups > 1 (depthwise has its own schedule) and
 *     C_in/groups < 8 or C_out/groups < 8 (the implicit GEMM declines: its reduction or column
 *     tile would be mostly empty), or
 *     f32 with exact math and C_out/groups <= 16 (CUDA cores either way; the GEMM's 32-wide
 *     column tile would be half empty). With f16/bf16 or TF32 and 8..16 channels per group
 *     (ResNeXt) the tensor-core GEMM keeps them: its wasted columns cost less than giving up
 *     tensor cores (to be measured on a GPU).
 *   config: r4_co4 when C_out/groups <= 4, r4_co8 when <= 8, else r2_co16. */
#include "registry.h"
#include "refuse.h"
#include "problem_internal.h"
#include "grouped_configs.h"

CONVND_KERNEL(grouped);

#define CONVND_GROUPED_NAME(name, R, CO) #name,
static const char *const grouped_configs[] = {CONVND_GROUPED_CONFIGS(CONVND_GROUPED_NAME)};
#undef CONVND_GROUPED_NAME

static int32_t grouped_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                size_t reason_len) {
    if (config < 0 || config >= CONVND_GROUPED_CONFIG_COUNT)
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    if (params->mode != CONVND_FORWARD)
        return convnd_refuse(reason, reason_len, "mode=%s: the grouped schedule is forward only",
                             convnd_mode_name((convnd_mode)params->mode));
    if (params->groups < 2)
        return convnd_refuse(reason, reason_len, "groups=1: not a grouped convolution");
    int64_t slices;
    convnd_unit_geometry g;
    if (!convnd_grouped_geometry_for(params, convnd_grouped_config_at(config), &slices, &g))
        return convnd_refuse(reason, reason_len,
                             "C_in/groups=%lld with kernel width %lld: one row of a slice's "
                             "staged weights exceeds %d bytes of shared memory",
                             (long long)params->cin_g, (long long)params->k[2],
                             CONVND_DW_WEIGHT_SMEM);
    return 1;
}

static int32_t grouped_worth_routing(const convnd_conv_params *params, int32_t config) {
    char why[256];
    if (!grouped_supports(params, config, why, sizeof why)) return 0;
    const int64_t cin_g = params->cin_g, cout_g = params->cout_g;
    if (cin_g < 2) return 0;
    const int32_t exact_f32 = params->dtype == CONVND_F32 && !params->allow_tf32;
    if (!(cin_g < 8 || cout_g < 8 || (exact_f32 && cout_g <= 16))) return 0;
    const int32_t want = cout_g <= 4 ? 0 : cout_g <= 8 ? 1 : 2;
    return config == want;
}

static convnd_status grouped_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&grouped_kernel, a);
}

CONVND_SCHEDULE_ENTRY(grouped, grouped, "few channels per group: several groups per block",
                      "families/depthwise/grouped.c, families/depthwise/grouped.cu",
                      CONVND_GROUPED_CONFIG_COUNT, grouped_configs, NULL, CONVND_NEEDS_SM80, 0);
