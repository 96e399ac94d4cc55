/* conv_nd and its companions: validate, plan, check the workspace, launch. Every check happens
 * before the launch, so on any error nothing is written to y. */
#include <stdio.h>
#include <string.h>

#include "planner.h"
#include "problem_internal.h"
#include "registry.h"
#include "error.h"

/* Validates p and resolves its y layout. */
static convnd_status prepare(const convnd_problem *p, convnd_problem *resolved) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    const convnd_status st = convnd_validate(p);
    if (st != CONVND_OK) return st;
    convnd_problem_resolve_layout(p, resolved);
    return CONVND_OK;
}

convnd_status convnd_workspace_size(const convnd_problem *p, const convnd_options *opts,
                                    size_t *bytes) {
    if (!bytes) return convnd_error(CONVND_ERR_NULL_POINTER, "bytes is NULL");
    convnd_problem q;
    convnd_status st = prepare(p, &q);
    if (st != CONVND_OK) return st;
    const convnd_device device = convnd_active_device();
    convnd_plan plan;
    /* autotune on the GPU without a cached winner: room for every candidate it will time */
    if (device == CONVND_DEVICE_GPU && opts && opts->autotune && !convnd_plan_forced_spec(opts) &&
        !convnd_autotune_lookup(&q, opts->autotune_cache_file, &plan)) {
        *bytes = convnd_autotune_workspace(&q);
        return CONVND_OK;
    }
    st = convnd_plan_choose(&q, opts, device, &plan);
    if (st != CONVND_OK) return st;
    *bytes = convnd_plan_workspace(&q, plan);
    return CONVND_OK;
}

convnd_status convnd_plan_name(const convnd_problem *p, const convnd_options *opts, char *buf,
                               size_t buf_len) {
    if (!buf || buf_len == 0)
        return convnd_error(CONVND_ERR_NULL_POINTER, "buf is NULL or buf_len is 0");
    buf[0] = '\0';
    convnd_problem q;
    convnd_status st = prepare(p, &q);
    if (st != CONVND_OK) return st;
    convnd_plan plan;
    st = convnd_plan_choose(&q, opts, convnd_active_device(), &plan);
    if (st != CONVND_OK) return st;
    const int n = snprintf(buf, buf_len, "%s:%s", convnd_plan_schedule_name(plan),
                           convnd_plan_config_name(plan));
    if (n < 0 || (size_t)n >= buf_len) {
        buf[0] = '\0';
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "buf_len=%zu is too small for the plan name (%d bytes needed)", buf_len,
                            n + 1);
    }
    return CONVND_OK;
}

convnd_status conv_nd(const convnd_problem *p, const void *x, const void *w, const void *bias,
                      const void *z, void *y, void *workspace, size_t workspace_bytes, void *stream,
                      const convnd_options *opts) {
    convnd_problem q;
    convnd_status st = prepare(p, &q);
    if (st != CONVND_OK) return st;
    st = convnd_check_call(p, x, w, bias, z, y);
    if (st != CONVND_OK) return st;

    convnd_launch_args a;
    memset(&a, 0, sizeof a);
    st = convnd_params_from_problem(&q, &a.params);
    if (st != CONVND_OK) return st;
    a.problem = &q;
    a.x = x;
    a.w = w;
    a.bias = q.has_bias ? bias : NULL;
    a.z = q.has_z ? z : NULL;
    a.y = y;
    a.workspace = workspace;
    a.workspace_bytes = workspace ? workspace_bytes : 0;
    a.stream = stream;
    a.device = convnd_active_device();

    /* forced, else cached autotune winner, else heuristic: errors here come before any write */
    convnd_plan plan;
    st = convnd_plan_choose(&q, opts, a.device, &plan);
    if (st != CONVND_OK) return st;
    const size_t need = convnd_plan_workspace(&q, plan);
    if (need > a.workspace_bytes) {
        if (!workspace)
            return convnd_error(CONVND_ERR_WORKSPACE,
                                "workspace: schedule '%s:%s' needs %zu bytes, but workspace is "
                                "NULL (workspace_bytes=%zu)",
                                convnd_plan_schedule_name(plan), convnd_plan_config_name(plan),
                                need, workspace_bytes);
        return convnd_error(
            CONVND_ERR_WORKSPACE, "workspace: schedule '%s:%s' needs %zu bytes, given %zu",
            convnd_plan_schedule_name(plan), convnd_plan_config_name(plan), need, workspace_bytes);
    }
    st = convnd_check_workspace(&q, x, w, bias, z, y, workspace, workspace_bytes);
    if (st != CONVND_OK) return st;
    if (a.params.y_numel == 0) return CONVND_OK; /* zero-size batch or channels: nothing to do */

    /* autotune times candidates on the GPU (writing y), then the winner runs for real below */
    if (a.device == CONVND_DEVICE_GPU && opts && opts->autotune && !convnd_plan_forced_spec(opts)) {
        st = convnd_autotune(&a, opts->autotune_cache_file, &plan);
        if (st != CONVND_OK) return st;
    }
    a.config = plan.config;
    return convnd_schedule_table[plan.schedule]->launch(&a);
}
