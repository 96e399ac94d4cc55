/* Which schedules may run a problem with views or a prefix/state (SPEC §11-§12): the ones whose
 * registry entry says their kernels read them; every other one declines with a reason, and the
 * planner falls back. */
#ifndef CONVND_VIEWS_SUPPORT_H
#define CONVND_VIEWS_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

/* 1 when s's kernels address everything p (with its launch parameters) needs; else 0 and a
 * reason naming the tensor. */
int32_t convnd_schedule_reads_ok(const convnd_schedule *s, const convnd_problem *p,
                                 const convnd_conv_params *params, char *reason, size_t reason_len);

#endif
