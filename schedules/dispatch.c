/* conv_nd and its companions: a one-shot plan on the stack (validate once, choose, launch).
 * Every check happens before the launch, so on any error nothing is written to y. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "plan.h"

enum { Y_SCRATCH_ALIGN = 256 };

/* conv_nd's autotune times on the caller's operands and a scratch y at the end of its
 * workspace: y's bytes, aligned, on top of what the candidates need. */
static size_t y_scratch_bytes(const convnd_problem_sizes *s) {
    return (size_t)(s->y_numel * s->elem_bytes) + Y_SCRATCH_ALIGN;
}

convnd_status convnd_workspace_size(const convnd_problem *p, const convnd_options *opts,
                                    size_t *bytes) {
    if (!bytes) return convnd_error(CONVND_ERR_NULL_POINTER, "bytes is NULL");
    convnd_plan_t plan;
    convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    convnd_choice cached;
    /* autotune without a cached winner: room for every candidate it will time, and its y */
    if (convnd_wants_autotune(&plan.resolved.problem, opts, convnd_active_device()) &&
        !convnd_autotune_lookup(&plan.resolved.problem, &plan.resolved.params,
                                opts->autotune_cache_file, &cached)) {
        *bytes = convnd_autotune_workspace(&plan.resolved.problem, &plan.resolved.params) +
                 y_scratch_bytes(&plan.resolved.sizes);
        return CONVND_OK;
    }
    st = convnd_plan_choose(&plan, opts, NULL);
    if (st != CONVND_OK) return st;
    *bytes = plan.workspace_bytes;
    return CONVND_OK;
}

convnd_status convnd_plan_name(const convnd_problem *p, const convnd_options *opts, char *buf,
                               size_t buf_len) {
    if (!buf || buf_len == 0)
        return convnd_error(CONVND_ERR_NULL_POINTER, "buf is NULL or buf_len is 0");
    buf[0] = '\0';
    convnd_plan_t plan;
    convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    st = convnd_plan_choose(&plan, opts, NULL);
    if (st != CONVND_OK) return st;
    return convnd_plan_text(&plan, 0, buf, buf_len, "buf_len");
}

convnd_status conv_nd(const convnd_problem *p, const void *x, const void *w, const void *bias,
                      const void *z, void *y, void *workspace, size_t workspace_bytes, void *stream,
                      const convnd_options *opts) {
    convnd_plan_t plan;
    convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    const convnd_io io = {.x = x, .w = w, .bias = bias, .z = z, .y = y};
    st = convnd_check_io(&plan.resolved.problem, &plan.resolved.sizes, &io);
    if (st != CONVND_OK) return st;

    /* autotune: time on the caller's operands, writing only a scratch y from the workspace's
     * end (never the caller's y); without room for it, no timing */
    convnd_tune_buffers tune, *tune_on = NULL;
    const size_t y_room = y_scratch_bytes(&plan.resolved.sizes);
    if (convnd_wants_autotune(&plan.resolved.problem, opts, convnd_active_device()) &&
        plan.resolved.sizes.y_numel > 0 && workspace && workspace_bytes >= y_room) {
        const uintptr_t end = (uintptr_t)workspace + workspace_bytes - (y_room - Y_SCRATCH_ALIGN);
        unsigned char *y_scratch = (unsigned char *)(end / Y_SCRATCH_ALIGN * Y_SCRATCH_ALIGN);
        tune = (convnd_tune_buffers){x,
                                     w,
                                     bias,
                                     z,
                                     y_scratch,
                                     workspace,
                                     (size_t)(y_scratch - (unsigned char *)workspace),
                                     stream};
        tune_on = &tune;
    }
    st = convnd_plan_choose(&plan, opts, tune_on);
    if (st != CONVND_OK) return st;
    return convnd_plan_launch(&plan, &io, workspace, workspace_bytes, stream);
}
