/* The kernels' view of a problem: padded to 3 spatial dims, layouts as strides. */
#include "problem_internal.h"

#include <stdlib.h>
#include <string.h>

/* Logical shape [d0, d1, s0, s1, s2] with the problem's dims placed last and leading 1s. */
static void padded_shape(int64_t d0, int64_t d1, const int64_t *spatial, int32_t dims,
                         int64_t shape[5]) {
    shape[0] = d0;
    shape[1] = d1;
    for (int j = 0; j < 3; ++j) {
        const int t = j - (3 - dims);
        shape[2 + j] = t >= 0 ? spatial[t] : 1;
    }
}

/* Strides of a rank dims + 2 tensor in the padded 5-entry form (leading spatial dims get 0:
 * their index is always 0). */
static void padded_strides(const int64_t *strides, int32_t dims, int64_t out[5]) {
    out[0] = strides[0];
    out[1] = strides[1];
    for (int j = 0; j < 3; ++j) {
        const int t = j - (3 - dims);
        out[2 + j] = t >= 0 ? strides[2 + t] : 0;
    }
}

/* The index-width rule, the one place it is decided (every kernel reads params.index64 through
 * conv_needs_index64): 32-bit indices when every element offset, spatial coordinate and their
 * intermediates (o*S - P0 + k*D, o + P0 - k*D, i*S, a sum of two such terms) stay below 2^31,
 * which holds when each tensor, view span and spatial extent is below 2^30 (headroom for a sum
 * of two bounded terms). Padding is only bounded by the output-size rule, so P0 = -10^12,
 * P1 = +10^12 is a valid problem with small tensors: the coordinates are checked too. */
static int64_t abs64(int64_t v) {
    return v < 0 ? -v : v;
}

static int needs_index64(const convnd_conv_params *q, const convnd_problem_sizes *s) {
    const int64_t limit = (int64_t)1 << 30;
    if (s->x_numel >= limit || s->w_numel >= limit || s->y_numel >= limit || s->x_span >= limit ||
        s->y_span >= limit || s->z_span >= limit || s->prefix_span >= limit ||
        s->suffix_span >= limit || s->state_numel >= limit)
        return 1;
    for (int t = 0; t < 3; ++t) {
        /* Each term of span is at least as large as each of these, so refusing them first
         * changes no answer; it keeps the sum below from overflowing (and |INT64_MIN| from
         * being taken) when a valid problem has paddings or strides near the int64 limits. */
        if (q->p0[t] <= -limit || q->p0[t] >= limit || q->p1[t] <= -limit || q->p1[t] >= limit ||
            q->k[t] >= limit || q->d[t] >= limit || q->in[t] >= limit || q->out[t] >= limit ||
            q->s[t] >= limit)
            return 1;
        const int64_t span = abs64(q->p0[t]) + abs64(q->p1[t]) + q->k[t] * q->d[t] +
                             (q->in[t] + q->out[t]) * (q->s[t] + 1);
        if (span >= limit) return 1;
    }
    return 0;
}

/* CONVND_FORCE_INDEX64=1 sends every problem down the kernels' 64-bit index path, so that tests
 * can check that path on problems small enough to run (tests/test_overflow.c). */
static int index64_forced(void) {
    const char *e = getenv("CONVND_FORCE_INDEX64");
    return e && strcmp(e, "1") == 0;
}

convnd_status convnd_params_from_problem(const convnd_problem *p, convnd_conv_params *out) {
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    return convnd_params_from_sizes(p, &s, out);
}

convnd_status convnd_resolve(const convnd_problem *p, convnd_resolved *out) {
    memset(out, 0, sizeof *out);
    convnd_resolved r;
    memset(&r, 0, sizeof r);
    convnd_status st = convnd_problem_check(p, &r.sizes);
    if (st) return st;
    r.problem = *p;
    r.problem.y_layout = r.sizes.y_layout; /* resolved once, here */
    if ((st = convnd_params_from_sizes(&r.problem, &r.sizes, &r.params))) return st;
    *out = r;
    return CONVND_OK;
}

convnd_status convnd_params_from_sizes(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                       convnd_conv_params *out) {
    const convnd_problem_sizes s = *sizes;

    convnd_conv_params q;
    memset(&q, 0, sizeof q);
    q.mode = (int32_t)p->mode;
    q.dtype = (int32_t)p->dtype;
    q.activation = (int32_t)p->activation;
    q.has_bias = p->has_bias;
    q.has_z = p->has_z;
    q.allow_tf32 = p->dtype == CONVND_F32 && p->math == CONVND_MATH_ALLOW_TF32;
    q.alpha = p->alpha;
    q.beta = p->beta;
    q.N = p->N;
    q.C_in = p->C_in;
    q.C_out = p->C_out;
    q.groups = p->groups;
    q.cin_g = p->C_in / p->groups;
    q.cout_g = p->C_out / p->groups;

    const int32_t dims = p->dims;
    q.dims = dims;
    q.sequences = p->sequences;
    for (int j = 0; j < 3; ++j) {
        const int t = j - (3 - dims);
        const int real = t >= 0;
        q.in[j] = real ? s.in[t] : 1;
        q.out[j] = real ? s.out[t] : 1;
        q.k[j] = real ? p->kernel[t] : 1;
        q.s[j] = real ? p->stride[t] : 1;
        q.d[j] = real ? p->dilation[t] : 1;
        q.p0[j] = real ? p->pad_before[t] : 0;
        q.p1[j] = real ? p->pad_after[t] : 0;
    }

    int64_t shape[5];
    const int forward = p->mode != CONVND_TRANSPOSED; /* WGRAD: w strides are dw's */
    /* a tensor whose view addresses it as its packed layout does gets exactly those strides */
    padded_shape(p->N, p->C_in, p->input, dims, shape);
    convnd_layout_strides(shape, 5, p->x_layout, q.xs);
    if (s.strided & CONVND_STRIDED_X) padded_strides(s.xs, dims, q.xs);
    padded_shape(forward ? p->C_out : p->C_in, forward ? q.cin_g : q.cout_g, p->kernel, dims,
                 shape);
    convnd_layout_strides(shape, 5, p->w_layout, q.ws);
    padded_shape(p->N, p->C_out, s.out, dims, shape);
    convnd_layout_strides(shape, 5, s.y_layout, q.ys);
    if (s.strided & CONVND_STRIDED_Y) padded_strides(s.ys, dims, q.ys);
    memcpy(q.zs, q.ys, sizeof q.zs);
    if (s.strided & CONVND_STRIDED_Z) padded_strides(s.zs, dims, q.zs);
    q.strided = s.strided;

    q.io_dim = -1;
    if (convnd_has_io_axis(p)) {
        q.io_dim = 3 - dims + p->io_axis;
        q.prefix_len = p->prefix_size;
        q.suffix_len = p->suffix_size;
        q.state_len = p->state_size;
        q.state_numel = s.state_numel;
        padded_shape(p->N, p->C_in, p->input, dims, shape);
        padded_strides(s.ps, dims, q.ps); /* the prefix's and suffix's views or packed strides */
        padded_strides(s.fs, dims, q.fs);
        shape[2 + q.io_dim] = p->state_size;
        convnd_layout_strides(shape, 5, p->x_layout, q.ss);
    }

    q.prologue = p->prologue;
    if (p->prologue.num_steps > 0) { /* r [N, I...]: x's strides with the channel taken out */
        padded_shape(p->N, 1, p->input, dims, shape);
        convnd_layout_strides(shape, 5, CONVND_CHANNELS_FIRST, q.rs);
        q.rs[1] = 0;
    }

    q.x_numel = s.x_numel;
    q.w_numel = s.w_numel;
    q.y_numel = s.y_numel;
    q.x_cl = p->x_layout == CONVND_CHANNELS_LAST;
    q.w_cl = p->w_layout == CONVND_CHANNELS_LAST;
    q.y_cl = s.y_layout == CONVND_CHANNELS_LAST;
    q.index64 = needs_index64(&q, &s) || index64_forced();
    *out = q;
    return CONVND_OK;
}
