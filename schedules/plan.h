/* The plan object (convnd.h "plans"): everything conv_nd derives from a problem, computed once.
 * conv_nd builds one on its stack; convnd_plan_create on the heap. */
#ifndef CONVND_PLAN_H
#define CONVND_PLAN_H

#include "planner.h"
#include "problem_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct convnd_plan {
    convnd_resolved resolved; /* the problem (y_layout resolved), its sizes, its launch params */
    convnd_choice choice;
    convnd_choice_source source;
    const convnd_schedule *schedule;
    size_t workspace_bytes;
    convnd_device device;
};

/* Validates p into plan->resolved (convnd_resolve): the one validation of a call; every
 * schedule question after it reuses it. Zeroes the rest. */
convnd_status convnd_plan_prepare(convnd_plan_t *plan, const convnd_problem *p);

/* Chooses the schedule of a prepared plan and sets its workspace. tune: buffers to time
 * candidates on when autotune runs, or NULL (then a cached winner or the heuristic). */
convnd_status convnd_plan_choose(convnd_plan_t *plan, const convnd_options *opts,
                                 const convnd_tune_buffers *tune);

/* The workspace check and the launch; the caller has checked the pointers. */
convnd_status convnd_plan_launch(const convnd_plan_t *plan, const convnd_io *io, void *workspace,
                                 size_t workspace_bytes, void *stream);

/* "schedule:config", with " (why it was chosen)" when with_reason, into buf; a buf too small is
 * CONVND_ERR_INVALID_ARGUMENT naming len_name (the caller's parameter) and the bytes needed. */
convnd_status convnd_plan_text(const convnd_plan_t *plan, int32_t with_reason, char *buf,
                               size_t len, const char *len_name);

#ifdef __cplusplus
}
#endif

#endif
