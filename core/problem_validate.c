/* The canonical problem: defaults, and validation of every SPEC section 8 rule that a problem
 * alone can break, with checked int64 arithmetic so that absurd sizes are rejected, never
 * wrapped. */
#include "checked_math.h"
#include "convnd_shape_rule.h"
#include "counters.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void convnd_problem_init(convnd_problem *p, int32_t dims) {
    memset(p, 0, sizeof *p);
    p->dims = dims;
    p->mode = CONVND_FORWARD;
    p->N = 1;
    p->groups = 1;
    for (int t = 0; t < CONVND_MAX_DIMS; ++t) {
        p->stride[t] = 1;
        p->dilation[t] = 1;
    }
    p->dtype = CONVND_F32;
    p->x_layout = CONVND_CHANNELS_FIRST;
    p->w_layout = CONVND_CHANNELS_FIRST;
    p->y_layout = CONVND_LAYOUT_AUTO;
    p->alpha = 1.0f;
    p->beta = 0.0f;
    p->activation = CONVND_ACT_NONE;
    p->math = CONVND_MATH_DEFAULT;
}

int64_t convnd_dtype_bytes(convnd_dtype dtype) {
    switch (dtype) {
    case CONVND_F32:
        return 4;
    case CONVND_F16:
    case CONVND_BF16:
        return 2;
    }
    return 0;
}

convnd_layout convnd_default_output_layout(convnd_layout x_layout, convnd_layout w_layout) {
    return (x_layout == CONVND_CHANNELS_LAST || w_layout == CONVND_CHANNELS_LAST)
               ? CONVND_CHANNELS_LAST
               : CONVND_CHANNELS_FIRST;
}

static convnd_status check_enums(const convnd_problem *p) {
    if (p->mode != CONVND_FORWARD && p->mode != CONVND_TRANSPOSED && p->mode != CONVND_WGRAD)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "mode=%d is not a convnd_mode (0 forward, 1 transposed, 2 wgrad)",
                            (int)p->mode);
    if (convnd_dtype_bytes(p->dtype) == 0)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "dtype=%d is not supported (0 f32, 1 f16, 2 bf16)", (int)p->dtype);
    const struct {
        const char *name;
        convnd_layout value;
    } layouts[] = {{"x_layout", p->x_layout}, {"w_layout", p->w_layout}};
    for (int i = 0; i < 2; ++i)
        if (layouts[i].value != CONVND_CHANNELS_FIRST && layouts[i].value != CONVND_CHANNELS_LAST)
            return convnd_error(CONVND_ERR_UNSUPPORTED,
                                "%s=%d is not supported (0 channels-first, 1 channels-last; "
                                "auto is for y only)",
                                layouts[i].name, (int)layouts[i].value);
    if (p->y_layout != CONVND_CHANNELS_FIRST && p->y_layout != CONVND_CHANNELS_LAST &&
        p->y_layout != CONVND_LAYOUT_AUTO)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "y_layout=%d is not supported (0 channels-first, 1 channels-last, "
                            "2 auto)",
                            (int)p->y_layout);
    if (p->activation < CONVND_ACT_NONE || p->activation > CONVND_ACT_GELU)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "activation=%d is not a convnd_activation (0 none, 1 relu, 2 silu, "
                            "3 gelu)",
                            (int)p->activation);
    if (p->math != CONVND_MATH_DEFAULT && p->math != CONVND_MATH_ALLOW_TF32)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "math=%d is not a convnd_math (0 default, 1 allow TF32)", (int)p->math);
    return CONVND_OK;
}

static convnd_status check_counts_and_groups(const convnd_problem *p) {
    const struct {
        const char *name;
        int64_t value;
    } counts[] = {{"N", p->N}, {"C_in", p->C_in}, {"C_out", p->C_out}};
    for (int i = 0; i < 3; ++i)
        if (counts[i].value < 0)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s=%" PRId64 " must be >= 0",
                                counts[i].name, counts[i].value);
    if (p->groups < 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "groups=%" PRId64 " must be >= 1",
                            p->groups);
    if (p->C_in % p->groups != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "groups=%" PRId64 " does not divide C_in=%" PRId64, p->groups, p->C_in);
    if (p->C_out % p->groups != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "groups=%" PRId64 " does not divide C_out=%" PRId64, p->groups,
                            p->C_out);
    return CONVND_OK;
}

static convnd_status check_spatial_params(const convnd_problem *p) {
    for (int t = 0; t < p->dims; ++t) {
        const struct {
            const char *name;
            int64_t value;
        } params[] = {{"input", p->input[t]},
                      {"kernel", p->kernel[t]},
                      {"stride", p->stride[t]},
                      {"dilation", p->dilation[t]}};
        /* SPEC §13: a stateful causal conv1d may run no token (its states still pass through) */
        const int64_t least_input = p->sequences.kind != CONVND_SEQS_NONE ? 0 : 1;
        for (int i = 0; i < 4; ++i)
            if (params[i].value < (i == 0 ? least_input : 1))
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s[%d]=%" PRId64 " must be >= 1",
                                    params[i].name, t, params[i].value);
    }
    return CONVND_OK;
}

/* Output size of dim t over the input size I the conv reads (SPEC sections 2, 3 and 12); every
 * intermediate is checked. */
static convnd_status output_size_of_dim(const convnd_problem *p, int t, int64_t I, int64_t *out) {
    const int64_t K = p->kernel[t], S = p->stride[t], D = p->dilation[t];
    const int64_t P0 = p->pad_before[t], P1 = p->pad_after[t];
    int64_t E, O;
    if (convnd_mul_overflows(D, K - 1, &E) || convnd_add_overflows(E, 1, &E))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "effective kernel dilation[%d]*(kernel[%d]-1)+1 overflows int64 "
                            "(kernel=%" PRId64 ", dilation=%" PRId64 ")",
                            t, t, K, D);
    E = CONVND_EFFECTIVE_KERNEL(K, D);
    int overflow;
    const int forward_geometry = p->mode != CONVND_TRANSPOSED; /* WGRAD: the forward's O */
    /* the checks evaluate the rule's own terms in its order; then the rule itself */
    if (forward_geometry) {
        int64_t span;
        overflow = convnd_add_overflows(I, P0, &span) || convnd_add_overflows(span, P1, &span) ||
                   convnd_sub_overflows(span, E, &span);
        if (!overflow) O = CONVND_FORWARD_OUTPUT(I, E, S, P0, P1, convnd_floor_div);
    } else {
        overflow = convnd_mul_overflows(I - 1, S, &O) || convnd_add_overflows(O, E, &O) ||
                   convnd_sub_overflows(O, P0, &O) || convnd_sub_overflows(O, P1, &O);
        if (!overflow) O = CONVND_TRANSPOSED_OUTPUT(I, E, S, P0, P1);
    }
    if (overflow)
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "%s output size O[%d] overflows int64 (input=%" PRId64
                            ", kernel=%" PRId64 ", dilation=%" PRId64 ", stride=%" PRId64
                            ", pad %" PRId64 "/%" PRId64 ")",
                            convnd_mode_name(p->mode), t, I, K, D, S, P0, P1);
    if (O < 1 && !(O == 0 && I == 0 && p->sequences.kind != CONVND_SEQS_NONE))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s output size O[%d]=%" PRId64 " < 1 (input=%" PRId64
                            ", kernel=%" PRId64 ", dilation=%" PRId64 ", stride=%" PRId64
                            ", pad %" PRId64 "/%" PRId64 ")",
                            convnd_mode_name(p->mode), t, O, I, K, D, S, P0, P1);
    /* The input position every tap reads must fit int64 too, with its partial sums: forward
     * o*S - P0 + k*D runs from -P0 to (O-1)*S - P0 + (E-1); transposed o + P0 - k*D from
     * P0 - (E-1) to (O-1) + P0. Only paddings near the int64 limits get here. */
    int64_t lo, hi;
    if (forward_geometry)
        overflow = convnd_sub_overflows(0, P0, &lo) || convnd_mul_overflows(O - 1, S, &hi) ||
                   convnd_sub_overflows(hi, P0, &hi) || convnd_add_overflows(hi, E - 1, &hi);
    else
        overflow = convnd_sub_overflows(P0, E - 1, &lo) || convnd_add_overflows(O - 1, P0, &hi);
    if (overflow)
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "%s input positions of dim %d overflow int64 (input=%" PRId64
                            ", kernel=%" PRId64 ", dilation=%" PRId64 ", stride=%" PRId64
                            ", pad %" PRId64 "/%" PRId64 ", output %" PRId64 ")",
                            convnd_mode_name(p->mode), t, I, K, D, S, P0, P1, O);
    *out = O;
    return CONVND_OK;
}

/* Element count of a tensor, and a guarantee that its bytes, strides and offsets fit int64:
 * the product is taken with size-0 dims counted as 1, so a tensor with a zero batch still
 * cannot have strides that overflow. */
static convnd_status count_tensor(const char *name, const int64_t *shape, int32_t rank,
                                  int64_t elem_bytes, int64_t *numel) {
    int64_t extent = 1, count = 1, bytes;
    int overflow = 0;
    for (int32_t i = 0; i < rank && !overflow; ++i) {
        overflow = convnd_mul_overflows(extent, shape[i] > 0 ? shape[i] : 1, &extent);
        count = shape[i] == 0 ? 0 : count;
    }
    if (overflow || convnd_mul_overflows(extent, elem_bytes, &bytes)) {
        char dims[160];
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "%s of shape %s has more elements or bytes than int64 can count", name,
                            convnd_format_ints(dims, sizeof dims, shape, rank));
    }
    *numel = count ? extent : 0;
    return CONVND_OK;
}

static convnd_status check_tensor_counts(const convnd_problem *p, convnd_problem_sizes *s) {
    const int d = p->dims;
    int64_t shape[CONVND_MAX_RANK];
    convnd_status st;

    shape[0] = p->N;
    shape[1] = p->C_in;
    memcpy(shape + 2, p->input, sizeof(int64_t) * (size_t)d);
    if ((st = count_tensor("x", shape, d + 2, s->elem_bytes, &s->x_numel))) return st;

    const int forward = p->mode != CONVND_TRANSPOSED; /* WGRAD's dw has w's forward shape */
    shape[0] = forward ? p->C_out : p->C_in;
    shape[1] = (forward ? p->C_in : p->C_out) / p->groups;
    memcpy(shape + 2, p->kernel, sizeof(int64_t) * (size_t)d);
    if ((st = count_tensor("w", shape, d + 2, s->elem_bytes, &s->w_numel))) return st;

    if ((st = count_tensor("bias", &p->C_out, 1, s->elem_bytes, &s->bias_numel))) return st;

    s->prefix_numel = s->suffix_numel = s->state_numel = 0;
    if (convnd_has_io_axis(p)) { /* SPEC §12: x's shape with io_axis's size replaced */
        shape[0] = p->N;
        shape[1] = p->C_in;
        memcpy(shape + 2, p->input, sizeof(int64_t) * (size_t)d);
        shape[2 + p->io_axis] = p->prefix_size;
        if ((st = count_tensor("x_prefix", shape, d + 2, s->elem_bytes, &s->prefix_numel)))
            return st;
        shape[2 + p->io_axis] = p->suffix_size; /* SPEC §14 */
        if ((st = count_tensor("x_suffix", shape, d + 2, s->elem_bytes, &s->suffix_numel)))
            return st;
        shape[2 + p->io_axis] = p->state_size;
        if ((st = count_tensor("state", shape, d + 2, s->elem_bytes, &s->state_numel))) return st;
    }

    shape[0] = p->N;
    shape[1] = p->C_out;
    memcpy(shape + 2, s->out, sizeof(int64_t) * (size_t)d);
    return count_tensor("y", shape, d + 2, s->elem_bytes, &s->y_numel);
}

static convnd_status check_epilogue(const convnd_problem *p) {
    if (p->has_bias != 0 && p->has_bias != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "has_bias=%d must be 0 or 1",
                            (int)p->has_bias);
    if (p->has_z != 0 && p->has_z != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "has_z=%d must be 0 or 1", (int)p->has_z);
    if (!isfinite(p->alpha))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "alpha=%g must be finite",
                            (double)p->alpha);
    if (!isfinite(p->beta))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "beta=%g must be finite", (double)p->beta);
    if (p->mode == CONVND_WGRAD && p->has_bias)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "has_bias=1 is not allowed in wgrad mode (dw = alpha*acc + beta*z)");
    if (p->mode == CONVND_WGRAD && p->activation != CONVND_ACT_NONE)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "activation=%s is not allowed in wgrad mode (dw = alpha*acc + beta*z)",
                            convnd_activation_name(p->activation));
    if (p->beta != 0.0f && !p->has_z)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "beta=%g requires a residual z (has_z=0)",
                            (double)p->beta);
    return CONVND_OK;
}

convnd_status convnd_problem_check(const convnd_problem *p, convnd_problem_sizes *s) {
    convnd_count_validation();
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (p->dims < 1 || p->dims > CONVND_MAX_DIMS)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "dims=%d must be 1, 2 or 3", (int)p->dims);
    convnd_status st;
    if ((st = check_enums(p)) || (st = check_counts_and_groups(p)) ||
        (st = check_spatial_params(p)) || (st = convnd_check_sequences(p)))
        return st;
    if ((st = convnd_check_io_axis(p, s))) return st;
    for (int t = 0; t < CONVND_MAX_DIMS; ++t)
        s->out[t] = 1;
    for (int t = 0; t < p->dims; ++t)
        if ((st = output_size_of_dim(p, t, s->in[t], &s->out[t]))) return st;
    s->elem_bytes = convnd_dtype_bytes(p->dtype);
    if ((st = check_tensor_counts(p, s)) || (st = check_epilogue(p)) ||
        (st = convnd_check_prologue(p, s)))
        return st;
    s->y_layout = p->y_layout == CONVND_LAYOUT_AUTO
                      ? convnd_default_output_layout(p->x_layout, p->w_layout)
                      : p->y_layout;
    return convnd_check_views(p, s);
}

convnd_status convnd_validate(const convnd_problem *p) {
    convnd_problem_sizes s;
    return convnd_problem_check(p, &s);
}

convnd_status convnd_output_size(const convnd_problem *p, int64_t out[CONVND_MAX_DIMS]) {
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "output size array is NULL");
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    for (int t = 0; t < CONVND_MAX_DIMS; ++t)
        out[t] = t < p->dims ? s.out[t] : 0;
    return CONVND_OK;
}
