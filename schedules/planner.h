/* The planner: which (schedule, configuration) runs a problem. A forced choice (API option or
 * environment CONVND_SCHEDULE) wins; else, with autotune on, the measured winner (the planner
 * asks autotune.c, never the other way round); else the heuristic table documented at the top
 * of planner.c. */
#ifndef CONVND_PLANNER_H
#define CONVND_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include "autotune.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every function below takes a valid problem whose y_layout is resolved (never AUTO) and its
 * launch parameters (convnd_resolve), computed once by the plan and handed to every
 * schedule's supports(), worth_routing() and workspace_size(). */

/* How a choice was made, for convnd_plan_describe. */
typedef enum convnd_choice_source {
    CONVND_CHOSEN_FORCED_OPTION, /* convnd_options.schedule */
    CONVND_CHOSEN_FORCED_ENV,    /* $CONVND_SCHEDULE */
    CONVND_CHOSEN_AUTOTUNE_CACHE,
    CONVND_CHOSEN_AUTOTUNE_TIMED,
    CONVND_CHOSEN_HEURISTIC_ROUTED,  /* the first candidate worth routing */
    CONVND_CHOSEN_HEURISTIC_FALLBACK /* none worth routing: the first that supports */
} convnd_choice_source;

/* The forced spec in effect: opts->schedule, else a non-empty $CONVND_SCHEDULE, else NULL. */
const char *convnd_forced_spec(const convnd_options *opts);

/* A spec (convnd_parse_spec's grammar) that does not support p: CONVND_ERR_UNSUPPORTED with the
 * schedule's reason. Without a config, the first supporting config that is worth routing, else
 * the first supporting one. */
convnd_status convnd_choose_forced(const convnd_problem *p, const convnd_conv_params *params,
                                   const char *spec, convnd_choice *out);

/* The heuristic: the first candidate worth routing; else the first that supports p (the
 * universal direct schedule always does). source may be NULL. */
convnd_status convnd_choose_heuristic(const convnd_problem *p, const convnd_conv_params *params,
                                      convnd_choice *out, convnd_choice_source *source);

/* Forced, else (autotune) a cached winner, else, when tune is not NULL and autotune may run on
 * device, the winner of timing every candidate on tune's buffers, else the heuristic.
 * source may be NULL. */
convnd_status convnd_choose(const convnd_problem *p, const convnd_conv_params *params,
                            const convnd_options *opts, convnd_device device,
                            const convnd_tune_buffers *tune, convnd_choice *out,
                            convnd_choice_source *source);

/* 1 when opts ask for autotune, nothing is forced, device may run it and p is not a weight
 * gradient (autotune times into a y-shaped scratch; wgrad's output is dw: heuristic only). */
int32_t convnd_wants_autotune(const convnd_problem *p, const convnd_options *opts,
                              convnd_device device);

/* "schedule" and "config" of a choice */
const char *convnd_choice_schedule_name(convnd_choice choice);
const char *convnd_choice_config_name(convnd_choice choice);

#ifdef __cplusplus
}
#endif

#endif
