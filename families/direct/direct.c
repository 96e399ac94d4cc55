/* Registry entry of the universal direct schedule (families/direct/direct.cu): supports every valid
 * forward and transposed problem, needs no workspace; the planner's fallback (wgrad has its own,
 * families/wgrad/wgrad.c). */
#include "arch.h"
#include "refuse.h"
#include "registry.h"

CONVND_KERNEL(direct);

/* Named configurations: threads per block (families/direct/direct.cu reads the index). */
#define DIRECT_CONFIGS(X) X(t128) X(t256)
#define DIRECT_ENUM(name) DIRECT_##name,
#define DIRECT_NAME(name) #name,
enum { DIRECT_CONFIGS(DIRECT_ENUM) DIRECT_CONFIG_COUNT };
static const char *const direct_configs[] = {DIRECT_CONFIGS(DIRECT_NAME)};

static int32_t direct_supports(const convnd_conv_params *params, int32_t config, char *reason,
                               size_t reason_len) {
    (void)config;
    if (params->mode == CONVND_WGRAD)
        return convnd_refuse(
            reason, reason_len,
            "mode=wgrad: forward and transposed only (wgrad_direct is its fallback)");
    return 1;
}

/* Small outputs (under 4 blocks of 256 per SM of the device): 128-thread blocks spread them
 * over more SMs; otherwise 256. */
static int32_t direct_worth_routing(const convnd_conv_params *params, int32_t config) {
    const double outputs = (double)params->y_numel;
    const int32_t sms = convnd_device_sm_count();
    const int32_t small = outputs < (double)sms * 256.0 * 4.0;
    return config == (small ? DIRECT_t128 : DIRECT_t256);
}

static convnd_status direct_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&direct_kernel, a);
}

CONVND_SCHEDULE_ENTRY(direct, direct, "the universal fallback: every valid problem of the SPEC",
                      "families/direct/direct.c, families/direct/direct.cu", DIRECT_CONFIG_COUNT,
                      direct_configs, NULL, CONVND_NEEDS_SM80,
                      CONVND_READS_VIEWS | CONVND_READS_PREFIX_STATE | CONVND_READS_PROLOGUE);
