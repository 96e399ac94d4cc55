/* The schedule registry: every schedule's entry and lookups by name.
 *
 * Adding a schedule: define `const convnd_schedule convnd_schedule_NAME` in schedules/NAME.c,
 * declare it below, and list it in registry.c's table at its planner priority. Dispatch, the
 * planner, the benchmark and the forced-schedule tests all pick it up from the table. */
#ifndef CONVND_REGISTRY_H
#define CONVND_REGISTRY_H

#include <stddef.h>
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the entries (one line per schedule) --------------------------------------------------- */
extern const convnd_schedule convnd_schedule_hopper_igemm;
extern const convnd_schedule convnd_schedule_igemm_tc;
extern const convnd_schedule convnd_schedule_igemm_simt;
extern const convnd_schedule convnd_schedule_direct;
extern const convnd_schedule convnd_schedule_depthwise;
extern const convnd_schedule convnd_schedule_grouped;
extern const convnd_schedule convnd_schedule_tiled_direct;
extern const convnd_schedule convnd_schedule_cublas_im2col;
extern const convnd_schedule convnd_schedule_convT_tc;
extern const convnd_schedule convnd_schedule_convT_simt;
extern const convnd_schedule convnd_schedule_wgrad_depthwise;
extern const convnd_schedule convnd_schedule_wgrad_igemm_tc;
extern const convnd_schedule convnd_schedule_wgrad_igemm_simt;
extern const convnd_schedule convnd_schedule_wgrad_splitk;
extern const convnd_schedule convnd_schedule_wgrad_direct;

/* ---- lookups -------------------------------------------------------------------------------- */

/* A (schedule, configuration) pair: indices into convnd_schedule_table and its configs. */
typedef struct convnd_choice {
    int32_t schedule;
    int32_t config;
} convnd_choice;

/* The one parser of "name" or "name:config" (config by name or decimal index): *schedule and
 * *config (-1 when the spec names no config). Unknown name or config: CONVND_ERR_INVALID_ARGUMENT
 * with a message listing the valid ones. */
convnd_status convnd_parse_spec(const char *spec, int32_t *schedule, int32_t *config);

/* The one candidate loop: calls visit(choice, ctx) for each (schedule, config) that supports p,
 * in planner order (only schedule only_schedule when it is >= 0), until visit returns nonzero.
 * Returns that nonzero value, or 0 when the loop ran out. The reason the first candidate
 * refused goes to first_reason when it is not NULL. p is valid with y_layout resolved; params are
 * its launch parameters (convnd_params_from_sizes), computed once by the caller. */
typedef int32_t (*convnd_candidate_visit)(convnd_choice choice, void *ctx);
int32_t convnd_for_each_candidate(const convnd_problem *p, const convnd_conv_params *params,
                                  int32_t only_schedule, convnd_candidate_visit visit, void *ctx,
                                  char *first_reason, size_t first_reason_len);

/* Workspace bytes of choice on the problem of these launch parameters (0 when the schedule
 * takes none). */
size_t convnd_choice_workspace(const convnd_conv_params *params, convnd_choice choice);

/* Index in convnd_schedule_table of the schedule named by the first name_len chars of name, or
 * -1 when there is none. */
int32_t convnd_schedule_find(const char *name, size_t name_len);
/* Config index of s named `config` (its name, or its index in decimal), or -1. */
int32_t convnd_schedule_find_config(const convnd_schedule *s, const char *config);
/* "depthwise, grouped, ..., direct" (truncated to buf_len) for error messages. */
void convnd_schedule_list_names(char *buf, size_t buf_len);
/* "t128, t256" for s, likewise. */
void convnd_schedule_list_configs(const convnd_schedule *s, char *buf, size_t buf_len);

/* The README's schedule table, in planner order, as Markdown (one row per schedule: name, its
 * sources, its summary): the number of characters it takes (without the NUL), written when it
 * fits buf_len (tests/test_docs_spec.c keeps README.md's copy equal; convnd-bench
 * --list-markdown prints it). */
size_t convnd_schedule_table_markdown(char *buf, size_t buf_len);

/* Resolves y_layout AUTO to the SPEC's default (channels-last when x or w is): what every
 * supports/worth_routing/workspace_size/launch sees. */
void convnd_problem_resolve_layout(const convnd_problem *p, convnd_problem *out);

#ifdef __cplusplus
}
#endif

#endif
