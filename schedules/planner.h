/* The planner: which (schedule, configuration) runs a problem. A forced choice (API option or
 * environment CONVND_SCHEDULE) wins; else, on the GPU with autotune on, the measured winner;
 * else the heuristic table documented at the top of planner.c. */
#ifndef CONVND_PLANNER_H
#define CONVND_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_plan {
    int32_t schedule; /* index in convnd_schedule_table */
    int32_t config;
} convnd_plan;

/* Every function below takes a valid problem whose y_layout is resolved (never AUTO). */

/* The forced spec in effect: opts->schedule, else a non-empty $CONVND_SCHEDULE, else NULL. */
const char *convnd_plan_forced_spec(const convnd_options *opts);

/* Parses "name" or "name:config" (config by name or decimal index). Unknown name or config:
 * CONVND_ERR_INVALID_ARGUMENT with a message listing the valid ones. A schedule (or, without a
 * config, every config of it) that does not support p: CONVND_ERR_UNSUPPORTED with its reason.
 * Without a config, the first supporting config that is worth routing, else the first
 * supporting one. */
convnd_status convnd_plan_forced(const convnd_problem *p, const char *spec, convnd_plan *out);

/* The heuristic: the first (schedule, config) in table order that supports p and is worth
 * routing; else the first that supports p (the universal direct schedule always does). */
convnd_status convnd_plan_heuristic(const convnd_problem *p, convnd_plan *out);

/* The plan without running anything: forced, else (autotune on the GPU) a cached winner, else
 * the heuristic. What convnd_plan_name and convnd_workspace_size report. */
convnd_status convnd_plan_choose(const convnd_problem *p, const convnd_options *opts,
                                 convnd_device device, convnd_plan *out);

/* Workspace bytes of plan on p. */
size_t convnd_plan_workspace(const convnd_problem *p, convnd_plan plan);

/* "schedule:config" */
const char *convnd_plan_schedule_name(convnd_plan plan);
const char *convnd_plan_config_name(convnd_plan plan);

/* ---- autotune (schedules/autotune.c) ------------------------------------------------------- */

/* A hash of every field of the problem (the fields that are read: per-dim arrays up to dims). */
uint64_t convnd_problem_key(const convnd_problem *p);

/* The cached winner for p (in memory, else in cache_file when not NULL). 1 when found. */
int32_t convnd_autotune_lookup(const convnd_problem *p, const char *cache_file, convnd_plan *out);

/* Times every (schedule, config) that supports the problem and fits the given workspace, once
 * after a warm-up, on the GPU with CUDA events and a's buffers (y is overwritten, so the caller
 * must launch the winner afterwards), caches and returns the winner. Only on the GPU; when y is
 * also read (z == y with beta != 0) candidates cannot be run repeatedly, so it returns the
 * heuristic's plan without caching it. */
convnd_status convnd_autotune(const convnd_launch_args *a, const char *cache_file,
                              convnd_plan *out);

/* Largest workspace among the candidates autotune would try (so that it can try them all). */
size_t convnd_autotune_workspace(const convnd_problem *p);

#ifdef __cplusplus
}
#endif

#endif
