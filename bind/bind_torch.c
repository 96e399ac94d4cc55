/* PyTorch front-ends (SPEC section 7): conv{1,2,3}d with int, "same" or "valid" padding,
 * conv_transpose{1,2,3}d, torch.convolution / torch._convolution, and causal convolutions in
 * PyTorch layout. Argument rules and messages follow ATen's (aten/src/ATen/native/Convolution.cpp).
 */
#include "bind_common.h"
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef enum torch_padding_kind {
    PADDING_EXPLICIT, /* P0 = padding, P1 = padding - output_padding */
    PADDING_VALID,
    PADDING_SAME,
    PADDING_CAUSAL /* time dim D(K-1)/0, the others `padding`/`padding` */
} torch_padding_kind;

typedef struct torch_call {
    const char *fn; /* the PyTorch function, for messages */
    int32_t dims;   /* 0: taken from the weight's rank */
    int unbatched_ok;
    const convnd_shape *input, *weight;
    int64_t bias_len;
    const convnd_ints *stride, *padding, *dilation, *output_padding;
    torch_padding_kind padding_kind;
    int transposed;
    int64_t groups;
    int allow_tf32;
} torch_call;

static convnd_status check_ranks(const torch_call *c, int32_t *dims, int *batched) {
    char in_text[CONVND_LIST_TEXT], w_text[CONVND_LIST_TEXT];
    const int32_t in_rank = c->input->rank, w_rank = c->weight->rank;
    convnd_bind_shape_text(in_text, c->input);
    convnd_bind_shape_text(w_text, c->weight);
    if (c->dims == 0) { /* torch.convolution: the weight decides, the input must match it */
        if (w_rank < 3 || w_rank > CONVND_MAX_RANK)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "%s: weight of size %s must have 3 to %d dimensions (1 to %d "
                                "spatial)",
                                c->fn, w_text, CONVND_MAX_RANK, CONVND_MAX_DIMS);
        if (in_rank != w_rank)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "Expected %d-dimensional input for %d-dimensional weight %s, but "
                                "got %d-dimensional input of size %s instead",
                                (int)w_rank, (int)w_rank, w_text, (int)in_rank, in_text);
        *dims = w_rank - 2;
        *batched = 1;
        return CONVND_OK;
    }
    if (c->dims < 1 || c->dims > CONVND_MAX_DIMS)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s: dims=%d must be 1, 2 or 3", c->fn,
                            (int)c->dims);
    *dims = c->dims;
    if (in_rank == c->dims + 2) {
        *batched = 1;
    } else if (c->unbatched_ok && in_rank == c->dims + 1) {
        *batched = 0;
    } else {
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "Expected %dD (unbatched) or %dD (batched) input to %s, but got "
                            "input of size: %s",
                            (int)c->dims + 1, (int)c->dims + 2, c->fn, in_text);
    }
    if (w_rank != c->dims + 2)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: weight of size %s must have %d dimensions", c->fn, w_text,
                            (int)c->dims + 2);
    return CONVND_OK;
}

/* ATen's "non-positive stride", "negative padding", ... checks, naming the whole list. */
static convnd_status check_each(const char *what, const char *name, const int64_t *v, int32_t dims,
                                int64_t minimum) {
    for (int32_t t = 0; t < dims; ++t)
        if (v[t] < minimum) {
            char text[CONVND_LIST_TEXT];
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s %s is not supported (%s=%s)", what,
                                name, name, convnd_format_ints(text, sizeof text, v, dims));
        }
    return CONVND_OK;
}

/* Causal padding list: NULL (0), one value for every non-time dim, or dims-1 values. */
static convnd_status expand_causal_padding(const convnd_ints *list, int32_t dims, int64_t out[]) {
    out[0] = 0; /* the time dim: set from the kernel later */
    if (!list || list->len == 0) {
        for (int32_t t = 1; t < dims; ++t)
            out[t] = 0;
        return CONVND_OK;
    }
    if (list->len == 1) {
        for (int32_t t = 1; t < dims; ++t)
            out[t] = list->v[0];
        return CONVND_OK;
    }
    if (list->len == dims - 1) {
        for (int32_t t = 1; t < dims; ++t)
            out[t] = list->v[t - 1];
        return CONVND_OK;
    }
    char text[CONVND_LIST_TEXT];
    return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                        "causal conv%dd: expected padding to be a single integer value or a list "
                        "of %d values for the non-time dims, but got padding=%s",
                        (int)dims, (int)(dims - 1), convnd_bind_ints_text(text, list));
}

static convnd_status check_channels(const torch_call *c, int64_t C_in, int64_t *C_out) {
    char in_text[CONVND_LIST_TEXT], w_text[CONVND_LIST_TEXT];
    convnd_bind_shape_text(in_text, c->input);
    convnd_bind_shape_text(w_text, c->weight);
    const int64_t *w = c->weight->v;
    if (w[0] < c->groups)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "Given groups=%" PRId64 ", expected weight to be at least %" PRId64
                            " at dimension 0, but got weight of size %s instead",
                            c->groups, c->groups, w_text);
    if (w[0] % c->groups != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "Given groups=%" PRId64 ", expected weight to be divisible by %" PRId64
                            " at dimension 0, but got weight of size %s instead",
                            c->groups, c->groups, w_text);
    if (!c->transposed) {
        int64_t expected;
        if (convnd_mul_overflows(w[1], c->groups, &expected) || expected != C_in)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "Given groups=%" PRId64 ", weight of size %s, expected input%s to "
                                "have weight[1]*groups = %" PRId64 "*%" PRId64
                                " channels, but got %" PRId64 " channels instead",
                                c->groups, w_text, in_text, w[1], c->groups, C_in);
        *C_out = w[0];
    } else {
        if (w[0] != C_in)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "Given transposed=1, weight of size %s, expected input%s to have "
                                "%" PRId64 " channels, but got %" PRId64 " channels instead",
                                w_text, in_text, w[0], C_in);
        if (convnd_mul_overflows(w[1], c->groups, C_out))
            return convnd_error(CONVND_ERR_OVERFLOW,
                                "C_out = weight[1]*groups = %" PRId64 "*%" PRId64
                                " overflows int64 (weight of size %s)",
                                w[1], c->groups, w_text);
    }
    if (c->bias_len != -1 && c->bias_len != *C_out)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "Given weight of size %s, expected bias to be 1-dimensional with "
                            "%" PRId64 " elements, but got bias of size [%" PRId64 "] instead",
                            w_text, *C_out, c->bias_len);
    return CONVND_OK;
}

/* The geometry arguments of a call, expanded to dims entries and checked as ATen checks them:
 * stride, dilation, and P0/P1 from the padding kind (the padding rules of every PyTorch
 * front-end, here once: convnd_bind_torch_padding gives them to the Python package). kernel: the
 * weight's spatial sizes. */
typedef struct torch_geometry {
    int64_t stride[CONVND_MAX_DIMS], dilation[CONVND_MAX_DIMS];
    int64_t pad_before[CONVND_MAX_DIMS], pad_after[CONVND_MAX_DIMS];
} torch_geometry;

static convnd_status torch_geometry_of(const torch_call *c, int32_t dims, const int64_t *kernel,
                                       torch_geometry *g) {
    convnd_status st;
    int64_t *stride = g->stride, *dilation = g->dilation, padding[CONVND_MAX_DIMS];
    int64_t output_padding[CONVND_MAX_DIMS] = {0, 0, 0};
    if ((st = convnd_bind_expand("stride", c->stride, dims, 1, 1, stride))) return st;
    if (c->padding_kind == PADDING_EXPLICIT) {
        if ((st = convnd_bind_expand("padding", c->padding, dims, 0, 1, padding))) return st;
    } else if (c->padding_kind == PADDING_CAUSAL) {
        if ((st = expand_causal_padding(c->padding, dims, padding))) return st;
    } else {
        for (int32_t t = 0; t < dims; ++t)
            padding[t] = 0;
    }
    if ((st = convnd_bind_expand("dilation", c->dilation, dims, 1, 1, dilation))) return st;
    if ((st = convnd_bind_expand("output_padding", c->output_padding, dims, 0, 1, output_padding)))
        return st;

    if ((st = check_each("non-positive", "stride", stride, dims, 1)) ||
        (st = check_each("negative", "padding", padding, dims, 0)) ||
        (st = check_each("negative", "output_padding", output_padding, dims, 0)) ||
        (st = check_each("non-positive", "dilation", dilation, dims, 1)))
        return st;
    if (c->padding_kind == PADDING_SAME)
        for (int32_t t = 0; t < dims; ++t)
            if (stride[t] != 1) {
                char text[CONVND_LIST_TEXT];
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "padding='same' is not supported for strided convolutions "
                                    "(stride=%s)",
                                    convnd_format_ints(text, sizeof text, stride, dims));
            }
    if (c->transposed)
        for (int32_t t = 0; t < dims; ++t)
            if (output_padding[t] >= stride[t] && output_padding[t] >= dilation[t])
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "output padding must be smaller than either stride or "
                                    "dilation, but got output_padding[%d]=%" PRId64
                                    " with stride[%d]=%" PRId64 ", dilation[%d]=%" PRId64,
                                    (int)t, output_padding[t], (int)t, stride[t], (int)t,
                                    dilation[t]);
    for (int32_t t = 0; t < dims; ++t) {
        int64_t reach = 0; /* D*(K-1): the padding "same" and causal need */
        if ((c->padding_kind == PADDING_SAME || (c->padding_kind == PADDING_CAUSAL && t == 0)) &&
            kernel[t] >= 1 && convnd_mul_overflows(dilation[t], kernel[t] - 1, &reach))
            return convnd_error(CONVND_ERR_OVERFLOW,
                                "dilation[%d]*(kernel[%d]-1) overflows int64 (kernel=%" PRId64
                                ", dilation=%" PRId64 ")",
                                (int)t, (int)t, kernel[t], dilation[t]);
        switch (c->padding_kind) {
        case PADDING_EXPLICIT:
            g->pad_before[t] = padding[t];
            g->pad_after[t] = padding[t] - (c->transposed ? output_padding[t] : 0);
            break;
        case PADDING_VALID:
            g->pad_before[t] = g->pad_after[t] = 0;
            break;
        case PADDING_SAME: /* the odd unit goes after, as ATen pads it */
            g->pad_before[t] = reach / 2;
            g->pad_after[t] = reach - reach / 2;
            break;
        case PADDING_CAUSAL:
            g->pad_before[t] = t == 0 ? reach : padding[t];
            g->pad_after[t] = t == 0 ? 0 : padding[t];
            break;
        }
    }
    return CONVND_OK;
}

static convnd_status bind_torch(const torch_call *c, convnd_problem *out) {
    convnd_status st;
    if ((st = convnd_bind_check_shape("input", c->input)) ||
        (st = convnd_bind_check_shape("weight", c->weight)))
        return st;
    int32_t dims = 0;
    int batched = 0;
    if ((st = check_ranks(c, &dims, &batched))) return st;
    torch_geometry g;
    if ((st = torch_geometry_of(c, dims, c->weight->v + 2, &g))) return st;
    if (c->groups < 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "non-positive groups is not supported (groups=%" PRId64 ")", c->groups);
    if (c->bias_len < -1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "bias_len=%" PRId64 " must be -1 (no bias) or >= 0", c->bias_len);

    const int64_t *in = c->input->v;
    const int64_t N = batched ? in[0] : 1;
    const int64_t C_in = batched ? in[1] : in[0];
    const int64_t *spatial = in + (batched ? 2 : 1);
    int64_t C_out = 0;
    if ((st = check_channels(c, C_in, &C_out))) return st;

    convnd_problem p;
    convnd_problem_init(&p, dims);
    p.mode = c->transposed ? CONVND_TRANSPOSED : CONVND_FORWARD;
    p.N = N;
    p.C_in = C_in;
    p.C_out = C_out;
    p.groups = c->groups;
    p.has_bias = c->bias_len != -1;
    p.math = c->allow_tf32 ? CONVND_MATH_ALLOW_TF32 : CONVND_MATH_DEFAULT;
    for (int32_t t = 0; t < dims; ++t) {
        p.input[t] = spatial[t];
        p.kernel[t] = c->weight->v[2 + t];
        p.stride[t] = g.stride[t];
        p.dilation[t] = g.dilation[t];
        p.pad_before[t] = g.pad_before[t];
        p.pad_after[t] = g.pad_after[t];
    }
    return convnd_bind_finish(&p, out);
}

convnd_status convnd_bind_torch_geometry(convnd_torch_padding_rule rule, const convnd_shape *weight,
                                         const convnd_ints *stride, const convnd_ints *padding,
                                         const convnd_ints *dilation,
                                         const convnd_ints *output_padding,
                                         convnd_torch_geometry *out) {
    convnd_status st;
    if ((st = convnd_bind_check_shape("weight", weight))) return st;
    if (weight->rank < 3 || weight->rank > CONVND_MAX_RANK)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "weight has rank %d; expected 3 to %d (1 to %d spatial dims)",
                            (int)weight->rank, CONVND_MAX_RANK, CONVND_MAX_DIMS);
    static const torch_padding_kind kinds[] = {PADDING_EXPLICIT, PADDING_VALID, PADDING_SAME,
                                               PADDING_CAUSAL, PADDING_EXPLICIT};
    if ((int)rule < 0 || (int)rule > CONVND_TORCH_RULE_TRANSPOSED)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "rule=%d is not a convnd_torch_padding_rule (0 explicit, 1 valid, "
                            "2 same, 3 causal, 4 transposed)",
                            (int)rule);
    if (rule != CONVND_TORCH_RULE_TRANSPOSED && output_padding && output_padding->len > 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "output_padding is given for a rule other than transposed (rule=%d)",
                            (int)rule);
    const int32_t dims = weight->rank - 2;
    const torch_call c = {.fn = "torch padding",
                          .dims = dims,
                          .weight = weight,
                          .stride = stride,
                          .padding = padding,
                          .dilation = dilation,
                          .output_padding = output_padding,
                          .padding_kind = kinds[rule],
                          .transposed = rule == CONVND_TORCH_RULE_TRANSPOSED};
    torch_geometry g;
    if ((st = torch_geometry_of(&c, dims, weight->v + 2, &g))) return st;
    convnd_torch_geometry r;
    memset(&r, 0, sizeof r);
    r.dims = dims;
    for (int32_t t = 0; t < dims; ++t) {
        r.stride[t] = g.stride[t];
        r.dilation[t] = g.dilation[t];
        r.pad_before[t] = g.pad_before[t];
        r.pad_after[t] = g.pad_after[t];
    }
    *out = r;
    return CONVND_OK;
}

static const char *conv_name(const char *base, int32_t dims, char *buf, size_t len) {
    if (dims >= 1 && dims <= CONVND_MAX_DIMS)
        snprintf(buf, len, "%s%dd", base, (int)dims);
    else
        snprintf(buf, len, "%s", base);
    return buf;
}

/* conv{1,2,3}d and the causal conv: the same call, with their padding kind. */
static convnd_status bind_torch_conv_nd(const char *base, int32_t dims, const convnd_shape *input,
                                        const convnd_shape *weight, int64_t bias_len,
                                        const convnd_ints *stride, const convnd_ints *padding,
                                        torch_padding_kind kind, const convnd_ints *dilation,
                                        int64_t groups, convnd_problem *out) {
    char name[32];
    const torch_call c = {.fn = conv_name(base, dims, name, sizeof name),
                          .dims = dims,
                          .unbatched_ok = 1,
                          .input = input,
                          .weight = weight,
                          .bias_len = bias_len,
                          .stride = stride,
                          .padding = padding,
                          .dilation = dilation,
                          .padding_kind = kind,
                          .groups = groups};
    return bind_torch(&c, out);
}

convnd_status convnd_bind_torch_conv(int32_t dims, const convnd_shape *input,
                                     const convnd_shape *weight, int64_t bias_len,
                                     const convnd_ints *stride, const convnd_ints *padding,
                                     const convnd_ints *dilation, int64_t groups,
                                     convnd_problem *out) {
    return bind_torch_conv_nd("conv", dims, input, weight, bias_len, stride, padding,
                              PADDING_EXPLICIT, dilation, groups, out);
}

convnd_status convnd_bind_torch_conv_padding_mode(int32_t dims, const convnd_shape *input,
                                                  const convnd_shape *weight, int64_t bias_len,
                                                  const convnd_ints *stride,
                                                  convnd_torch_padding padding,
                                                  const convnd_ints *dilation, int64_t groups,
                                                  convnd_problem *out) {
    if (padding != CONVND_TORCH_PADDING_VALID && padding != CONVND_TORCH_PADDING_SAME)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "padding=%d is not a convnd_torch_padding (0 'valid', 1 'same')",
                            (int)padding);
    return bind_torch_conv_nd("conv", dims, input, weight, bias_len, stride, NULL,
                              padding == CONVND_TORCH_PADDING_SAME ? PADDING_SAME : PADDING_VALID,
                              dilation, groups, out);
}

convnd_status convnd_bind_torch_conv_transpose(int32_t dims, const convnd_shape *input,
                                               const convnd_shape *weight, int64_t bias_len,
                                               const convnd_ints *stride,
                                               const convnd_ints *padding,
                                               const convnd_ints *output_padding, int64_t groups,
                                               const convnd_ints *dilation, convnd_problem *out) {
    char name[32];
    const torch_call c = {.fn = conv_name("conv_transpose", dims, name, sizeof name),
                          .dims = dims,
                          .unbatched_ok = 1,
                          .input = input,
                          .weight = weight,
                          .bias_len = bias_len,
                          .stride = stride,
                          .padding = padding,
                          .dilation = dilation,
                          .output_padding = output_padding,
                          .padding_kind = PADDING_EXPLICIT,
                          .transposed = 1,
                          .groups = groups};
    return bind_torch(&c, out);
}

/* torch.convolution and torch._convolution: the weight's rank gives the dims. */
static convnd_status bind_torch_convolution(const char *fn, const convnd_shape *input,
                                            const convnd_shape *weight, int64_t bias_len,
                                            const convnd_ints *stride, const convnd_ints *padding,
                                            const convnd_ints *dilation, int32_t transposed,
                                            const convnd_ints *output_padding, int64_t groups,
                                            int32_t allow_tf32, convnd_problem *out) {
    const torch_call c = {.fn = fn,
                          .dims = 0,
                          .input = input,
                          .weight = weight,
                          .bias_len = bias_len,
                          .stride = stride,
                          .padding = padding,
                          .dilation = dilation,
                          .output_padding = output_padding,
                          .padding_kind = PADDING_EXPLICIT,
                          .transposed = transposed != 0,
                          .groups = groups,
                          .allow_tf32 = allow_tf32 != 0};
    return bind_torch(&c, out);
}

convnd_status convnd_bind_torch__convolution(const convnd_shape *input, const convnd_shape *weight,
                                             int64_t bias_len, const convnd_ints *stride,
                                             const convnd_ints *padding,
                                             const convnd_ints *dilation, int32_t transposed,
                                             const convnd_ints *output_padding, int64_t groups,
                                             int32_t allow_tf32, convnd_problem *out) {
    return bind_torch_convolution("_convolution", input, weight, bias_len, stride, padding,
                                  dilation, transposed, output_padding, groups, allow_tf32, out);
}

convnd_status convnd_bind_torch_convolution(const convnd_shape *input, const convnd_shape *weight,
                                            int64_t bias_len, const convnd_ints *stride,
                                            const convnd_ints *padding, const convnd_ints *dilation,
                                            int32_t transposed, const convnd_ints *output_padding,
                                            int64_t groups, convnd_problem *out) {
    return bind_torch_convolution("convolution", input, weight, bias_len, stride, padding, dilation,
                                  transposed, output_padding, groups, 0, out);
}

convnd_status convnd_bind_causal_conv(int32_t dims, const convnd_shape *input,
                                      const convnd_shape *weight, int64_t bias_len,
                                      const convnd_ints *stride, const convnd_ints *padding,
                                      const convnd_ints *dilation, int64_t groups,
                                      convnd_problem *out) {
    return bind_torch_conv_nd("causal conv", dims, input, weight, bias_len, stride, padding,
                              PADDING_CAUSAL, dilation, groups, out);
}
