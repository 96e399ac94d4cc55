/* A throwaway schedule (tests/add_schedule.sh copies it into families/throwaway_pointwise/ and
 * removes it again): the host side of a 1x1 forward conv, as few lines as a real one needs. */
#include "refuse.h"
#include "registry.h"

CONVND_KERNEL(throwaway_pointwise);

#define THROWAWAY_CONFIGS(X) X(t128)
#define THROWAWAY_ENUM(name) THROWAWAY_##name,
#define THROWAWAY_NAME(name) #name,
enum { THROWAWAY_CONFIGS(THROWAWAY_ENUM) THROWAWAY_CONFIG_COUNT };
static const char *const throwaway_configs[] = {THROWAWAY_CONFIGS(THROWAWAY_NAME)};

static int32_t throwaway_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                  size_t reason_len) {
    (void)config;
    if (params->mode != CONVND_FORWARD)
        return convnd_refuse(reason, reason_len, "mode=%d: forward only", (int)params->mode);
    if (params->groups != 1)
        return convnd_refuse(reason, reason_len, "groups=%d: 1 only", (int)params->groups);
    for (int t = 0; t < CONVND_MAX_DIMS; ++t)
        if (params->k[t] != 1 || params->s[t] != 1 || params->p0[t] != 0 || params->p1[t] != 0)
            return convnd_refuse(reason, reason_len,
                                 "dim %d: kernel 1, stride 1 and no padding only", t);
    return 1;
}

/* forced only: the planner never routes to it */
static int32_t throwaway_worth_routing(const convnd_conv_params *params, int32_t config) {
    (void)params;
    (void)config;
    return 0;
}

static convnd_status throwaway_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&throwaway_pointwise_kernel, a);
}

CONVND_SCHEDULE_ENTRY(throwaway_pointwise, throwaway, "a throwaway 1x1 forward conv (tests only)",
                      "families/throwaway_pointwise/throwaway_pointwise.c, "
                      "families/throwaway_pointwise/throwaway_pointwise.cu",
                      THROWAWAY_CONFIG_COUNT, throwaway_configs, NULL, CONVND_NEEDS_SM80, 0);
