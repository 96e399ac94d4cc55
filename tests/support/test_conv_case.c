#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_conv_case.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_tolerance.h"
#include "convnd_ref.h"

uint32_t test_poison_bits(convnd_dtype dt) {
    /* NaNs with a recognisable payload: no kernel computes these by accident */
    return dt == CONVND_F16 ? 0x7d5au : dt == CONVND_BF16 ? 0x7fa5u : 0x7fa5a5a5u;
}

void test_poison_fill(convnd_dtype dt, void *host, int64_t n) {
    const uint32_t bits = test_poison_bits(dt);
    for (int64_t i = 0; i < n; ++i) {
        if (dt == CONVND_F32) {
            memcpy((uint32_t *)host + i, &bits, 4);
        } else {
            const uint16_t h = (uint16_t)bits;
            memcpy((uint16_t *)host + i, &h, 2);
        }
    }
}

int test_is_poison(convnd_dtype dt, const void *host, int64_t i) {
    if (dt == CONVND_F32) {
        uint32_t v;
        memcpy(&v, (const uint32_t *)host + i, 4);
        return v == test_poison_bits(dt);
    }
    uint16_t v;
    memcpy(&v, (const uint16_t *)host + i, 2);
    return v == (uint16_t)test_poison_bits(dt);
}

void *test_device_upload(convnd_dtype dt, const void *host, int64_t n) {
    const size_t es = convnd_ref_dtype_size(dt);
    const size_t bytes = es * (size_t)(n > 0 ? n : 1);
    void *d = NULL;
    if (convnd_malloc(&d, bytes) != CONVND_OK) return NULL;
    void *tmp = NULL;
    if (!host || n == 0) {
        tmp = malloc(bytes);
        if (!tmp) {
            convnd_free(d);
            return NULL;
        }
        test_poison_fill(dt, tmp, (int64_t)(bytes / es));
        host = tmp;
    }
    const convnd_status st = convnd_memcpy_h2d(d, host, bytes);
    free(tmp);
    if (st != CONVND_OK) {
        convnd_free(d);
        return NULL;
    }
    return d;
}

static void *host_random(convnd_dtype dt, int64_t n, test_rng *r) {
    void *h = malloc(convnd_ref_dtype_size(dt) * (size_t)(n > 0 ? n : 1));
    if (h) test_fill_random(dt, h, n, r);
    return h;
}

static int compute_reference(test_conv_case *c, char *err, size_t err_len) {
    const convnd_status st = convnd_ref_conv_f64(&c->p, c->hx, c->hw, c->p.has_bias ? c->hb : NULL,
                                                 c->p.has_z ? c->hz : NULL, c->ref, c->mag);
    if (st != CONVND_OK) snprintf(err, err_len, "reference failed: %s", convnd_status_string(st));
    return st == CONVND_OK;
}

int test_case_init(test_conv_case *c, const convnd_problem *p, int z_in_place, uint64_t seed,
                   char *err, size_t err_len) {
    memset(c, 0, sizeof *c);
    c->p = *p;
    if (c->p.y_layout == CONVND_LAYOUT_AUTO)
        c->p.y_layout = convnd_default_output_layout(p->x_layout, p->w_layout);
    c->z_in_place = z_in_place && p->has_z;
    if (convnd_tensor_describe(&c->p, CONVND_X, &c->xd) != CONVND_OK ||
        convnd_tensor_describe(&c->p, CONVND_W, &c->wd) != CONVND_OK ||
        convnd_tensor_describe(&c->p, CONVND_Y, &c->yd) != CONVND_OK ||
        convnd_tensor_describe(&c->p, CONVND_Z, &c->zd) != CONVND_OK) {
        snprintf(err, err_len, "invalid problem: %s", convnd_last_error());
        return 0;
    }
    c->bias_n = p->C_out;
    c->esize = convnd_ref_dtype_size(p->dtype);
    c->x_span = c->xd.bytes / (int64_t)c->esize;
    c->y_span = c->yd.bytes / (int64_t)c->esize;
    c->z_span = c->zd.bytes / (int64_t)c->esize;
    if (c->z_in_place && c->z_span != c->y_span) {
        snprintf(err, err_len, "z in place needs z's view to be y's");
        return 0;
    }
    const convnd_dtype dt = p->dtype;
    test_rng r = test_rng_seed(seed);
    c->hx = host_random(dt, c->x_span, &r);
    c->hw = host_random(dt, c->wd.numel, &r);
    c->hb = host_random(dt, c->bias_n, &r);
    c->hz = host_random(dt, c->z_span, &r);
    c->hy = malloc(c->esize * (size_t)(c->y_span > 0 ? c->y_span : 1));
    const size_t yn = (size_t)(c->y_span > 0 ? c->y_span : 1);
    c->ref = malloc(sizeof(double) * yn);
    c->mag = malloc(sizeof(double) * yn);
    if (!c->hx || !c->hw || !c->hb || !c->hz || !c->hy || !c->ref || !c->mag) {
        snprintf(err, err_len, "out of host memory");
        test_case_free(c);
        return 0;
    }
    c->dx = test_device_upload(dt, c->hx, c->x_span);
    c->dw = test_device_upload(dt, c->hw, c->wd.numel);
    c->db = test_device_upload(dt, c->hb, c->bias_n);
    c->dz = test_device_upload(dt, c->hz, c->z_span);
    c->dy = test_device_upload(dt, NULL, c->y_span);
    if (!c->dx || !c->dw || !c->db || !c->dz || !c->dy) {
        snprintf(err, err_len, "device allocation failed: %s", convnd_last_error());
        test_case_free(c);
        return 0;
    }
    if (!compute_reference(c, err, err_len)) {
        test_case_free(c);
        return 0;
    }
    return 1;
}

int test_case_set_inputs(test_conv_case *c, const void *hx, const void *hw, char *err,
                         size_t err_len) {
    const size_t xb = c->esize * (size_t)c->x_span, wb = c->esize * (size_t)c->wd.numel;
    if (hx) memcpy(c->hx, hx, xb);
    if (hw) memcpy(c->hw, hw, wb);
    if ((hx && xb && convnd_memcpy_h2d(c->dx, c->hx, xb) != CONVND_OK) ||
        (hw && wb && convnd_memcpy_h2d(c->dw, c->hw, wb) != CONVND_OK)) {
        snprintf(err, err_len, "upload failed: %s", convnd_last_error());
        return 0;
    }
    return compute_reference(c, err, err_len);
}

void test_case_free(test_conv_case *c) {
    void *dev[] = {c->dx, c->dw, c->db, c->dz, c->dy};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i)
        if (dev[i]) convnd_free(dev[i]);
    free(c->hx);
    free(c->hw);
    free(c->hb);
    free(c->hz);
    free(c->hy);
    free(c->ref);
    free(c->mag);
    memset(c, 0, sizeof *c);
}

/* y starts poisoned, or holding z when z is y. */
static convnd_status reset_y(test_conv_case *c) {
    const int64_t yn = c->y_span;
    const size_t ybytes = c->esize * (size_t)(yn > 0 ? yn : 1);
    if (c->z_in_place) return convnd_memcpy_h2d(c->dy, c->hz, ybytes);
    test_poison_fill(c->p.dtype, c->hy, yn > 0 ? yn : 1);
    return convnd_memcpy_h2d(c->dy, c->hy, ybytes);
}

/* A poisoned workspace of ws_bytes (NULL for 0): a schedule must not read scratch it did not
 * write. */
static convnd_status poisoned_workspace(size_t ws_bytes, void **ws) {
    *ws = NULL;
    if (ws_bytes == 0) return CONVND_OK;
    *ws = test_device_upload(CONVND_F32, NULL, (int64_t)((ws_bytes + 3) / 4));
    return *ws ? CONVND_OK : CONVND_ERR_OUT_OF_MEMORY;
}

/* Synchronizes, frees the workspace and downloads y; the first error wins. */
static convnd_status finish_run(test_conv_case *c, convnd_status st, void *ws) {
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    if (ws) convnd_free(ws);
    const size_t ybytes = c->esize * (size_t)(c->y_span > 0 ? c->y_span : 1);
    if (convnd_memcpy_d2h(c->hy, c->dy, ybytes) != CONVND_OK && st == CONVND_OK)
        st = CONVND_ERR_DEVICE;
    return st;
}

convnd_status test_case_run(test_conv_case *c, const char *spec) {
    if (reset_y(c) != CONVND_OK) return CONVND_ERR_DEVICE;
    convnd_options opts = {0};
    opts.schedule = spec;
    size_t ws_bytes = 0;
    convnd_status st = convnd_workspace_size(&c->p, &opts, &ws_bytes);
    if (st != CONVND_OK) return st;
    void *ws;
    if ((st = poisoned_workspace(ws_bytes, &ws)) != CONVND_OK) return st;
    st = conv_nd(&c->p, c->dx, c->dw, c->p.has_bias ? c->db : NULL,
                 c->p.has_z ? (c->z_in_place ? c->dy : c->dz) : NULL, c->dy, ws, ws_bytes, NULL,
                 &opts);
    return finish_run(c, st, ws);
}

convnd_status test_case_run_io(test_conv_case *c, const convnd_problem *p, const char *spec,
                               const void *x_prefix, const void *x, const void *x_suffix,
                               void *state) {
    return test_case_run_prologue(c, p, spec, x_prefix, x, x_suffix, state, NULL, NULL, NULL);
}

convnd_status test_case_run_prologue(test_conv_case *c, const convnd_problem *p, const char *spec,
                                     const void *x_prefix, const void *x, const void *x_suffix,
                                     void *state, const float *pro_r, const float *pro_a,
                                     const float *pro_b) {
    if (reset_y(c) != CONVND_OK) return CONVND_ERR_DEVICE;
    convnd_options opts = {0};
    opts.schedule = spec;
    convnd_plan_t *plan;
    convnd_status st = convnd_plan_create(&plan, p, &opts);
    if (st != CONVND_OK) return st;
    size_t ws_bytes = 0;
    void *ws = NULL;
    if ((st = convnd_plan_workspace_size(plan, &ws_bytes)) == CONVND_OK &&
        (st = poisoned_workspace(ws_bytes, &ws)) == CONVND_OK) {
        const convnd_io io = {x,
                              x_prefix,
                              c->dw,
                              c->p.has_bias ? c->db : NULL,
                              c->p.has_z ? (c->z_in_place ? c->dy : c->dz) : NULL,
                              c->dy,
                              state,
                              x_suffix,
                              NULL,
                              NULL,
                              NULL,
                              NULL,
                              pro_r,
                              pro_a,
                              pro_b};
        st = convnd_plan_execute_io(plan, &io, ws, ws_bytes, NULL);
    }
    convnd_plan_destroy(plan);
    return finish_run(c, st, ws);
}

/* Offset of y's logical element i (row-major over its shape) under its strides. */
static int64_t element_offset(const convnd_tensor_desc *d, int64_t i) {
    int64_t off = 0;
    for (int32_t j = d->rank - 1; j >= 0; --j) {
        off += (i % d->shape[j]) * d->strides[j];
        i /= d->shape[j];
    }
    return off;
}

/* "(n, c, o0, o1)" of logical element i. */
static void logical_index(const convnd_tensor_desc *d, int64_t i, char *buf, size_t len) {
    int64_t idx[CONVND_MAX_RANK];
    for (int32_t j = d->rank - 1; j >= 0; --j) {
        idx[j] = d->shape[j] > 0 ? i % d->shape[j] : 0;
        i = d->shape[j] > 0 ? i / d->shape[j] : 0;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t j = 0; j < d->rank && used + 1 < len; ++j) {
        const int n = snprintf(buf + used, len - used, "%s%lld%s", j ? ", " : "(",
                               (long long)idx[j], j + 1 == d->rank ? ")" : "");
        if (n < 0) break;
        used += (size_t)n;
    }
}

/* A view's gaps (positions of y's span that are no element of y) must be as they were: poison,
 * or z's values when y started out holding z. Returns how many were changed; *first the first. */
static int64_t gaps_changed(const test_conv_case *c, int64_t *first) {
    if (c->y_span == c->yd.numel) return 0;
    unsigned char *used = calloc((size_t)c->y_span, 1);
    if (!used) return -1;
    for (int64_t i = 0; i < c->yd.numel; ++i)
        used[element_offset(&c->yd, i)] = 1;
    int64_t changed = 0;
    for (int64_t off = 0; off < c->y_span; ++off) {
        if (used[off]) continue;
        const int kept = c->z_in_place
                             ? memcmp((const char *)c->hy + off * (int64_t)c->esize,
                                      (const char *)c->hz + off * (int64_t)c->esize, c->esize) == 0
                             : test_is_poison(c->p.dtype, c->hy, off);
        if (!kept && changed++ == 0) *first = off;
    }
    free(used);
    return changed;
}

double test_case_worst(const test_conv_case *c, const void *other) {
    test_tolerance tol = test_tolerance_for(&c->p);
    if (c->u_in > tol.u_in) tol.u_in = c->u_in;
    double worst = 0.0;
    for (int64_t i = 0; i < c->yd.numel; ++i) {
        const int64_t off = element_offset(&c->yd, i);
        const double y = convnd_ref_load(c->p.dtype, c->hy, off);
        const double want = other ? convnd_ref_load(c->p.dtype, other, off) : c->ref[off];
        const double bound =
            (other ? 2.0 : 1.0) * test_tolerance_bound(&tol, c->ref[off], c->mag[off]);
        if ((!c->z_in_place && test_is_poison(c->p.dtype, c->hy, off)) || !isfinite(y) ||
            !isfinite(want))
            return INFINITY;
        const double r = bound > 0 ? fabs(y - want) / bound : (y == want ? 0.0 : INFINITY);
        if (r > worst) worst = r;
    }
    return worst;
}

int test_case_check(const test_conv_case *c, char *msg, size_t msg_len) {
    test_tolerance tol = test_tolerance_for(&c->p);
    if (c->u_in > tol.u_in) tol.u_in = c->u_in;
    int64_t bad = 0, unwritten = 0, first = -1, first_off = 0;
    double first_tol = 0.0;
    for (int64_t i = 0; i < c->yd.numel; ++i) {
        const int64_t off = element_offset(&c->yd, i);
        const int poisoned = !c->z_in_place && test_is_poison(c->p.dtype, c->hy, off);
        const double y = convnd_ref_load(c->p.dtype, c->hy, off);
        const double bound = test_tolerance_bound(&tol, c->ref[off], c->mag[off]);
        if (poisoned) ++unwritten;
        if (poisoned || !isfinite(y) || !(fabs(y - c->ref[off]) <= bound)) {
            if (first < 0) {
                first = i;
                first_off = off;
                first_tol = bound;
            }
            ++bad;
        }
    }
    int64_t gap = -1;
    const int64_t gaps = gaps_changed(c, &gap);
    if (bad == 0 && gaps == 0) {
        if (msg && msg_len) msg[0] = '\0';
        return 1;
    }
    if (bad == 0) {
        snprintf(msg, msg_len,
                 "%lld positions of y's view that are no element of y were written (or the "
                 "check ran out of memory: -1); first at offset %lld",
                 (long long)gaps, (long long)gap);
        return 0;
    }
    char where[96];
    logical_index(&c->yd, first, where, sizeof where);
    snprintf(msg, msg_len,
             "%lld of %lld outputs wrong (%lld never written); first at y%s: got %.9g, expected "
             "%.9g, |diff| %.3g > tolerance %.3g (magnitude %.3g)",
             (long long)bad, (long long)c->yd.numel, (long long)unwritten, where,
             convnd_ref_load(c->p.dtype, c->hy, first_off), c->ref[first_off],
             fabs(convnd_ref_load(c->p.dtype, c->hy, first_off) - c->ref[first_off]), first_tol,
             c->mag[first_off]);
    return 0;
}
