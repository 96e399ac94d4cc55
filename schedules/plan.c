/* convnd_plan_*: validate, choose and precompute once at creation; execute = pointer checks and
 * a launch. A plan is never written after creation, so executing it from many threads is safe. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "plan.h"

convnd_status convnd_plan_prepare(convnd_plan_t *plan, const convnd_problem *p) {
    memset(plan, 0, sizeof *plan);
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    plan->device = convnd_active_device();
    return convnd_resolve(p, &plan->resolved);
}

convnd_status convnd_plan_choose(convnd_plan_t *plan, const convnd_options *opts,
                                 const convnd_tune_buffers *tune) {
    const convnd_status st = convnd_choose(&plan->resolved.problem, &plan->resolved.params, opts,
                                           plan->device, tune, &plan->choice, &plan->source);
    if (st != CONVND_OK) return st;
    plan->schedule = convnd_schedule_table[plan->choice.schedule];
    plan->workspace_bytes = convnd_choice_workspace(&plan->resolved.params, plan->choice);
    return CONVND_OK;
}

convnd_status convnd_plan_launch(const convnd_plan_t *plan, const convnd_io *io, void *workspace,
                                 size_t workspace_bytes, void *stream) {
    const size_t given = workspace ? workspace_bytes : 0;
    const char *name = plan->schedule->name;
    const char *config = plan->schedule->config_names[plan->choice.config];
    if (plan->workspace_bytes > given && !workspace)
        return convnd_error(CONVND_ERR_WORKSPACE,
                            "workspace: schedule '%s:%s' needs %zu bytes, but workspace is NULL "
                            "(workspace_bytes=%zu)",
                            name, config, plan->workspace_bytes, workspace_bytes);
    if (plan->workspace_bytes > given)
        return convnd_error(CONVND_ERR_WORKSPACE,
                            "workspace: schedule '%s:%s' needs %zu bytes, given %zu", name, config,
                            plan->workspace_bytes, workspace_bytes);
    const convnd_status st = convnd_check_workspace(&plan->resolved.problem, &plan->resolved.sizes,
                                                    io, workspace, workspace_bytes);
    if (st != CONVND_OK) return st;
    /* zero-size batch or channels: nothing to do (wgrad still writes dw = beta*z when N == 0;
     * a state is written even when C_out == 0) */
    const convnd_problem *p = &plan->resolved.problem;
    const convnd_sequences *seqs = &p->sequences; /* SPEC §13: states pass through with no token */
    if ((p->mode == CONVND_WGRAD ? plan->resolved.params.w_numel : plan->resolved.params.y_numel) ==
            0 &&
        plan->resolved.params.state_numel == 0 && seqs->kind == CONVND_SEQS_NONE)
        return CONVND_OK;
    const convnd_launch_args a = {
        .params = plan->resolved.params,
        .x = io->x,
        .w = io->w,
        .bias = plan->resolved.problem.has_bias ? io->bias : NULL,
        .z = plan->resolved.problem.has_z ? io->z : NULL,
        .y = io->y,
        .x_prefix = p->prefix_size > 0 || seqs->initial_states ? io->x_prefix : NULL,
        .x_suffix = p->suffix_size > 0 ? io->x_suffix : NULL,
        .state = p->state_size > 0 || seqs->final_states || seqs->kind == CONVND_SEQS_UPDATE
                     ? io->state
                     : NULL,
        .seq_idx = io->seq_idx,
        .query_start_loc = io->query_start_loc,
        .cache_seqlens = io->cache_seqlens,
        .state_indices = io->state_indices,
        .pro_r = plan->resolved.sizes.pro_r_numel > 0 ? io->pro_r : NULL,
        .pro_a = plan->resolved.sizes.pro_a_numel > 0 ? io->pro_a : NULL,
        .pro_b = plan->resolved.sizes.pro_b_numel > 0 ? io->pro_b : NULL,
        .workspace = workspace,
        .workspace_bytes = given,
        .stream = stream,
        .config = plan->choice.config,
        .device = plan->device,
    };
    return plan->schedule->launch(&a);
}

/* ---- autotune scratch: x | w | bias | z | y | workspace, each 256-byte aligned -------------- */

enum { SCRATCH_ALIGN = 256 };

static size_t round_up(size_t n) {
    return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

/* The operand sizes (x, w, bias, z, y) of a validated problem, in bytes. */
static void operand_bytes(const convnd_problem *p, const convnd_problem_sizes *s, size_t out[5]) {
    const size_t e = (size_t)s->elem_bytes;
    out[0] = (size_t)s->x_numel * e;
    out[1] = (size_t)s->w_numel * e;
    out[2] = p->has_bias ? (size_t)s->bias_numel * e : 0;
    out[3] = p->has_z ? (size_t)s->y_numel * e : 0;
    out[4] = (size_t)s->y_numel * e;
}

/* 1 when creating a plan for p with opts will time candidates. */
static int32_t will_time(const convnd_plan_t *plan, const convnd_options *opts) {
    convnd_choice cached;
    return convnd_wants_autotune(&plan->resolved.problem, opts, convnd_active_device()) &&
           !convnd_autotune_lookup(&plan->resolved.problem, &plan->resolved.params,
                                   opts->autotune_cache_file, &cached);
}

static size_t scratch_bytes(const convnd_plan_t *plan) {
    size_t b[5], total = 0;
    operand_bytes(&plan->resolved.problem, &plan->resolved.sizes, b);
    for (int i = 0; i < 5; ++i)
        total += round_up(b[i]);
    return total + convnd_autotune_workspace(&plan->resolved.problem, &plan->resolved.params);
}

convnd_status convnd_plan_autotune_scratch_size(const convnd_problem *p, const convnd_options *opts,
                                                size_t *bytes) {
    if (!bytes) return convnd_error(CONVND_ERR_NULL_POINTER, "bytes is NULL");
    convnd_plan_t plan;
    const convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    *bytes = will_time(&plan, opts) ? scratch_bytes(&plan) : 0;
    return CONVND_OK;
}

/* Carves the tuning buffers out of opts->autotune_scratch (zeroed, so timings see no NaNs). */
static convnd_status scratch_buffers(const convnd_plan_t *plan, const convnd_options *opts,
                                     convnd_tune_buffers *b) {
    const size_t need = scratch_bytes(plan);
    if (!opts->autotune_scratch || opts->autotune_scratch_bytes < need)
        return convnd_error(CONVND_ERR_WORKSPACE,
                            "autotune=1: opts->autotune_scratch must hold %zu bytes "
                            "(convnd_plan_autotune_scratch_size), given %zu (%s)",
                            need, opts->autotune_scratch_bytes,
                            opts->autotune_scratch ? "non-NULL" : "NULL");
    const convnd_status st = convnd_memset(opts->autotune_scratch, 0, need);
    if (st != CONVND_OK) return st;
    size_t sizes[5];
    operand_bytes(&plan->resolved.problem, &plan->resolved.sizes, sizes);
    unsigned char *at = opts->autotune_scratch;
    void *parts[5];
    for (int i = 0; i < 5; ++i) {
        parts[i] = at;
        at += round_up(sizes[i]);
    }
    *b = (convnd_tune_buffers){.x = parts[0],
                               .w = parts[1],
                               .bias = parts[2],
                               .z = parts[3],
                               .y = parts[4],
                               .workspace = at,
                               .workspace_bytes =
                                   need - (size_t)(at - (unsigned char *)opts->autotune_scratch)};
    return CONVND_OK;
}

/* ---- the public API -------------------------------------------------------------------------- */

convnd_status convnd_plan_create(convnd_plan_t **plan, const convnd_problem *p,
                                 const convnd_options *opts) {
    if (!plan) return convnd_error(CONVND_ERR_NULL_POINTER, "plan is NULL");
    *plan = NULL;
    convnd_plan_t *made = malloc(sizeof *made);
    if (!made) return convnd_error(CONVND_ERR_OUT_OF_MEMORY, "convnd_plan_create: out of memory");
    convnd_status st = convnd_plan_prepare(made, p);
    convnd_tune_buffers tune, *tune_on = NULL;
    if (st == CONVND_OK && will_time(made, opts)) {
        st = scratch_buffers(made, opts, &tune);
        tune_on = &tune;
    }
    if (st == CONVND_OK) st = convnd_plan_choose(made, opts, tune_on);
    if (st != CONVND_OK) {
        free(made);
        return st;
    }
    *plan = made;
    return CONVND_OK;
}

convnd_status convnd_plan_execute_io(const convnd_plan_t *plan, const convnd_io *io,
                                     void *workspace, size_t workspace_bytes, void *stream) {
    if (!plan || !io)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s is NULL", !plan ? "plan" : "io");
    const convnd_status st = convnd_check_io(&plan->resolved.problem, &plan->resolved.sizes, io);
    if (st != CONVND_OK) return st;
    return convnd_plan_launch(plan, io, workspace, workspace_bytes, stream);
}

convnd_status convnd_plan_execute(const convnd_plan_t *plan, const void *x, const void *w,
                                  const void *bias, const void *z, void *y, void *workspace,
                                  size_t workspace_bytes, void *stream) {
    const convnd_io io = {.x = x, .w = w, .bias = bias, .z = z, .y = y};
    return convnd_plan_execute_io(plan, &io, workspace, workspace_bytes, stream);
}

convnd_status convnd_plan_workspace_size(const convnd_plan_t *plan, size_t *bytes) {
    if (!plan || !bytes)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s is NULL", !plan ? "plan" : "bytes");
    *bytes = plan->workspace_bytes;
    return CONVND_OK;
}

static const char *source_text(convnd_choice_source source) {
    switch (source) {
    case CONVND_CHOSEN_FORCED_OPTION:
        return "forced by convnd_options.schedule";
    case CONVND_CHOSEN_FORCED_ENV:
        return "forced by $CONVND_SCHEDULE";
    case CONVND_CHOSEN_AUTOTUNE_CACHE:
        return "autotune: cached winner";
    case CONVND_CHOSEN_AUTOTUNE_TIMED:
        return "autotune: fastest of the candidates timed at plan creation";
    case CONVND_CHOSEN_HEURISTIC_ROUTED:
        return "planner: first schedule in priority order that supports it and is worth routing";
    case CONVND_CHOSEN_HEURISTIC_FALLBACK:
        return "planner: none worth routing, first that supports it";
    }
    return "?";
}

convnd_status convnd_plan_text(const convnd_plan_t *plan, int32_t with_reason, char *buf,
                               size_t len, const char *len_name) {
    const char *what = with_reason ? "plan description" : "plan name";
    const int n =
        snprintf(buf, len, "%s:%s%s%s%s", plan->schedule->name,
                 plan->schedule->config_names[plan->choice.config], with_reason ? " (" : "",
                 with_reason ? source_text(plan->source) : "", with_reason ? ")" : "");
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s=%zu is too small for the %s (%d bytes needed)", len_name, len, what,
                            n + 1);
    }
    return CONVND_OK;
}

convnd_status convnd_plan_describe(const convnd_plan_t *plan, char *buf, size_t len) {
    if (!plan || !buf || len == 0)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s",
                            !plan ? "plan is NULL" : "buf is NULL or len is 0");
    return convnd_plan_text(plan, 1, buf, len, "len");
}

convnd_status convnd_plan_tensor_describe(const convnd_plan_t *plan, convnd_tensor which,
                                          convnd_tensor_desc *out) {
    if (!plan || !out)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s",
                            !plan ? "plan is NULL" : "tensor description is NULL");
    return convnd_tensor_describe_checked(&plan->resolved.problem, &plan->resolved.sizes, which,
                                          out);
}

convnd_status convnd_plan_output_size(const convnd_plan_t *plan, int64_t out[CONVND_MAX_DIMS]) {
    if (!plan || !out)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s",
                            !plan ? "plan is NULL" : "output size array is NULL");
    for (int t = 0; t < CONVND_MAX_DIMS; ++t)
        out[t] = t < plan->resolved.problem.dims ? plan->resolved.sizes.out[t] : 0;
    return CONVND_OK;
}

void convnd_plan_destroy(convnd_plan_t *plan) {
    free(plan);
}
