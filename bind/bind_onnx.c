/* ONNX front-ends (SPEC section 7): Conv and ConvTranspose with pads, auto_pad, strides,
 * dilations, group, kernel_shape, output_padding and output_shape, as the ONNX operator
 * specification defines them; CausalConvWithState (opset 27) onto the causal conv1d (SPEC §13).
 * ONNX lists never broadcast: one entry per spatial dim. */
#include "bind_common.h"
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <string.h>

static const char *auto_pad_name(convnd_onnx_auto_pad a) {
    switch (a) {
    case CONVND_ONNX_NOTSET:
        return "NOTSET";
    case CONVND_ONNX_VALID:
        return "VALID";
    case CONVND_ONNX_SAME_UPPER:
        return "SAME_UPPER";
    case CONVND_ONNX_SAME_LOWER:
        return "SAME_LOWER";
    }
    return "?";
}

/* What Conv and ConvTranspose share: shapes, list attributes, group, kernel_shape, pads. */
typedef struct onnx_common {
    int32_t dims;
    int64_t strides[CONVND_MAX_DIMS], dilations[CONVND_MAX_DIMS];
    int64_t pads_begin[CONVND_MAX_DIMS], pads_end[CONVND_MAX_DIMS];
    char x_text[CONVND_LIST_TEXT], w_text[CONVND_LIST_TEXT];
} onnx_common;

static convnd_status check_at_least(const char *op, const char *name, const int64_t *v,
                                    int32_t dims, int64_t minimum) {
    for (int32_t t = 0; t < dims; ++t)
        if (v[t] < minimum) {
            char text[CONVND_LIST_TEXT];
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "ONNX %s: %s[%d]=%" PRId64 " must be >= %" PRId64 " (%s=%s)", op,
                                name, (int)t, v[t], minimum, name,
                                convnd_format_ints(text, sizeof text, v, dims));
        }
    return CONVND_OK;
}

static convnd_status bind_onnx_common(const char *op, const convnd_shape *X, const convnd_shape *W,
                                      int64_t bias_len, convnd_onnx_auto_pad auto_pad,
                                      const convnd_ints *dilations, int64_t group,
                                      const convnd_ints *kernel_shape, const convnd_pads *pads,
                                      const convnd_ints *strides, onnx_common *c) {
    convnd_status st;
    if ((st = convnd_bind_check_shape("X", X)) || (st = convnd_bind_check_shape("W", W))) return st;
    convnd_bind_shape_text(c->x_text, X);
    convnd_bind_shape_text(c->w_text, W);
    if (X->rank < 3 || X->rank > CONVND_MAX_RANK)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX %s: X of shape %s must have rank 3 to %d (1 to %d spatial dims)",
                            op, c->x_text, CONVND_MAX_RANK, CONVND_MAX_DIMS);
    if (W->rank != X->rank)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX %s: W of shape %s must have the rank of X of shape %s", op,
                            c->w_text, c->x_text);
    const int32_t dims = c->dims = X->rank - 2;
    if (auto_pad < CONVND_ONNX_NOTSET || auto_pad > CONVND_ONNX_SAME_LOWER)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX %s: auto_pad=%d is not NOTSET, VALID, SAME_UPPER or SAME_LOWER",
                            op, (int)auto_pad);
    if (group < 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "ONNX %s: group=%" PRId64 " must be >= 1",
                            op, group);
    if (bias_len < -1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX %s: bias_len=%" PRId64 " must be -1 (no B) or >= 0", op,
                            bias_len);
    if ((st = convnd_bind_expand("strides", strides, dims, 1, 0, c->strides)) ||
        (st = convnd_bind_expand("dilations", dilations, dims, 1, 0, c->dilations)) ||
        (st = check_at_least(op, "strides", c->strides, dims, 1)) ||
        (st = check_at_least(op, "dilations", c->dilations, dims, 1)))
        return st;
    if (kernel_shape) {
        int64_t k[CONVND_MAX_DIMS];
        if ((st = convnd_bind_expand("kernel_shape", kernel_shape, dims, 1, 0, k))) return st;
        for (int32_t t = 0; t < dims; ++t)
            if (k[t] != W->v[2 + t]) {
                char text[CONVND_LIST_TEXT];
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "ONNX %s: kernel_shape=%s does not match W of shape %s", op,
                                    convnd_bind_ints_text(text, kernel_shape), c->w_text);
            }
    }
    for (int32_t t = 0; t < dims; ++t)
        c->pads_begin[t] = c->pads_end[t] = 0;
    if (pads) {
        char text[CONVND_LIST_TEXT];
        const int32_t shown = pads->len < 0                      ? 0
                              : pads->len > CONVND_PADS_CAPACITY ? CONVND_PADS_CAPACITY
                                                                 : pads->len;
        convnd_format_ints(text, sizeof text, pads->v, shown);
        if (auto_pad != CONVND_ONNX_NOTSET)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "ONNX %s: pads=%s given together with auto_pad=%s; explicit pads "
                                "require auto_pad=NOTSET",
                                op, text, auto_pad_name(auto_pad));
        if (pads->len != 2 * dims)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "ONNX %s: pads=%s has %d entries; expected %d (begin and end of "
                                "each of the %d spatial dims)",
                                op, text, (int)pads->len, (int)(2 * dims), (int)dims);
        for (int32_t i = 0; i < 2 * dims; ++i)
            if (pads->v[i] < 0)
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "ONNX %s: pads[%d]=%" PRId64 " must be >= 0 (pads=%s)", op,
                                    (int)i, pads->v[i], text);
        for (int32_t t = 0; t < dims; ++t) {
            c->pads_begin[t] = pads->v[t];
            c->pads_end[t] = pads->v[t + dims];
        }
    }
    return CONVND_OK;
}

static void fill_geometry(convnd_problem *p, const onnx_common *c, const convnd_shape *X,
                          const convnd_shape *W, int64_t group, int64_t bias_len) {
    p->N = X->v[0];
    p->C_in = X->v[1];
    p->groups = group;
    p->has_bias = bias_len != -1;
    for (int32_t t = 0; t < c->dims; ++t) {
        p->input[t] = X->v[2 + t];
        p->kernel[t] = W->v[2 + t];
        p->stride[t] = c->strides[t];
        p->dilation[t] = c->dilations[t];
    }
}

convnd_status convnd_bind_onnx_conv(const convnd_shape *X, const convnd_shape *W, int64_t bias_len,
                                    convnd_onnx_auto_pad auto_pad, const convnd_ints *dilations,
                                    int64_t group, const convnd_ints *kernel_shape,
                                    const convnd_pads *pads, const convnd_ints *strides,
                                    convnd_problem *out) {
    onnx_common c;
    convnd_status st = bind_onnx_common("Conv", X, W, bias_len, auto_pad, dilations, group,
                                        kernel_shape, pads, strides, &c);
    if (st) return st;
    const int64_t M = W->v[0], C = X->v[1];
    if (M % group != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX Conv: group=%" PRId64 " does not divide M=W[0]=%" PRId64
                            " (W of shape %s)",
                            group, M, c.w_text);
    int64_t expected_C;
    if (convnd_mul_overflows(W->v[1], group, &expected_C) || expected_C != C)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX Conv: X of shape %s has C=%" PRId64
                            " channels but W[1]*group = %" PRId64 "*%" PRId64 " (W of shape %s)",
                            c.x_text, C, W->v[1], group, c.w_text);
    if (bias_len != -1 && bias_len != M)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX Conv: B has %" PRId64 " elements; expected M=W[0]=%" PRId64,
                            bias_len, M);

    convnd_problem p;
    convnd_problem_init(&p, c.dims);
    fill_geometry(&p, &c, X, W, group, bias_len);
    p.C_out = M;
    for (int32_t t = 0; t < c.dims; ++t) {
        if (auto_pad == CONVND_ONNX_SAME_UPPER || auto_pad == CONVND_ONNX_SAME_LOWER) {
            if (p.input[t] < 1 || p.kernel[t] < 1) break; /* convnd_validate names it */
            st = convnd_bind_same_padding(t, p.input[t], p.kernel[t], p.stride[t], p.dilation[t],
                                          auto_pad == CONVND_ONNX_SAME_UPPER, &p.pad_before[t],
                                          &p.pad_after[t]);
            if (st) return st;
        } else {
            p.pad_before[t] = c.pads_begin[t];
            p.pad_after[t] = c.pads_end[t];
        }
    }
    return convnd_bind_finish(&p, out);
}

/* Begin and end padding from an output_shape (ONNX ConvTranspose's equations). */
static convnd_status padding_for_output_shape(int32_t t, int64_t I, int64_t K, int64_t S, int64_t D,
                                              int64_t op, int64_t target,
                                              convnd_onnx_auto_pad auto_pad, int clamp_same,
                                              int64_t *begin, int64_t *end) {
    int64_t E, total;
    convnd_status st = convnd_bind_effective_kernel(t, K, D, &E);
    if (st) return st;
    if (convnd_mul_overflows(S, I - 1, &total) || convnd_add_overflows(total, op, &total) ||
        convnd_add_overflows(total, E, &total) || convnd_sub_overflows(total, target, &total))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "ONNX ConvTranspose: total padding of dim %d overflows int64 "
                            "(input=%" PRId64 ", kernel=%" PRId64 ", stride=%" PRId64
                            ", dilation=%" PRId64 ", output_padding=%" PRId64
                            ", output_shape=%" PRId64 ")",
                            (int)t, I, K, S, D, op, target);
    /* onnxruntime's SAME_*: a negative total (the kernel's extent below the stride) becomes 0,
     * so the output is S(I-1) + output_padding + E instead of the spec's I*S */
    if (clamp_same && auto_pad != CONVND_ONNX_NOTSET && total < 0) total = 0;
    /* floor division, as the ONNX reference implementation (total may be negative) */
    const int64_t half = convnd_floor_div(total, 2);
    if (auto_pad == CONVND_ONNX_SAME_UPPER) {
        *begin = half;
        *end = total - half;
    } else {
        *begin = total - half;
        *end = half;
    }
    return CONVND_OK;
}

/* ConvTranspose as the spec defines it, or (clamp_same) with onnxruntime's SAME_* padding. */
static convnd_status
bind_conv_transpose(const convnd_shape *X, const convnd_shape *W, int64_t bias_len,
                    convnd_onnx_auto_pad auto_pad, const convnd_ints *dilations, int64_t group,
                    const convnd_ints *kernel_shape, const convnd_ints *output_padding,
                    const convnd_ints *output_shape, const convnd_pads *pads,
                    const convnd_ints *strides, int clamp_same, convnd_problem *out) {
    onnx_common c;
    convnd_status st = bind_onnx_common("ConvTranspose", X, W, bias_len, auto_pad, dilations, group,
                                        kernel_shape, pads, strides, &c);
    if (st) return st;
    const int32_t dims = c.dims;
    int64_t op[CONVND_MAX_DIMS], target[CONVND_MAX_DIMS];
    if ((st = convnd_bind_expand("output_padding", output_padding, dims, 0, 0, op)) ||
        (st = check_at_least("ConvTranspose", "output_padding", op, dims, 0)))
        return st;
    if (output_shape &&
        ((st = convnd_bind_expand("output_shape", output_shape, dims, 1, 0, target)) ||
         (st = check_at_least("ConvTranspose", "output_shape", target, dims, 1))))
        return st;

    const int64_t C = X->v[1];
    if (W->v[0] != C)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX ConvTranspose: X of shape %s has C=%" PRId64
                            " channels but W of shape %s expects W[0]=%" PRId64,
                            c.x_text, C, c.w_text, W->v[0]);
    if (C % group != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX ConvTranspose: group=%" PRId64 " does not divide C=%" PRId64
                            " (X of shape %s)",
                            group, C, c.x_text);
    int64_t M;
    if (convnd_mul_overflows(W->v[1], group, &M))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "ONNX ConvTranspose: M = W[1]*group = %" PRId64 "*%" PRId64
                            " overflows int64",
                            W->v[1], group);
    if (bias_len != -1 && bias_len != M)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "ONNX ConvTranspose: B has %" PRId64
                            " elements; expected M=W[1]*group=%" PRId64,
                            bias_len, M);

    convnd_problem p;
    convnd_problem_init(&p, dims);
    fill_geometry(&p, &c, X, W, group, bias_len);
    p.mode = CONVND_TRANSPOSED;
    p.C_out = M;
    const int same = auto_pad == CONVND_ONNX_SAME_UPPER || auto_pad == CONVND_ONNX_SAME_LOWER;
    for (int32_t t = 0; t < dims; ++t) {
        int64_t begin = c.pads_begin[t], end = c.pads_end[t];
        if (output_shape || same) {
            if (p.input[t] < 1 || p.kernel[t] < 1) break; /* convnd_validate names it */
            if (!output_shape && convnd_mul_overflows(p.input[t], p.stride[t], &target[t]))
                return convnd_error(CONVND_ERR_OVERFLOW,
                                    "ONNX ConvTranspose: output_shape[%d] = input*stride = "
                                    "%" PRId64 "*%" PRId64 " overflows int64",
                                    (int)t, p.input[t], p.stride[t]);
            st = padding_for_output_shape(t, p.input[t], p.kernel[t], p.stride[t], p.dilation[t],
                                          op[t], target[t], auto_pad, clamp_same && !output_shape,
                                          &begin, &end);
            if (st) return st;
        }
        p.pad_before[t] = begin;
        if (convnd_sub_overflows(end, op[t], &p.pad_after[t]))
            return convnd_error(CONVND_ERR_OVERFLOW,
                                "ONNX ConvTranspose: pads_end - output_padding overflows int64 "
                                "in dim %d (%" PRId64 " - %" PRId64 ")",
                                (int)t, end, op[t]);
    }
    return convnd_bind_finish(&p, out);
}

convnd_status convnd_bind_onnx_conv_transpose(
    const convnd_shape *X, const convnd_shape *W, int64_t bias_len, convnd_onnx_auto_pad auto_pad,
    const convnd_ints *dilations, int64_t group, const convnd_ints *kernel_shape,
    const convnd_ints *output_padding, const convnd_ints *output_shape, const convnd_pads *pads,
    const convnd_ints *strides, convnd_problem *out) {
    return bind_conv_transpose(X, W, bias_len, auto_pad, dilations, group, kernel_shape,
                               output_padding, output_shape, pads, strides, 0, out);
}

convnd_status convnd_bind_onnx_conv_transpose_ort(
    const convnd_shape *X, const convnd_shape *W, int64_t bias_len, convnd_onnx_auto_pad auto_pad,
    const convnd_ints *dilations, int64_t group, const convnd_ints *kernel_shape,
    const convnd_ints *output_padding, const convnd_ints *output_shape, const convnd_pads *pads,
    const convnd_ints *strides, convnd_problem *out) {
    return bind_conv_transpose(X, W, bias_len, auto_pad, dilations, group, kernel_shape,
                               output_padding, output_shape, pads, strides, 1, out);
}

/* ---- CausalConvWithState (opset 27) --------------------------------------------------------- */

static const char *onnx_type_name(int32_t t) {
    switch (t) {
    case CONVND_ONNX_FLOAT:
        return "FLOAT";
    case CONVND_ONNX_FLOAT16:
        return "FLOAT16";
    case CONVND_ONNX_BFLOAT16:
        return "BFLOAT16";
    case CONVND_ONNX_DOUBLE:
        return "DOUBLE";
    }
    return NULL;
}

convnd_status convnd_bind_onnx_causal_conv_with_state(const convnd_shape *input,
                                                      const convnd_shape *weight, int64_t bias_len,
                                                      const convnd_shape *past_state,
                                                      const char *activation, int32_t elem_type,
                                                      convnd_causal_problem *out) {
    static const char op[] = "ONNX CausalConvWithState";
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "%s: out is NULL", op);
    convnd_status st;
    if ((st = convnd_bind_check_shape("input", input)) ||
        (st = convnd_bind_check_shape("weight", weight)) ||
        (past_state && (st = convnd_bind_check_shape("past_state", past_state))))
        return st;
    char x_text[CONVND_LIST_TEXT], w_text[CONVND_LIST_TEXT], s_text[CONVND_LIST_TEXT];
    convnd_bind_shape_text(x_text, input);
    convnd_bind_shape_text(w_text, weight);
    if (past_state) convnd_bind_shape_text(s_text, past_state);
    convnd_dtype dtype;
    if (elem_type == CONVND_ONNX_FLOAT)
        dtype = CONVND_F32;
    else if (elem_type == CONVND_ONNX_FLOAT16)
        dtype = CONVND_F16;
    else if (elem_type == CONVND_ONNX_BFLOAT16)
        dtype = CONVND_BF16;
    else if (onnx_type_name(elem_type))
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "%s: T=%s is not supported (FLOAT, FLOAT16 or BFLOAT16)", op,
                            onnx_type_name(elem_type));
    else
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "%s: T=%d is not an ONNX type convnd runs (FLOAT=1, FLOAT16=10, "
                            "BFLOAT16=16)",
                            op, (int)elem_type);
    int32_t silu;
    if (!activation || !strcmp(activation, "none"))
        silu = 0;
    else if (!strcmp(activation, "silu") || !strcmp(activation, "swish"))
        silu = 1;
    else
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: activation='%s' must be 'none', 'silu' or 'swish'", op,
                            activation);
    if (input->rank != 3)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: input of shape %s must have rank 3 (batch_size, channels, length)",
                            op, x_text);
    if (weight->rank != 3)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: weight of shape %s must have rank 3 (channels, 1, k)", op, w_text);
    const int64_t B = input->v[0], C = input->v[1], L = input->v[2], k = weight->v[2];
    if (weight->v[0] != C)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: weight of shape %s must have channels=%" PRId64
                            " (input %s) as its first dim",
                            op, w_text, C, x_text);
    if (weight->v[1] != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: weight of shape %s must have 1 as its middle dim (depthwise: "
                            "(channels, 1, k)), got %" PRId64,
                            op, w_text, weight->v[1]);
    if (k < 1 || k > CONVND_CAUSAL_MAX_WIDTH)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: kernel size k=%" PRId64 " (weight %s) must be in 1..%d", op, k,
                            w_text, CONVND_CAUSAL_MAX_WIDTH);
    if (bias_len != -1 && bias_len != C)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: bias has %" PRId64 " elements; expected channels=%" PRId64
                            " (input %s)",
                            op, bias_len, C, x_text);
    if (past_state && (past_state->rank != 3 || past_state->v[0] != B || past_state->v[1] != C ||
                       past_state->v[2] != k - 1))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: past_state of shape %s must be (batch_size, channels, k-1) = "
                            "[%" PRId64 ", %" PRId64 ", %" PRId64 "] (input %s, weight %s)",
                            op, s_text, B, C, k - 1, x_text, w_text);
    convnd_causal_problem p;
    memset(&p, 0, sizeof p);
    p.batch = B;
    p.dim = C;
    p.seqlen = L;
    p.width = (int32_t)k;
    p.dtype = dtype;
    p.layout = CONVND_CAUSAL_BDL;
    p.has_bias = bias_len != -1;
    p.silu = silu;
    *out = p;
    return CONVND_OK;
}
