/* The planner: an automatic (schedule, configuration) for every problem.
 *
 * Heuristic. The planner walks convnd_schedule_table (registry.c) in priority order and takes
 * the first (schedule, config) whose supports() and worth_routing() both hold; when none is
 * worth routing it takes the first that supports the problem. The universal direct schedule
 * supports every valid problem and is last, so every problem gets a plan. Each schedule's file
 * holds the exact rule of its rows (its supports() and worth_routing()); for a given problem,
 * `convnd-bench --why --problem ROW` (convnd_plan_explain, schedules/explain.c) prints every
 * schedule:config's verdict and reason in table order and the choice, from these same
 * functions, so no prose table here can go stale.
 *
 * Autotune (convnd_options.autotune): the planner asks autotune.c (never the reverse) for a
 * cached winner, and, at plan creation with buffers to time on, for a timed one. On the
 * emulated device timings say nothing about a GPU, so autotune is ignored there and the
 * heuristic decides. */
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "errata.h"
#include "error.h"
#include "arch.h"
#include "planner.h"
#include "problem_internal.h"

const char *convnd_forced_spec(const convnd_options *opts) {
    if (opts && opts->schedule) return opts->schedule;
    const char *env = getenv("CONVND_SCHEDULE");
    return env && env[0] ? env : NULL;
}

const char *convnd_choice_schedule_name(convnd_choice choice) {
    return convnd_schedule_table[choice.schedule]->name;
}

const char *convnd_choice_config_name(convnd_choice choice) {
    return convnd_schedule_table[choice.schedule]->config_names[choice.config];
}

/* The candidate loop's visitor for the heuristic: stops at the first worth routing, remembers
 * the first that supports. */
typedef struct heuristic_pick {
    const convnd_conv_params *params;
    convnd_choice routed, fallback;
} heuristic_pick;

static int32_t pick(convnd_choice c, void *ctx) {
    heuristic_pick *h = ctx;
    const convnd_schedule *s = convnd_schedule_table[c.schedule];
    if (h->fallback.schedule < 0) h->fallback = c;
    if (!s->worth_routing || !s->worth_routing(h->params, c.config)) return 0;
    h->routed = c;
    return 1;
}

/* The heuristic over all schedules or just one; 0 when none supports p. */
static int32_t heuristic(const convnd_problem *p, const convnd_conv_params *params,
                         int32_t only_schedule, convnd_choice *out, convnd_choice_source *source,
                         char *reason, size_t reason_len) {
    heuristic_pick h = {params, {-1, -1}, {-1, -1}};
    const int32_t routed =
        convnd_for_each_candidate(p, params, only_schedule, pick, &h, reason, reason_len);
    if (!routed && h.fallback.schedule < 0) return 0;
    *out = routed ? h.routed : h.fallback;
    if (source)
        *source = routed ? CONVND_CHOSEN_HEURISTIC_ROUTED : CONVND_CHOSEN_HEURISTIC_FALLBACK;
    return 1;
}

convnd_status convnd_choose_forced(const convnd_problem *p, const convnd_conv_params *params,
                                   const char *spec, convnd_choice *out) {
    int32_t i, c;
    const convnd_status st = convnd_parse_spec(spec, &i, &c);
    if (st != CONVND_OK) return st;
    const convnd_schedule *s = convnd_schedule_table[i];
    char reason[512] = "";
    if (c >= 0) {
        if (!convnd_schedule_supports_here(s, p, params, c, reason, sizeof reason))
            return convnd_error(CONVND_ERR_UNSUPPORTED,
                                "forced schedule '%s:%s' does not support this problem: %s",
                                s->name, s->config_names[c], reason);
        *out = (convnd_choice){i, c};
        return CONVND_OK;
    }
    if (!heuristic(p, params, i, out, NULL, reason, sizeof reason))
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "forced schedule '%s' does not support this problem: %s", s->name,
                            reason);
    return CONVND_OK;
}

convnd_status convnd_choose_heuristic(const convnd_problem *p, const convnd_conv_params *params,
                                      convnd_choice *out, convnd_choice_source *source) {
    if (!heuristic(p, params, -1, out, source, NULL, 0))
        return convnd_error(CONVND_ERR_NO_SCHEDULE, "no schedule supports this problem");
    return CONVND_OK;
}

int32_t convnd_wants_autotune(const convnd_problem *p, const convnd_options *opts,
                              convnd_device device) {
    /* views, prefix/state and a prologue (SPEC §11-§12, §15) are not timed: the tuning scratch
     * holds packed operands only (the heuristic routes them: GEMM-shaped ones to the implicit
     * GEMMs) */
    const int32_t views = p->x_view.custom || p->y_view.custom || p->z_view.custom;
    return opts && opts->autotune && p->mode != CONVND_WGRAD && !convnd_forced_spec(opts) &&
           !views && !convnd_has_io_axis(p) && p->prologue.num_steps == 0 &&
           convnd_autotune_runs_on(device);
}

convnd_status convnd_choose(const convnd_problem *p, const convnd_conv_params *params,
                            const convnd_options *opts, convnd_device device,
                            const convnd_tune_buffers *tune, convnd_choice *out,
                            convnd_choice_source *source) {
    convnd_count_plan();
    /* the errata in effect now (a malformed file fails the plan, naming its line) */
    const convnd_status errata = convnd_errata_refresh();
    if (errata != CONVND_OK) return errata;
    convnd_choice_source ignored;
    if (!source) source = &ignored;
    const char *forced = convnd_forced_spec(opts);
    if (forced) {
        *source = opts && opts->schedule ? CONVND_CHOSEN_FORCED_OPTION : CONVND_CHOSEN_FORCED_ENV;
        return convnd_choose_forced(p, params, forced, out);
    }
    if (convnd_wants_autotune(p, opts, device)) {
        if (convnd_autotune_lookup(p, params, opts->autotune_cache_file, out)) {
            *source = CONVND_CHOSEN_AUTOTUNE_CACHE;
            return CONVND_OK;
        }
        if (tune &&
            convnd_autotune(p, params, device, tune, opts->autotune_cache_file, out) == CONVND_OK) {
            *source = CONVND_CHOSEN_AUTOTUNE_TIMED;
            return CONVND_OK;
        }
    }
    return convnd_choose_heuristic(p, params, out, source);
}
