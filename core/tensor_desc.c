/* Shapes and strides of x, w, bias, y and z for a problem's layouts (SPEC sections 1 and 6). */
#include "error.h"
#include "problem_internal.h"

#include <string.h>

void convnd_layout_strides(const int64_t *shape, int32_t rank, convnd_layout layout,
                           int64_t *strides) {
    /* Memory order, outermost first: all dims in order, or dim 1 moved innermost. */
    int32_t order[CONVND_MAX_RANK];
    int32_t n = 0;
    const int channels_last = layout == CONVND_CHANNELS_LAST && rank > 2;
    for (int32_t i = 0; i < rank; ++i)
        if (!(channels_last && i == 1)) order[n++] = i;
    if (channels_last) order[n++] = 1;
    int64_t step = 1;
    for (int32_t j = rank - 1; j >= 0; --j) {
        strides[order[j]] = step;
        step *= shape[order[j]] > 0 ? shape[order[j]] : 1;
    }
}

convnd_status convnd_tensor_describe(const convnd_problem *p, convnd_tensor which,
                                     convnd_tensor_desc *out) {
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "tensor description is NULL");
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    return convnd_tensor_describe_checked(p, &s, which, out);
}

/* SPEC §15: the prologue's f32 operands, packed: r [N, I...] over x's own positions, a and b
 * [C_in] or [N, C_in]. */
static convnd_status describe_prologue_operand(const convnd_problem *p,
                                               const convnd_problem_sizes *s, convnd_tensor which,
                                               convnd_tensor_desc *out) {
    const char *name = which == CONVND_PRO_R ? "pro_r" : which == CONVND_PRO_A ? "pro_a" : "pro_b";
    const int32_t bit = which == CONVND_PRO_R   ? CONVND_PRO_READS_R
                        : which == CONVND_PRO_A ? CONVND_PRO_READS_A
                                                : CONVND_PRO_READS_B;
    if (!(convnd_prologue_operands(&p->prologue) & bit))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "tensor=%s: no step of the problem's prologue reads it "
                            "(prologue.num_steps=%d)",
                            name, (int)p->prologue.num_steps);
    convnd_tensor_desc d;
    memset(&d, 0, sizeof d);
    if (which == CONVND_PRO_R) {
        d.rank = p->dims + 1;
        d.shape[0] = p->N;
        memcpy(d.shape + 1, p->input, sizeof(int64_t) * (size_t)p->dims);
        d.numel = s->pro_r_numel;
    } else if (p->prologue.ab_per_sample) {
        d.rank = 2;
        d.shape[0] = p->N;
        d.shape[1] = p->C_in;
        d.numel = which == CONVND_PRO_A ? s->pro_a_numel : s->pro_b_numel;
    } else {
        d.rank = 1;
        d.shape[0] = p->C_in;
        d.numel = which == CONVND_PRO_A ? s->pro_a_numel : s->pro_b_numel;
    }
    d.layout = CONVND_CHANNELS_FIRST;
    convnd_layout_strides(d.shape, d.rank, d.layout, d.strides);
    d.bytes = d.numel * (int64_t)sizeof(float);
    *out = d;
    return CONVND_OK;
}

convnd_status convnd_tensor_describe_checked(const convnd_problem *p,
                                             const convnd_problem_sizes *sizes, convnd_tensor which,
                                             convnd_tensor_desc *out) {
    const convnd_problem_sizes s = *sizes;
    convnd_tensor_desc d;
    memset(&d, 0, sizeof d);
    const int32_t dims = p->dims;
    const size_t spatial_bytes = sizeof(int64_t) * (size_t)dims;
    const int forward = p->mode != CONVND_TRANSPOSED;
    /* WGRAD: z is dw_prev, the output's shape and layout */
    if (which == CONVND_Z && p->mode == CONVND_WGRAD) which = CONVND_W;
    const int64_t *view_strides = NULL; /* x, y and z: their resolved strides (SPEC §11) */
    int64_t span = -1;                  /* elements from the base: numel unless a view says */
    switch (which) {
    case CONVND_X:
    case CONVND_X_PREFIX:
    case CONVND_X_SUFFIX:
    case CONVND_STATE:
        d.rank = dims + 2;
        d.shape[0] = p->N;
        d.shape[1] = p->C_in;
        memcpy(d.shape + 2, p->input, spatial_bytes);
        d.numel = s.x_numel;
        d.layout = p->x_layout;
        if (which == CONVND_X) {
            view_strides = s.xs;
            span = s.x_span;
            break;
        }
        if (!convnd_has_io_axis(p))
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "tensor=%s: the problem has no prefix, suffix or state "
                                "(prefix_size=0, suffix_size=0, state_size=0)",
                                which == CONVND_STATE      ? "state"
                                : which == CONVND_X_PREFIX ? "x_prefix"
                                                           : "x_suffix");
        /* SPEC §12/§14: x's shape with io_axis's size replaced, packed in x's layout (the
         * state) or as the prefix's and suffix's views say */
        d.shape[2 + p->io_axis] = which == CONVND_STATE      ? p->state_size
                                  : which == CONVND_X_PREFIX ? p->prefix_size
                                                             : p->suffix_size;
        d.numel = which == CONVND_STATE      ? s.state_numel
                  : which == CONVND_X_PREFIX ? s.prefix_numel
                                             : s.suffix_numel;
        if (which != CONVND_STATE) {
            view_strides = which == CONVND_X_PREFIX ? s.ps : s.fs;
            span = which == CONVND_X_PREFIX ? s.prefix_span : s.suffix_span;
        }
        break;
    case CONVND_W:
        d.rank = dims + 2;
        d.shape[0] = forward ? p->C_out : p->C_in;
        d.shape[1] = (forward ? p->C_in : p->C_out) / p->groups;
        memcpy(d.shape + 2, p->kernel, spatial_bytes);
        d.numel = s.w_numel;
        d.layout = p->w_layout;
        break;
    case CONVND_BIAS:
        d.rank = 1;
        d.shape[0] = p->C_out;
        d.numel = s.bias_numel;
        d.layout = CONVND_CHANNELS_FIRST;
        break;
    case CONVND_Y:
    case CONVND_Z:
        d.rank = dims + 2;
        d.shape[0] = p->N;
        d.shape[1] = p->C_out;
        memcpy(d.shape + 2, s.out, spatial_bytes);
        d.numel = s.y_numel;
        d.layout = s.y_layout;
        view_strides = which == CONVND_Y ? s.ys : s.zs;
        span = which == CONVND_Y ? s.y_span : p->has_z ? s.z_span : s.y_span;
        break;
    case CONVND_PRO_R:
    case CONVND_PRO_A:
    case CONVND_PRO_B:
        return describe_prologue_operand(p, sizes, which, out);
    default:
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "tensor=%d is not a convnd_tensor (0 x, 1 w, 2 bias, 3 y, 4 z, "
                            "5 x_prefix, 6 state, 7 x_suffix, 8 pro_r, 9 pro_a, 10 pro_b)",
                            (int)which);
    }
    convnd_layout_strides(d.shape, d.rank, d.layout, d.strides);
    if (view_strides) memcpy(d.strides, view_strides, sizeof(int64_t) * (size_t)d.rank);
    /* checked by convnd_problem_check */
    d.bytes = (span >= 0 ? span : d.numel) * s.elem_bytes;
    *out = d;
    return CONVND_OK;
}
