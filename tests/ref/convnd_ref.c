/* The canonical convolution (SPEC §2–§5) as the formulas read: for every output, the sum over
 * the taps of its group, then the epilogue, all in f64. No tiling, no clever indexing: the
 * kernels are checked against this, so it has to be obviously right. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "convnd_ref.h"

/* The problem padded to 3 spatial dims (leading size-1 dims) with the element strides of x, w
 * and y over logical indices (n or co/ci, c, s0, s1, s2). */
typedef struct ref_geometry {
    int64_t in[3], out[3], k[3], s[3], d[3], p0[3];
    int64_t xs[5], ws[5], ys[5], zs[5];
    int64_t x_numel, w_numel, y_numel;
    int64_t x_span, y_span; /* elements from the base to the end of the last (views: SPEC §11) */
} ref_geometry;

/* Output size per SPEC §2 (forward) or §3 (transposed), computed here rather than taken from
 * the library so that a disagreement shows up. */
static int64_t spec_output_size(const convnd_problem *p, int t) {
    int64_t e = p->dilation[t] * (p->kernel[t] - 1) + 1;
    int64_t pads = p->pad_before[t] + p->pad_after[t];
    if (p->mode != CONVND_TRANSPOSED) { /* forward and wgrad: the forward's O */
        int64_t span = p->input[t] + pads - e;
        /* floor division: span may be negative, then O < 1 and validation has refused it */
        int64_t q = span / p->stride[t] - (span % p->stride[t] < 0);
        return q + 1;
    }
    return (p->input[t] - 1) * p->stride[t] + e - pads;
}

static int shape_matches(const convnd_tensor_desc *d, const int64_t *expected, int rank,
                         const char *name) {
    int ok = d->rank == rank;
    for (int r = 0; ok && r < rank; r++)
        ok = d->shape[r] == expected[r];
    if (!ok) {
        fprintf(stderr, "convnd_ref: convnd_tensor_describe(%s) shape [", name);
        for (int r = 0; r < d->rank; r++)
            fprintf(stderr, "%s%lld", r ? "," : "", (long long)d->shape[r]);
        fprintf(stderr, "] differs from the SPEC's [");
        for (int r = 0; r < rank; r++)
            fprintf(stderr, "%s%lld", r ? "," : "", (long long)expected[r]);
        fprintf(stderr, "]\n");
    }
    return ok;
}

/* Copies a descriptor's strides into the padded 5-entry form: (outer, channel, s0, s1, s2). */
static void pad_strides(const convnd_tensor_desc *d, int dims, int64_t out[5]) {
    out[0] = d->strides[0];
    out[1] = d->strides[1];
    for (int t = 0; t < 3; t++) {
        int src = t - (3 - dims); /* spatial index in the problem, negative for padding dims */
        out[2 + t] = src >= 0 ? d->strides[2 + src] : 0;
    }
}

static convnd_status make_geometry(const convnd_problem *p, ref_geometry *g) {
    convnd_tensor_desc xd, wd, yd, zd;
    convnd_status st = convnd_tensor_describe(p, CONVND_X, &xd);
    if (st == CONVND_OK) st = convnd_tensor_describe(p, CONVND_W, &wd);
    if (st == CONVND_OK) st = convnd_tensor_describe(p, CONVND_Y, &yd);
    if (st == CONVND_OK) st = convnd_tensor_describe(p, CONVND_Z, &zd);
    if (st != CONVND_OK) return st;

    int dims = p->dims;
    int64_t xshape[5] = {p->N, p->C_in}, wshape[5], yshape[5] = {p->N, p->C_out};
    if (p->mode != CONVND_TRANSPOSED) {
        wshape[0] = p->C_out;
        wshape[1] = p->C_in / p->groups;
    } else {
        wshape[0] = p->C_in;
        wshape[1] = p->C_out / p->groups;
    }
    for (int t = 0; t < 3; t++) {
        int src = t - (3 - dims);
        g->in[t] = src >= 0 ? p->input[src] : 1;
        g->out[t] = src >= 0 ? spec_output_size(p, src) : 1;
        g->k[t] = src >= 0 ? p->kernel[src] : 1;
        g->s[t] = src >= 0 ? p->stride[src] : 1;
        g->d[t] = src >= 0 ? p->dilation[src] : 1;
        g->p0[t] = src >= 0 ? p->pad_before[src] : 0;
        if (src >= 0) {
            xshape[2 + src] = p->input[src];
            wshape[2 + src] = p->kernel[src];
            yshape[2 + src] = g->out[t];
        }
    }
    if (!shape_matches(&xd, xshape, dims + 2, "x") || !shape_matches(&wd, wshape, dims + 2, "w") ||
        !shape_matches(&yd, yshape, dims + 2, "y"))
        return CONVND_ERR_INTERNAL;
    pad_strides(&xd, dims, g->xs);
    pad_strides(&wd, dims, g->ws);
    pad_strides(&yd, dims, g->ys);
    pad_strides(&zd, dims, g->zs);
    g->x_numel = xd.numel;
    g->w_numel = wd.numel;
    g->y_numel = yd.numel;
    const int64_t elem = (int64_t)convnd_ref_dtype_size(p->dtype);
    g->x_span = xd.bytes / elem;
    g->y_span = yd.bytes / elem;
    return CONVND_OK;
}

/* The input position a tap (output o, kernel offset k) reads in one dim, or -1 when there is
 * none: forward i = o*S - P0 + k*D; transposed the i with i*S + k*D - P0 = o. Positions outside
 * [0, I) are the implicit zero padding (or, transposed, no tap at all). */
static int64_t tap_input(convnd_mode mode, const ref_geometry *g, int t, int64_t o, int64_t k) {
    int64_t i;
    if (mode == CONVND_FORWARD) {
        i = o * g->s[t] - g->p0[t] + k * g->d[t];
    } else {
        int64_t num = o + g->p0[t] - k * g->d[t];
        if (num % g->s[t] != 0) return -1;
        i = num / g->s[t];
    }
    return i >= 0 && i < g->in[t] ? i : -1;
}

double convnd_ref_activate(convnd_activation act, double v) {
    switch (act) {
    case CONVND_ACT_NONE:
        return v;
    case CONVND_ACT_RELU:
        return v > 0.0 ? v : 0.0;
    case CONVND_ACT_SILU:
        return v / (1.0 + exp(-v));
    case CONVND_ACT_GELU:
        return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
    }
    return NAN;
}

/* Loads a whole tensor as f64: every position from its base to the end of its last element
 * (0 .. numel-1 when packed; a view's gaps are loaded too and never used). */
static double *load_all(convnd_dtype dt, const void *data, int64_t numel) {
    double *out = malloc(sizeof(double) * (size_t)(numel > 0 ? numel : 1));
    if (!out) return NULL;
    for (int64_t i = 0; i < numel; i++)
        out[i] = convnd_ref_load(dt, data, i);
    return out;
}

convnd_status convnd_ref_conv_f64(const convnd_problem *p, const void *x, const void *w,
                                  const void *bias, const void *z, double *y_exact, double *y_mag) {
    if (p && p->mode == CONVND_WGRAD)
        return CONVND_ERR_INVALID_ARGUMENT; /* not a conv: see below */
    if (p && (p->prefix_size || p->suffix_size || p->state_size))
        return CONVND_ERR_INVALID_ARGUMENT; /* the prefix is an operand: convnd_ref_conv_io */
    ref_geometry g;
    convnd_status st = make_geometry(p, &g);
    if (st != CONVND_OK) return st;
    if ((g.x_numel > 0 && !x) || (g.w_numel > 0 && !w) || (p->has_bias && !bias) ||
        (p->has_z && !z))
        return CONVND_ERR_NULL_POINTER;

    double *xv = load_all(p->dtype, x, g.x_span);
    double *wv = load_all(p->dtype, w, g.w_numel);
    if (!xv || !wv) {
        free(xv);
        free(wv);
        return CONVND_ERR_OUT_OF_MEMORY;
    }
    const int64_t cin_g = p->C_in / p->groups, cout_g = p->C_out / p->groups;
    const double alpha = p->alpha, beta = p->beta;

    for (int64_t n = 0; n < p->N; n++)
        for (int64_t co = 0; co < p->C_out; co++)
            for (int64_t o0 = 0; o0 < g.out[0]; o0++)
                for (int64_t o1 = 0; o1 < g.out[1]; o1++)
                    for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
                        const int64_t group = co / cout_g;
                        double acc = 0.0, mag = 0.0;
                        for (int64_t cig = 0; cig < cin_g; cig++) {
                            const int64_t ci = group * cin_g + cig;
                            const double *xc = xv + n * g.xs[0] + ci * g.xs[1];
                            /* forward w[co, ci mod C_in/g, k]; transposed w[ci, co mod C_out/g, k]
                             */
                            const double *wc = p->mode == CONVND_FORWARD
                                                   ? wv + co * g.ws[0] + cig * g.ws[1]
                                                   : wv + ci * g.ws[0] + (co % cout_g) * g.ws[1];
                            for (int64_t k0 = 0; k0 < g.k[0]; k0++) {
                                const int64_t i0 = tap_input(p->mode, &g, 0, o0, k0);
                                if (i0 < 0) continue;
                                for (int64_t k1 = 0; k1 < g.k[1]; k1++) {
                                    const int64_t i1 = tap_input(p->mode, &g, 1, o1, k1);
                                    if (i1 < 0) continue;
                                    for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
                                        const int64_t i2 = tap_input(p->mode, &g, 2, o2, k2);
                                        if (i2 < 0) continue;
                                        const double prod =
                                            xc[i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4]] *
                                            wc[k0 * g.ws[2] + k1 * g.ws[3] + k2 * g.ws[4]];
                                        acc += prod;
                                        mag += fabs(prod);
                                    }
                                }
                            }
                        }
                        const int64_t yo =
                            n * g.ys[0] + co * g.ys[1] + o0 * g.ys[2] + o1 * g.ys[3] + o2 * g.ys[4];
                        const int64_t zo =
                            n * g.zs[0] + co * g.zs[1] + o0 * g.zs[2] + o1 * g.zs[3] + o2 * g.zs[4];
                        double v = alpha * acc;
                        mag *= fabs(alpha);
                        if (p->has_bias) {
                            const double b = convnd_ref_load(p->dtype, bias, co);
                            v += b;
                            mag += fabs(b);
                        }
                        if (p->has_z) {
                            const double bz = beta * convnd_ref_load(p->dtype, z, zo);
                            v += bz;
                            mag += fabs(bz);
                        }
                        if (y_exact) y_exact[yo] = convnd_ref_activate(p->activation, v);
                        if (y_mag) y_mag[yo] = mag;
                    }
    free(xv);
    free(wv);
    return CONVND_OK;
}

/* Offset of logical element `i` (row-major over the shape) of a described tensor. */
static int64_t element_offset(const convnd_tensor_desc *d, int64_t i) {
    int64_t off = 0;
    for (int r = d->rank - 1; r >= 0; r--) {
        off += (i % d->shape[r]) * d->strides[r];
        i /= d->shape[r];
    }
    return off;
}

convnd_status convnd_ref_conv(const convnd_problem *p, const void *x, const void *w,
                              const void *bias, const void *z, void *y) {
    convnd_tensor_desc yd;
    convnd_status st = convnd_tensor_describe(p, CONVND_Y, &yd);
    if (st != CONVND_OK) return st;
    if (yd.numel > 0 && !y) return CONVND_ERR_NULL_POINTER;
    /* computed in full before the first store, so z may equal y; only y's elements are stored
     * (a view's gaps are left alone) */
    const int64_t span = (int64_t)(yd.bytes / (int64_t)convnd_ref_dtype_size(p->dtype));
    double *exact = malloc(sizeof(double) * (size_t)(span > 0 ? span : 1));
    if (!exact) return CONVND_ERR_OUT_OF_MEMORY;
    st = convnd_ref_conv_f64(p, x, w, bias, z, exact, NULL);
    if (st == CONVND_OK)
        for (int64_t i = 0; i < yd.numel; i++) {
            const int64_t off = element_offset(&yd, i);
            convnd_ref_store(p->dtype, y, off, exact[off]);
        }
    free(exact);
    return st;
}

/* ---- prefix and suffix inputs, state output (SPEC §12, §14): X = cat(x_prefix, x, x_suffix),
 * made explicitly ------------------------------------------------------------------------------ */

convnd_status convnd_ref_io_input(const convnd_problem *p, const void *x_prefix, const void *x,
                                  const void *x_suffix, convnd_problem *q, void **X) {
    convnd_tensor_desc xd, pd, fd, Xd;
    *X = NULL;
    convnd_status st = convnd_tensor_describe(p, CONVND_X, &xd);
    if (st != CONVND_OK) return st;
    if (!p->prefix_size && !p->suffix_size && !p->state_size) return CONVND_ERR_INVALID_ARGUMENT;
    if ((st = convnd_tensor_describe(p, CONVND_X_PREFIX, &pd)) != CONVND_OK) return st;
    if ((st = convnd_tensor_describe(p, CONVND_X_SUFFIX, &fd)) != CONVND_OK) return st;
    if ((pd.numel > 0 && !x_prefix) || (fd.numel > 0 && !x_suffix) || (xd.numel > 0 && !x))
        return CONVND_ERR_NULL_POINTER;
    /* q: the same conv over X, packed in x's layout, with no prefix, suffix or state */
    *q = *p;
    const int a = p->io_axis;
    q->input[a] = p->input[a] + p->prefix_size + p->suffix_size;
    q->prefix_size = q->suffix_size = q->state_size = 0;
    q->prefix_view.custom = q->suffix_view.custom = 0;
    q->io_axis = 0;
    q->x_view.custom = 0;
    if ((st = convnd_tensor_describe(q, CONVND_X, &Xd)) != CONVND_OK) return st;
    const size_t elem = convnd_ref_dtype_size(p->dtype);
    unsigned char *cat = malloc(elem * (size_t)(Xd.numel > 0 ? Xd.numel : 1));
    if (!cat) return CONVND_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < Xd.numel; i++) {
        /* position along the axis of X's logical element i */
        int64_t rest = i, pos = 0;
        for (int r = Xd.rank - 1; r >= 2 + a; r--) {
            pos = rest % Xd.shape[r];
            rest /= Xd.shape[r];
        }
        const int from_prefix = pos < p->prefix_size;
        const int from_suffix = pos >= p->prefix_size + p->input[a];
        /* the same logical element in the prefix, in x shifted by prefix_size on the axis, or in
         * the suffix shifted by prefix_size + input */
        const int64_t shift = from_prefix   ? 0
                              : from_suffix ? p->prefix_size + p->input[a]
                                            : p->prefix_size;
        int64_t src = 0, j = i;
        const convnd_tensor_desc *d = from_prefix ? &pd : from_suffix ? &fd : &xd;
        for (int r = Xd.rank - 1; r >= 0; r--) {
            int64_t idx = j % Xd.shape[r];
            j /= Xd.shape[r];
            if (r == 2 + a) idx -= shift;
            src += idx * d->strides[r];
        }
        const double v = convnd_ref_load(p->dtype,
                                         from_prefix   ? x_prefix
                                         : from_suffix ? x_suffix
                                                       : x,
                                         src);
        convnd_ref_store(p->dtype, cat, element_offset(&Xd, i), v);
    }
    *X = cat;
    return CONVND_OK;
}

convnd_status convnd_ref_state(const convnd_problem *p, const convnd_problem *q, const void *X,
                               void *state) {
    convnd_tensor_desc sd, Xd;
    convnd_status st = convnd_tensor_describe(p, CONVND_STATE, &sd);
    if (st == CONVND_OK) st = convnd_tensor_describe(q, CONVND_X, &Xd);
    if (st != CONVND_OK) return st;
    if (sd.numel > 0 && !state) return CONVND_ERR_NULL_POINTER;
    const int a = p->io_axis;
    /* state[..., j, ...] = X[..., I_X - T_s + j, ...], zero before X's start */
    for (int64_t i = 0; i < sd.numel; i++) {
        int64_t src = 0, j = i, valid = 1;
        for (int r = sd.rank - 1; r >= 0; r--) {
            int64_t idx = j % sd.shape[r];
            j /= sd.shape[r];
            if (r == 2 + a) idx += q->input[a] - p->state_size;
            valid &= idx >= 0;
            src += idx * Xd.strides[r];
        }
        convnd_ref_store(p->dtype, state, element_offset(&sd, i),
                         valid ? convnd_ref_load(p->dtype, X, src) : 0.0);
    }
    return CONVND_OK;
}

convnd_status convnd_ref_conv_io(const convnd_problem *p, const void *x_prefix, const void *x,
                                 const void *x_suffix, const void *w, const void *bias,
                                 const void *z, void *y, void *state) {
    if (p && !p->prefix_size && !p->suffix_size && !p->state_size)
        return convnd_ref_conv(p, x, w, bias, z, y);
    convnd_problem q;
    void *X;
    convnd_status st = convnd_ref_io_input(p, x_prefix, x, x_suffix, &q, &X);
    if (st != CONVND_OK) return st;
    st = convnd_ref_state(p, &q, X, state);
    if (st == CONVND_OK) st = convnd_ref_conv(&q, X, w, bias, z, y);
    free(X);
    return st;
}

/* ---- weight gradient (SPEC §10) ------------------------------------------------------------ */

/* Loads x (or dy) as f64 and checks the pointers; dw_numel elements of dw are then written. */
static convnd_status wgrad_inputs(const convnd_problem *p, const ref_geometry *g, const void *x,
                                  const void *dy, const void *z, double **xv, double **dyv) {
    if ((g->x_numel > 0 && !x) || (g->y_numel > 0 && !dy) || (p->has_z && !z))
        return CONVND_ERR_NULL_POINTER;
    *xv = load_all(p->dtype, x, g->x_span);
    *dyv = load_all(p->dtype, dy, g->y_span);
    if (*xv && *dyv) return CONVND_OK;
    free(*xv);
    free(*dyv);
    return CONVND_ERR_OUT_OF_MEMORY;
}

convnd_status convnd_ref_wgrad_f64(const convnd_problem *p, const void *x, const void *dy,
                                   const void *z, double *dw_exact, double *dw_mag) {
    ref_geometry g;
    convnd_status st = make_geometry(p, &g);
    if (st != CONVND_OK) return st;
    double *xv, *dyv;
    if ((st = wgrad_inputs(p, &g, x, dy, z, &xv, &dyv)) != CONVND_OK) return st;
    const int transposed = p->mode == CONVND_TRANSPOSED;
    const convnd_mode taps = transposed ? CONVND_TRANSPOSED : CONVND_FORWARD; /* wgrad: forward */
    const int64_t cin_g = p->C_in / p->groups, cout_g = p->C_out / p->groups;
    /* dw[a, b, k]: forward/wgrad a = co, b = cl; transposed a = ci, b = co mod C_out/g */
    const int64_t A = transposed ? p->C_in : p->C_out, B = transposed ? cout_g : cin_g;
    for (int64_t a = 0; a < A; a++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t k0 = 0; k0 < g.k[0]; k0++)
                for (int64_t k1 = 0; k1 < g.k[1]; k1++)
                    for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
                        const int64_t k[3] = {k0, k1, k2};
                        /* the x channel and y channel this weight connects */
                        const int64_t ci = transposed ? a : (a / cout_g) * cin_g + b;
                        const int64_t co = transposed ? (a / cin_g) * cout_g + b : a;
                        double acc = 0.0, mag = 0.0;
                        for (int64_t n = 0; n < p->N; n++)
                            for (int64_t o0 = 0; o0 < g.out[0]; o0++)
                                for (int64_t o1 = 0; o1 < g.out[1]; o1++)
                                    for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
                                        const int64_t o[3] = {o0, o1, o2};
                                        int64_t i[3], t;
                                        for (t = 0; t < 3; t++)
                                            if ((i[t] = tap_input(taps, &g, t, o[t], k[t])) < 0)
                                                break;
                                        if (t < 3) continue;
                                        const double prod =
                                            dyv[n * g.ys[0] + co * g.ys[1] + o0 * g.ys[2] +
                                                o1 * g.ys[3] + o2 * g.ys[4]] *
                                            xv[n * g.xs[0] + ci * g.xs[1] + i[0] * g.xs[2] +
                                               i[1] * g.xs[3] + i[2] * g.xs[4]];
                                        acc += prod;
                                        mag += fabs(prod);
                                    }
                        const int64_t wo =
                            a * g.ws[0] + b * g.ws[1] + k0 * g.ws[2] + k1 * g.ws[3] + k2 * g.ws[4];
                        double v = p->alpha * acc;
                        mag *= fabs(p->alpha);
                        if (p->has_z) {
                            const double bz = p->beta * convnd_ref_load(p->dtype, z, wo);
                            v += bz;
                            mag += fabs(bz);
                        }
                        if (dw_exact) dw_exact[wo] = v;
                        if (dw_mag) dw_mag[wo] = mag;
                    }
    free(xv);
    free(dyv);
    return CONVND_OK;
}

convnd_status convnd_ref_wgrad(const convnd_problem *p, const void *x, const void *dy,
                               const void *z, void *dw) {
    convnd_tensor_desc wd;
    convnd_status st = convnd_tensor_describe(p, CONVND_W, &wd);
    if (st != CONVND_OK) return st;
    if (wd.numel > 0 && !dw) return CONVND_ERR_NULL_POINTER;
    /* computed in full before the first store, so z may equal dw */
    double *exact = malloc(sizeof(double) * (size_t)(wd.numel > 0 ? wd.numel : 1));
    if (!exact) return CONVND_ERR_OUT_OF_MEMORY;
    st = convnd_ref_wgrad_f64(p, x, dy, z, exact, NULL);
    if (st == CONVND_OK)
        for (int64_t i = 0; i < wd.numel; i++)
            convnd_ref_store(p->dtype, dw, i, exact[i]);
    free(exact);
    return st;
}
