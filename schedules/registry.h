/* The schedule registry: every schedule's entry and lookups by name.
 *
 * Adding a schedule: a folder families/NAME/ with its kernel file (NAME.cu, CONVND_DEFINE_LAUNCHER)
 * and its host file (NAME.c: CONVND_KERNEL(NAME) and CONVND_SCHEDULE_ENTRY), and one line in
 * CONVND_SCHEDULES below at its planner priority (docs/schedules.md; tests/add_schedule.sh
 * does it with a throwaway schedule). Dispatch, the planner, the
 * benchmark, the README's table and the forced-schedule tests all pick it up from the table. */
#ifndef CONVND_REGISTRY_H
#define CONVND_REGISTRY_H

#include <stddef.h>
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the table (one line per schedule, in planner priority order) --------------------------
 * The planner takes the first (schedule, config) that supports the problem and is worth routing
 * (schedules/planner.c; `convnd-bench --why` prints each verdict). Specialised schedules go
 * above; the universal direct schedule stays last, as the fallback. X(NAME) names the entry
 * `const convnd_schedule convnd_schedule_NAME` that its family's host file defines; this list
 * declares it and registry.c's table lists it. */
#define CONVND_SCHEDULES(X)                                                                        \
    X(causal_conv1d)    /* SPEC §13's stateful causal conv1d, and only that */                    \
    X(depthwise)        /* groups == C_in (the implicit GEMM declines them) */                     \
    X(grouped)          /* few channels per group */                                               \
    X(tiled_direct)     /* stems: C_in <= 8 */                                                     \
    X(hopper_igemm)     /* sm_90: wgmma + TMA (routed on a CC 9.0 GPU only) */                     \
    X(igemm_tc)         /* forward implicit GEMM, tensor cores */                                  \
    X(igemm_simt)       /* the same, CUDA cores */                                                 \
    X(convT_tc)         /* transposed: phase-decomposed implicit GEMM */                           \
    X(convT_simt)       /* the same, CUDA cores */                                                 \
    X(wgrad_depthwise)  /* wgrad: one input channel per group */                                   \
    X(wgrad_vec_tc)     /* wgrad: GEMM-shaped, channels-last 16-byte chunks, f16/bf16 */           \
    X(wgrad_igemm_tc)   /* wgrad: GEMM-shaped, f16/bf16 (TF32 when allowed) */                     \
    X(wgrad_igemm_simt) /* wgrad: GEMM-shaped, exact f32 */                                        \
    X(wgrad_splitk)     /* wgrad: few dw elements, long reduction */                               \
    X(wgrad_direct)     /* wgrad: the fallback */                                                  \
    X(cublas_im2col)    /* never worth routing: a reference, forced only */                        \
    X(direct)           /* the universal fallback */

#define CONVND_DECLARE_SCHEDULE(name) extern const convnd_schedule convnd_schedule_##name;
CONVND_SCHEDULES(CONVND_DECLARE_SCHEDULE)
#undef CONVND_DECLARE_SCHEDULE

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
 * its launch parameters (convnd_resolve), computed once by the caller. */
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

#ifdef __cplusplus
}
#endif

#endif
