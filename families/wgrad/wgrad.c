/* Registry entries of the weight-gradient schedules (families/wgrad/wgrad.cu), SPEC §10. Both run
 * only CONVND_WGRAD problems, and every one of them; both are deterministic.
 *
 *   wgrad_splitk  the reduction N*prod(O) cut into s8/s32/s128 chunks (f32 partials in the
 *                 workspace, summed in a fixed order). Worth routing when dw has few elements
 *                 and a long reduction (depthwise, 1-D causal, small C): one thread per dw
 *                 element would leave most of a GPU idle.
 *   wgrad_direct  one thread per dw element, no workspace: the fallback. */
#include "arch.h"
#include "refuse.h"
#include "registry.h"
#include "wgrad_split.h"
#include "problem_internal.h"

CONVND_KERNEL(wgrad_direct);
CONVND_KERNEL(wgrad_splitk);

static const char *const wgrad_direct_configs[] = {"t256"};
/* kN: N split-K chunks (the suffix's one meaning: families/wgrad/wgrad_igemm_configs.h) */
static const char *const wgrad_splitk_configs[] = {"k8", "k32", "k128"};
static const int64_t wgrad_splitk_counts[] = {8, 32, 128};
#define WGRAD_SPLITK_CONFIGS ((int32_t)(sizeof wgrad_splitk_counts / sizeof wgrad_splitk_counts[0]))

/* Threads the device keeps busy: 2048 per SM (sm_80 to sm_90). */
static double wgrad_gpu_threads(void) {
    return (double)convnd_device_sm_count() * 2048.0;
}

int64_t convnd_wgrad_splits(const convnd_conv_params *p, int32_t config) {
    if (config < 0 || config >= WGRAD_SPLITK_CONFIGS) return 0;
    const int64_t R = p->N * p->out[0] * p->out[1] * p->out[2];
    const int64_t s = wgrad_splitk_counts[config];
    return R < 1 ? 1 : (s < R ? s : R);
}

static int32_t wgrad_only(const convnd_conv_params *params, const char *name, char *reason,
                          size_t reason_len) {
    if (params->mode == CONVND_WGRAD) return 1;
    return convnd_refuse(reason, reason_len, "%s: mode=%s, wgrad only", name,
                         convnd_mode_name((convnd_mode)params->mode));
}

static int32_t wgrad_direct_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                     size_t reason_len) {
    (void)config;
    return wgrad_only(params, "wgrad_direct", reason, reason_len);
}

static int32_t wgrad_direct_worth_routing(const convnd_conv_params *params, int32_t config) {
    (void)params, (void)config;
    return 1;
}

static convnd_status wgrad_direct_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&wgrad_direct_kernel, a);
}

/* The partials' bytes: splits * w_numel f32, or SIZE_MAX when that does not fit. */
static size_t wgrad_splitk_bytes(const convnd_conv_params *params, int32_t config) {
    const double bytes =
        (double)convnd_wgrad_splits(params, config) * (double)params->w_numel * 4.0;
    return bytes < 0x1p62 ? (size_t)bytes : SIZE_MAX;
}

static int32_t wgrad_splitk_supports(const convnd_conv_params *params, int32_t config, char *reason,
                                     size_t reason_len) {
    if (!wgrad_only(params, "wgrad_splitk", reason, reason_len)) return 0;
    if (config < 0 || config >= WGRAD_SPLITK_CONFIGS)
        return convnd_refuse(reason, reason_len, "wgrad_splitk: config %d out of range",
                             (int)config);
    if (wgrad_splitk_bytes(params, config) == SIZE_MAX)
        return convnd_refuse(reason, reason_len,
                             "wgrad_splitk: the partials (splits x dw elements x 4 bytes) do not "
                             "fit a workspace");
    return 1;
}

/* Few dw elements (under a quarter of the GPU's threads) and a reduction of at least 64 per
 * split: the smallest split count that fills the GPU, or the largest. */
static int32_t wgrad_splitk_worth_routing(const convnd_conv_params *params, int32_t config) {
    const convnd_conv_params *c = params;
    const double W = (double)c->w_numel, R = (double)(c->N * c->out[0] * c->out[1] * c->out[2]);
    const double threads = wgrad_gpu_threads();
    if (W * 4.0 >= threads) return 0;
    int32_t pick = WGRAD_SPLITK_CONFIGS - 1;
    for (int32_t i = 0; i < WGRAD_SPLITK_CONFIGS; ++i)
        if (W * (double)wgrad_splitk_counts[i] >= threads) {
            pick = i;
            break;
        }
    return config == pick && R >= 64.0 * (double)wgrad_splitk_counts[pick];
}

static convnd_status wgrad_splitk_launch(const convnd_launch_args *a) {
    return CONVND_LAUNCH(&wgrad_splitk_kernel, a);
}

/* x and dy through xs / ys (dw has no view) */
CONVND_SCHEDULE_ENTRY(
    wgrad_splitk, wgrad_splitk,
    "weight gradient with the reduction cut into chunks summed in a fixed order (small "
    "dw, long reduction)",
    "families/wgrad/wgrad.c, families/wgrad/wgrad.cu", WGRAD_SPLITK_CONFIGS, wgrad_splitk_configs,
    wgrad_splitk_bytes, CONVND_NEEDS_SM80, CONVND_READS_VIEWS);

/* x and dy through xs / ys (dw has no view) */
CONVND_SCHEDULE_ENTRY(
    wgrad_direct, wgrad_direct,
    "weight gradient, one thread per dw element: the fallback for every wgrad problem",
    "families/wgrad/wgrad.c, families/wgrad/wgrad.cu", 1, wgrad_direct_configs, NULL,
    CONVND_NEEDS_SM80, CONVND_READS_VIEWS);
