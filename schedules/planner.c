/* The planner: an automatic (schedule, configuration) for every problem.
 *
 * Heuristic. The planner walks convnd_schedule_table (registry.c) in priority order and takes
 * the first (schedule, config) whose supports() and worth_routing() both hold; when none is
 * worth routing it takes the first that supports the problem. The universal direct schedule
 * supports every valid problem and is last, so every problem gets a plan. Each schedule's file
 * holds the exact rule of its rows; in table order:
 *
 *   schedule       worth routing when (summary)                              its file
 *   -------------  --------------------------------------------------------  ---------------
 *   depthwise      groups == C_in (forward); config by layout and kernel      depthwise.c
 *                  span (stream* for long channels-last 1-D causal convs)
 *   grouped        1 < C_in/g and C_in/g or C_out/g < 8 (or f32 exact with    grouped.c
 *                  C_out/g <= 16): few channels per group
 *   tiled_direct   groups == 1 and C_in <= 8 (stems)                         tiled_direct.c
 *   igemm_tc       forward, GEMM-shaped (C_in/g, C_out/g >= 8), f16/bf16 or   implicit_gemm.c
 *                  TF32 allowed; tile by C_out/g and the number of tiles
 *   igemm_simt     the same shapes in exact f32                              implicit_gemm.c
 *   convT_tc       transposed, GEMM-shaped, f16/bf16/TF32                    transposed.c
 *   convT_simt     transposed, GEMM-shaped, exact f32                        transposed.c
 *   cublas_im2col  never (a reference, forced only)                          cublas_im2col.c
 *   direct         t128 below 132*256*4 outputs (an H200's 132 SMs, 4        direct.c
 *                  blocks of 256 each: small blocks spread a small output
 *                  over more SMs), else t256; the fallback for everything
 *
 * A new schedule adds its row here and its entry in registry.c.
 *
 * Autotune (convnd_options.autotune): on the GPU, conv_nd times every supporting configuration
 * once (schedules/autotune.c) and caches the winner per problem. On the emulated device timings
 * say nothing about a GPU, so autotune is ignored there and the heuristic decides. */
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "registry.h"
#include "error.h"

const char *convnd_plan_forced_spec(const convnd_options *opts) {
    if (opts && opts->schedule) return opts->schedule;
    const char *env = getenv("CONVND_SCHEDULE");
    return env && env[0] ? env : NULL;
}

const char *convnd_plan_schedule_name(convnd_plan plan) {
    return convnd_schedule_table[plan.schedule]->name;
}

const char *convnd_plan_config_name(convnd_plan plan) {
    return convnd_schedule_table[plan.schedule]->config_names[plan.config];
}

size_t convnd_plan_workspace(const convnd_problem *p, convnd_plan plan) {
    const convnd_schedule *s = convnd_schedule_table[plan.schedule];
    return s->workspace_size ? s->workspace_size(p, plan.config) : 0;
}

/* A caller's string echoed in a message: its first 64 characters (then "..."), so that a huge
 * one cannot push the reason out of the message. */
#define ECHO_MAX 64
#define ECHO_FMT "%.*s%s"
#define ECHO_ARGS(str)                                                                             \
    (int)(strlen(str) > ECHO_MAX ? ECHO_MAX : strlen(str)), (str),                                 \
        (strlen(str) > ECHO_MAX ? "..." : "")

convnd_status convnd_plan_forced(const convnd_problem *p, const char *spec, convnd_plan *out) {
    const char *colon = strchr(spec, ':');
    const size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const int32_t i = convnd_schedule_find(spec, name_len);
    if (i < 0) {
        char names[512];
        convnd_schedule_list_names(names, sizeof names);
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "schedule='" ECHO_FMT "': unknown schedule (valid: %s)",
                            ECHO_ARGS(spec), names);
    }
    const convnd_schedule *s = convnd_schedule_table[i];
    char reason[512] = "";
    if (colon) {
        const int32_t c = convnd_schedule_find_config(s, colon + 1);
        if (c < 0) {
            char configs[512];
            convnd_schedule_list_configs(s, configs, sizeof configs);
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "schedule='" ECHO_FMT "': unknown configuration '" ECHO_FMT
                                "' of '%s' (valid: %s, or an index 0..%d)",
                                ECHO_ARGS(spec), ECHO_ARGS(colon + 1), s->name, configs,
                                (int)s->num_configs - 1);
        }
        if (!s->supports(p, c, reason, sizeof reason))
            return convnd_error(CONVND_ERR_UNSUPPORTED,
                                "forced schedule '%s:%s' does not support this problem: %s",
                                s->name, s->config_names[c], reason);
        *out = (convnd_plan){i, c};
        return CONVND_OK;
    }
    int32_t first = -1;
    char other[512];
    for (int32_t c = 0; c < s->num_configs; ++c) {
        if (!s->supports(p, c, first < 0 && c == 0 ? reason : other,
                         first < 0 && c == 0 ? sizeof reason : sizeof other))
            continue;
        if (s->worth_routing && s->worth_routing(p, c)) {
            *out = (convnd_plan){i, c};
            return CONVND_OK;
        }
        if (first < 0) first = c;
    }
    if (first < 0)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "forced schedule '%s' does not support this problem: %s", s->name,
                            reason);
    *out = (convnd_plan){i, first};
    return CONVND_OK;
}

convnd_status convnd_plan_heuristic(const convnd_problem *p, convnd_plan *out) {
    convnd_plan fallback = {-1, -1};
    char reason[512];
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            if (!s->supports(p, c, reason, sizeof reason)) continue;
            if (s->worth_routing && s->worth_routing(p, c)) {
                *out = (convnd_plan){i, c};
                return CONVND_OK;
            }
            if (fallback.schedule < 0) fallback = (convnd_plan){i, c};
        }
    }
    if (fallback.schedule < 0)
        return convnd_error(CONVND_ERR_NO_SCHEDULE, "no schedule supports this problem");
    *out = fallback;
    return CONVND_OK;
}

convnd_status convnd_plan_choose(const convnd_problem *p, const convnd_options *opts,
                                 convnd_device device, convnd_plan *out) {
    const char *forced = convnd_plan_forced_spec(opts);
    if (forced) return convnd_plan_forced(p, forced, out);
    if (device == CONVND_DEVICE_GPU && opts && opts->autotune &&
        convnd_autotune_lookup(p, opts->autotune_cache_file, out))
        return CONVND_OK;
    return convnd_plan_heuristic(p, out);
}
