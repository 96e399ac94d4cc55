#include "size_model.h"

#include <math.h>
#include <string.h>

typedef __int128 i128;

static const i128 i64_max = INT64_MAX, i64_min = INT64_MIN;

static int fits(i128 v) {
    return v >= i64_min && v <= i64_max;
}

/* a * b, saturated far past int64 (sizes here are >= 0, at most 2^63 each) */
static i128 sat_mul(i128 a, i128 b) {
    const i128 cap = (i128)1 << 100;
    if (a == 0 || b == 0) return 0;
    if (a > cap / b) return cap;
    return a * b;
}

static int64_t dtype_bytes(int64_t dtype) {
    return dtype == CONVND_F32 ? 4 : (dtype == CONVND_F16 || dtype == CONVND_BF16) ? 2 : 0;
}

static void rule(size_model *m) {
    m->rule_broken = 1;
}

/* Row-major strides, or dim 1 innermost for channels-last (rank > 2); size 0 counts as 1. */
static void model_strides(const int64_t *shape, int32_t rank, int channels_last, int64_t *strides) {
    int32_t order[CONVND_MAX_RANK], n = 0;
    const int cl = channels_last && rank > 2;
    for (int32_t i = 0; i < rank; ++i)
        if (!(cl && i == 1)) order[n++] = i;
    if (cl) order[n++] = 1;
    i128 step = 1;
    for (int32_t j = rank - 1; j >= 0; --j) {
        strides[order[j]] = (int64_t)step;
        step *= shape[order[j]] > 0 ? shape[order[j]] : 1;
    }
}

/* Records tensor `which`; returns 0 when its bytes do not fit int64. */
static int model_tensor(size_model *m, int which, const int64_t *shape, int32_t rank,
                        int channels_last) {
    i128 extent = 1, numel = 1;
    for (int32_t i = 0; i < rank; ++i) {
        extent = sat_mul(extent, shape[i] > 0 ? shape[i] : 1);
        numel = sat_mul(numel, shape[i]);
    }
    if (!fits(sat_mul(extent, m->elem_bytes))) return 0;
    m->rank[which] = rank;
    memcpy(m->shape[which], shape, sizeof(int64_t) * (size_t)rank);
    m->numel[which] = (int64_t)numel;
    m->extent[which] = (int64_t)extent;
    model_strides(shape, rank, channels_last, m->strides[which]);
    return 1;
}

void size_model_eval(const convnd_problem *p, size_model *m) {
    memset(m, 0, sizeof *m);
    if (p->dims < 1 || p->dims > CONVND_MAX_DIMS) {
        rule(m); /* nothing else is defined */
        return;
    }
    const int d = p->dims;
    const int64_t mode = (int64_t)p->mode, dtype = (int64_t)p->dtype;
    const int64_t xl = (int64_t)p->x_layout, wl = (int64_t)p->w_layout, yl = (int64_t)p->y_layout;
    const int64_t act = (int64_t)p->activation, math = (int64_t)p->math;
    if (mode < 0 || mode > 2) rule(m);
    if (mode == 2 && (p->has_bias == 1 || act != 0)) rule(m); /* wgrad: no bias, no activation */
    if (dtype_bytes(dtype) == 0) rule(m);
    if ((xl != 0 && xl != 1) || (wl != 0 && wl != 1) || (yl < 0 || yl > 2)) rule(m);
    if (act < 0 || act > 3 || (math != 0 && math != 1)) rule(m);
    if (p->N < 0 || p->C_in < 0 || p->C_out < 0 || p->groups < 1) rule(m);
    if (p->groups >= 1 && (p->C_in % p->groups != 0 || p->C_out % p->groups != 0)) rule(m);
    if (p->has_bias != 0 && p->has_bias != 1) rule(m);
    if (p->has_z != 0 && p->has_z != 1) rule(m);
    if (!isfinite(p->alpha) || !isfinite(p->beta)) rule(m);
    if (p->beta != 0.0f && !p->has_z) rule(m);

    int sizes_ok = 1; /* every output size computed and in int64 */
    for (int t = 0; t < d; ++t) {
        const i128 I = p->input[t], K = p->kernel[t], S = p->stride[t], D = p->dilation[t];
        const i128 P0 = p->pad_before[t], P1 = p->pad_after[t];
        if (I < 1 || K < 1 || S < 1 || D < 1) {
            rule(m);
            sizes_ok = 0;
            continue;
        }
        /* |each term| < 2^127 here: I, S, P < 2^63, E <= 2^126 + 1 */
        const i128 E = D * (K - 1) + 1;
        i128 O;
        if (!fits(D * (K - 1)) || !fits(E)) m->may_overflow = 1;
        if (mode == 1) {
            const i128 a = (I - 1) * S, b = a + E, c = b - P0;
            O = c - P1;
            if (!fits(a) || !fits(b) || !fits(c) || !fits(O)) m->may_overflow = 1;
        } else {
            const i128 a = I + P0, b = a + P1, c = b - E;
            if (!fits(a) || !fits(b) || !fits(c)) m->may_overflow = 1;
            /* floor division by S >= 1 */
            O = (c >= 0 ? c / S : -((-c + S - 1) / S)) + 1;
        }
        /* the input position each tap reads, with its partial sums (kernels compute them) */
        if (mode == 1) {
            if (!fits(P0 - (E - 1)) || !fits(O - 1 + P0)) m->may_overflow = 1;
        } else if (!fits(-P0) || !fits((O - 1) * S - P0) || !fits((O - 1) * S - P0 + E - 1)) {
            m->may_overflow = 1;
        }
        if (O < 1) {
            rule(m);
            sizes_ok = 0;
        } else if (!fits(O)) {
            m->may_overflow = 1;
            sizes_ok = 0;
        } else {
            m->out[t] = (int64_t)O;
        }
    }
    /* The tensors' byte counts: past int64 makes OVERFLOW acceptable even when some other rule
     * is broken too (the library may check either first). */
    if (!sizes_ok || p->N < 0 || p->C_in < 0 || p->C_out < 0 || p->groups < 1) return;
    m->elem_bytes = dtype_bytes(dtype) ? dtype_bytes(dtype) : 1;
    m->y_layout = yl == CONVND_LAYOUT_AUTO
                      ? (xl == 1 || wl == 1 ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST)
                      : (convnd_layout)yl;
    const int fwd = mode != 1; /* wgrad: the forward's weight shape (dw) */
    int64_t shape[CONVND_MAX_RANK];
    int ok = 1;
    shape[0] = p->N;
    shape[1] = p->C_in;
    memcpy(shape + 2, p->input, sizeof(int64_t) * (size_t)d);
    ok &= model_tensor(m, CONVND_X, shape, d + 2, xl == 1);
    shape[0] = fwd ? p->C_out : p->C_in;
    shape[1] = (fwd ? p->C_in : p->C_out) / p->groups;
    memcpy(shape + 2, p->kernel, sizeof(int64_t) * (size_t)d);
    ok &= model_tensor(m, CONVND_W, shape, d + 2, wl == 1);
    ok &= model_tensor(m, CONVND_BIAS, &p->C_out, 1, 0);
    shape[0] = p->N;
    shape[1] = p->C_out;
    memcpy(shape + 2, m->out, sizeof(int64_t) * (size_t)d);
    ok &= model_tensor(m, CONVND_Y, shape, d + 2, m->y_layout == CONVND_CHANNELS_LAST);
    if (mode == 2) { /* z is dw_prev: w's shape and layout */
        shape[0] = p->C_out;
        shape[1] = p->C_in / p->groups;
        memcpy(shape + 2, p->kernel, sizeof(int64_t) * (size_t)d);
        ok &= model_tensor(m, CONVND_Z, shape, d + 2, wl == 1);
    } else {
        ok &= model_tensor(m, CONVND_Z, shape, d + 2, m->y_layout == CONVND_CHANNELS_LAST);
    }
    if (!ok) m->may_overflow = 1;
    m->valid = ok && !m->rule_broken;
}

int size_model_accepts(const size_model *m, convnd_status s) {
    switch (s) {
    case CONVND_OK:
        return m->valid;
    case CONVND_ERR_INVALID_ARGUMENT:
    case CONVND_ERR_UNSUPPORTED:
        return m->rule_broken;
    case CONVND_ERR_OVERFLOW:
        return m->may_overflow;
    default:
        return 0;
    }
}
