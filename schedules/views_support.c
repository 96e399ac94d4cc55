/* Views and prefix/state against what a schedule's kernels read (views_support.h). */
#include "views_support.h"

#include <inttypes.h>

#include "problem_internal.h"
#include "refuse.h"

int32_t convnd_schedule_reads_ok(const convnd_schedule *s, const convnd_problem *p,
                                 const convnd_conv_params *params, char *reason,
                                 size_t reason_len) {
    if (params->io_dim >= 0 && !(s->reads & CONVND_READS_PREFIX_STATE))
        return convnd_refuse(
            reason, reason_len,
            "schedule '%s' reads no prefix or suffix and writes no state (prefix_size=%" PRId64
            ", suffix_size=%" PRId64 ", state_size=%" PRId64 "; 'direct' does)",
            s->name, p->prefix_size, p->suffix_size, p->state_size);
    /* SPEC §13: a stateful causal conv1d's sequences and states are read by its own schedule */
    if ((params->sequences.kind != CONVND_SEQS_NONE) != ((s->reads & CONVND_READS_SEQUENCES) != 0))
        return convnd_refuse(reason, reason_len,
                             params->sequences.kind != CONVND_SEQS_NONE
                                 ? "schedule '%s' runs no stateful causal conv1d (SPEC §13: "
                                   "problem.sequences; 'causal_conv1d' does)"
                                 : "schedule '%s' runs stateful causal conv1d problems only "
                                   "(SPEC §13: problem.sequences)",
                             s->name);
    if (params->prologue.num_steps > 0 && !(s->reads & CONVND_READS_PROLOGUE))
        return convnd_refuse(reason, reason_len,
                             "schedule '%s' applies no input prologue (SPEC §15: "
                             "prologue.num_steps=%d; 'direct' does)",
                             s->name, (int)params->prologue.num_steps);
    /* a view that addresses its tensor as the packed layout does is no view */
    if (!params->strided || (s->reads & CONVND_READS_VIEWS)) return 1;
    const int32_t xy_views = (s->reads & CONVND_READS_XY_VIEWS) != 0;
    if (xy_views && !(params->strided & CONVND_STRIDED_Z)) return 1;
    /* the tensor to name: z when only its own strides are in the way */
    const int32_t x = !xy_views && (params->strided & CONVND_STRIDED_X),
                  y = !xy_views && (params->strided & CONVND_STRIDED_Y);
    const int64_t *padded = x ? params->xs : y ? params->ys : params->zs;
    /* the logical strides [N, C, spatial...] from the kernels' padded 5-entry form */
    int64_t strides[CONVND_MAX_RANK];
    strides[0] = padded[0];
    strides[1] = padded[1];
    for (int32_t t = 0; t < p->dims; ++t)
        strides[2 + t] = padded[2 + 3 - p->dims + t];
    char text[160];
    if (xy_views)
        return convnd_refuse(reason, reason_len,
                             "schedule '%s' reads z through y's strides only: z has strides %s, "
                             "y's differ (a view of its own, SPEC §11)",
                             s->name, convnd_format_ints(text, sizeof text, strides, p->dims + 2));
    return convnd_refuse(reason, reason_len,
                         "schedule '%s' reads packed tensors only: %s has strides %s, not its "
                         "packed layout's (a view, SPEC §11)",
                         s->name,
                         x   ? "x"
                         : y ? (p->mode == CONVND_WGRAD ? "dy" : "y")
                             : "z",
                         convnd_format_ints(text, sizeof text, strides, p->dims + 2));
}
