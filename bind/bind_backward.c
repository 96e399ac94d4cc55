/* Backward bindings (SPEC §10): the data gradient as a transposed (or forward) problem and the
 * weight gradient as a wgrad-mode problem, both derived from the forward or transposed problem
 * whose gradients they are. */
#include "checked_math.h"
#include "convnd_shape_rule.h"
#include "error.h"
#include "problem_internal.h"

#include "convnd_bind.h"

#include <string.h>

/* Validates p (forward or transposed only) and returns its resolved y layout. */
static convnd_status backward_source(const convnd_problem *p, const char *what, void *out,
                                     convnd_layout *y_layout) {
    if (!p || !out)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s: %s is NULL", what, p ? "out" : "problem");
    convnd_problem_sizes s;
    const convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    if (p->mode == CONVND_WGRAD)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: mode=wgrad has no gradient here (give the forward or transposed "
                            "problem)",
                            what);
    if (convnd_has_io_axis(p))
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "%s: a prefix or state (prefix_size=%lld, state_size=%lld) has no "
                            "gradient binding yet",
                            what, (long long)p->prefix_size, (long long)p->state_size);
    *y_layout = s.y_layout;
    return CONVND_OK;
}

/* The adjoint problem's common part: channels swapped, epilogue reset, packed tensors (its
 * tensors are other ones than p's: the caller sets their views, SPEC §11). */
static convnd_problem adjoint_base(const convnd_problem *p) {
    convnd_problem q = *p;
    memset(&q.x_view, 0, sizeof q.x_view);
    memset(&q.y_view, 0, sizeof q.y_view);
    memset(&q.z_view, 0, sizeof q.z_view);
    q.C_in = p->C_out;
    q.C_out = p->C_in;
    q.has_bias = 0;
    q.has_z = 0;
    q.alpha = 1.0f;
    q.beta = 0.0f;
    q.activation = CONVND_ACT_NONE;
    return q;
}

/* Sets q's input to p's output size (p validated). */
static void input_from_output(const convnd_problem *p, convnd_problem *q) {
    int64_t out[CONVND_MAX_DIMS];
    (void)convnd_output_size(p, out); /* p is valid */
    for (int t = 0; t < p->dims; ++t)
        q->input[t] = out[t];
}

convnd_status convnd_bind_dgrad(const convnd_problem *p, convnd_problem *out) {
    convnd_layout y_layout = CONVND_CHANNELS_FIRST;
    convnd_status st = backward_source(p, "convnd_bind_dgrad", out, &y_layout);
    if (st) return st;
    convnd_problem q = adjoint_base(p);
    input_from_output(p, &q);
    q.x_layout = y_layout;    /* dy */
    q.y_layout = p->x_layout; /* dx */
    if (p->mode == CONVND_FORWARD) {
        q.mode = CONVND_TRANSPOSED;
        for (int t = 0; t < p->dims; ++t) { /* SPEC §4: lands exactly on I */
            const int64_t E = CONVND_EFFECTIVE_KERNEL(p->kernel[t], p->dilation[t]);
            q.pad_after[t] = CONVND_DGRAD_PAD_AFTER(p->input[t], q.input[t], E, p->stride[t],
                                                    p->pad_before[t]);
        }
    } else {
        q.mode = CONVND_FORWARD; /* O back to I exactly: same S, D, P0, P1 */
    }
    if ((st = convnd_validate(&q))) return st;
    *out = q;
    return CONVND_OK;
}

convnd_status convnd_bind_wgrad(const convnd_problem *p, convnd_problem *out,
                                int32_t *swap_operands) {
    convnd_layout y_layout = CONVND_CHANNELS_FIRST;
    convnd_status st = backward_source(p, "convnd_bind_wgrad", out, &y_layout);
    if (st) return st;
    convnd_problem q;
    if (p->mode == CONVND_FORWARD) {
        q = adjoint_base(p);
        q.C_in = p->C_in;
        q.C_out = p->C_out;
        q.y_layout = y_layout; /* dy */
    } else {
        if (!swap_operands)
            return convnd_error(CONVND_ERR_NULL_POINTER,
                                "convnd_bind_wgrad: swap_operands is NULL for a transposed "
                                "problem (its x and dy trade places)");
        q = adjoint_base(p); /* the forward conv from O to I: x <- dy_T, dy <- x_T */
        input_from_output(p, &q);
        q.x_layout = y_layout;
        q.y_layout = p->x_layout;
    }
    q.mode = CONVND_WGRAD;
    if ((st = convnd_validate(&q))) return st;
    if (swap_operands) *swap_operands = p->mode == CONVND_TRANSPOSED;
    *out = q;
    return CONVND_OK;
}
