/* Registry entry of the universal direct schedule (kernels/direct.cu): supports every valid
 * problem, needs no workspace; the planner's fallback. */
#include "launchers.h"
#include "registry.h"

static const char *const direct_configs[] = {"t128", "t256"}; /* threads per block */

static int32_t direct_supports(const convnd_problem *p, int32_t config, char *reason,
                               size_t reason_len) {
    (void)p, (void)config, (void)reason, (void)reason_len;
    return 1;
}

/* Small outputs: 128-thread blocks spread them over more SMs; otherwise 256. */
static int32_t direct_worth_routing(const convnd_problem *p, int32_t config) {
    int64_t out[CONVND_MAX_DIMS];
    if (convnd_output_size(p, out) != CONVND_OK) return 0;
    double outputs = (double)p->N * (double)p->C_out;
    for (int32_t t = 0; t < p->dims; ++t)
        outputs *= (double)out[t];
    const int32_t small = outputs < 132.0 * 256.0 * 4.0;
    return config == (small ? 0 : 1);
}

static convnd_status direct_launch(const convnd_launch_args *a) {
    return CONVND_CALL_LAUNCHER(direct, a);
}

const convnd_schedule convnd_schedule_direct = {
    .name = "direct",
    .num_configs = (int32_t)(sizeof(direct_configs) / sizeof(direct_configs[0])),
    .config_names = direct_configs,
    .supports = direct_supports,
    .worth_routing = direct_worth_routing,
    .workspace_size = NULL,
    .launch = direct_launch,
};
