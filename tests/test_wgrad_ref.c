/* The backward reference and bindings (SPEC §10), checked by identities that need no other
 * reference:
 * - wgrad: <dy, F_w(x)> = <wgrad(x, dy), w> for random w, forward and transposed problems;
 * - convnd_bind_wgrad on a transposed problem (swap operands) equals the reference's direct
 *   transposed formula;
 * - convnd_bind_dgrad: the result has exactly x's shape and <F(x), dy> = <x, dgrad(dy)>, for
 *   forward and transposed problems.
 * All in f64 through the CPU reference (inputs rounded to the problem's dtype first). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "test_problem_text.h"
#include "test_random.h"

/* A valid problem without epilogue: dims 1-3, forward or transposed, strides 1-3, dilation 1-3,
 * padding -2..E, groups 1-3 (sometimes depthwise), any layouts and dtype. */
static void random_problem(test_rng *r, convnd_mode mode, convnd_problem *p) {
    static const int64_t kmax[] = {5, 3, 2}, imax[] = {17, 7, 4};
    for (;;) {
        convnd_problem_init(p, (int32_t)test_rng_int(r, 1, 3));
        p->mode = mode;
        p->N = test_rng_int(r, 1, 2);
        p->groups = test_rng_int(r, 1, 3);
        const int depthwise = test_rng_int(r, 0, 3) == 0;
        p->C_in = p->groups * (depthwise ? 1 : test_rng_int(r, 1, 4));
        p->C_out = p->groups * test_rng_int(r, 1, 4);
        for (int32_t t = 0; t < p->dims; ++t) {
            p->kernel[t] = test_rng_int(r, 1, kmax[p->dims - 1]);
            p->stride[t] = test_rng_int(r, 1, 3);
            p->dilation[t] = test_rng_int(r, 1, 3);
            const int64_t e = p->dilation[t] * (p->kernel[t] - 1) + 1;
            p->pad_before[t] = test_rng_int(r, -2, e - 1);
            p->pad_after[t] = test_rng_int(r, -2, e - 1);
            p->input[t] = test_rng_int(r, 1, imax[p->dims - 1]);
        }
        p->dtype = (convnd_dtype)test_rng_int(r, 0, 2);
        p->x_layout = (convnd_layout)test_rng_int(r, 0, 1);
        p->w_layout = (convnd_layout)test_rng_int(r, 0, 1);
        p->y_layout = (convnd_layout)test_rng_int(r, 0, 2);
        if (convnd_validate(p) == CONVND_OK) return;
    }
}

/* Host buffer of a tensor of p, filled with random values of p's dtype. */
static void *random_tensor(const convnd_problem *p, convnd_tensor which, test_rng *r,
                           int64_t *numel) {
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(p, which, &d), CONVND_OK, "%s", convnd_last_error());
    void *h = calloc((size_t)(d.numel > 0 ? d.numel : 1), convnd_ref_dtype_size(p->dtype));
    cr_assert(h);
    test_fill_random(p->dtype, h, d.numel, r);
    *numel = d.numel;
    return h;
}

static double dot_f64(const double *a, convnd_dtype dt, const void *b, int64_t n, double *mag) {
    double s = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double t = a[i] * convnd_ref_load(dt, b, i);
        s += t;
        m += fabs(t);
    }
    if (mag) *mag = m;
    return s;
}

static double *f64_buffer(int64_t n) {
    double *b = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    cr_assert(b);
    return b;
}

/* <dy, F_w(x)> against <wgrad(x, dy), w> for one problem (forward or transposed). Returns 0 when
 * the identity was vacuous (every output in the padding: no product at all). */
static int check_wgrad_identity(const convnd_problem *p, test_rng *r) {
    int64_t nx, nw, ny;
    void *x = random_tensor(p, CONVND_X, r, &nx);
    void *w = random_tensor(p, CONVND_W, r, &nw);
    void *dy = random_tensor(p, CONVND_Y, r, &ny);
    double *y = f64_buffer(ny), *dw = f64_buffer(nw);
    convnd_problem f = *p; /* F_w: a wgrad problem's forward conv */
    if (f.mode == CONVND_WGRAD) f.mode = CONVND_FORWARD;
    cr_assert_eq(convnd_ref_conv_f64(&f, x, w, NULL, NULL, y, NULL), CONVND_OK);
    cr_assert_eq(convnd_ref_wgrad_f64(p, x, dy, NULL, dw, NULL), CONVND_OK);
    double mag_l, mag_r;
    const double lhs = dot_f64(y, p->dtype, dy, ny, &mag_l);
    const double rhs = dot_f64(dw, p->dtype, w, nw, &mag_r);
    char text[512];
    /* both sides are the same sum of exact products in f64, in different orders */
    cr_expect(fabs(lhs - rhs) <= 1e-12 * (mag_l + mag_r) + 1e-300,
              "<dy, F_w(x)> = %.17g but <wgrad(x, dy), w> = %.17g\n  %s", lhs, rhs,
              convnd_problem_format(text, sizeof text, p));
    free(x), free(w), free(dy), free(y), free(dw);
    return mag_l > 0.0;
}

/* 150 random problems of `mode` (forward ones also in wgrad mode: same shapes, same result);
 * at least 5 in 6 must have a product at all. */
static void check_identity_on_random(convnd_mode mode, uint64_t seed) {
    test_rng r = test_rng_seed(seed);
    int meaningful = 0, cases = 0;
    for (int i = 0; i < 150; ++i) {
        convnd_problem p;
        random_problem(&r, mode, &p);
        meaningful += check_wgrad_identity(&p, &r), ++cases;
        if (mode != CONVND_FORWARD) continue;
        p.mode = CONVND_WGRAD;
        meaningful += check_wgrad_identity(&p, &r), ++cases;
    }
    cr_expect(6 * meaningful > 5 * cases, "only %d of %d cases had any product", meaningful, cases);
}

Test(wgrad_ref, adjoint_identity_forward) {
    check_identity_on_random(CONVND_FORWARD, 0x5eed0151);
}

Test(wgrad_ref, adjoint_identity_transposed) {
    check_identity_on_random(CONVND_TRANSPOSED, 0x5eed0152);
}

/* A planted error in the reference's tap (k*D off by one) breaks the identity: the check can
 * fail. Done here on a copy of the definition: dw via a wrong tap must disagree. */
Test(wgrad_ref, identity_detects_a_wrong_dw) {
    test_rng r = test_rng_seed(7);
    convnd_problem p;
    cr_assert(test_problem_parse("fwd 1d N=2 Ci=3 Co=2 I=9 K=3 S=2 D=1 P0=1 P1=1", &p, NULL, 0));
    int64_t nx, nw, ny;
    void *x = random_tensor(&p, CONVND_X, &r, &nx);
    void *w = random_tensor(&p, CONVND_W, &r, &nw);
    void *dy = random_tensor(&p, CONVND_Y, &r, &ny);
    double *y = f64_buffer(ny), *dw = f64_buffer(nw);
    cr_assert_eq(convnd_ref_conv_f64(&p, x, w, NULL, NULL, y, NULL), CONVND_OK);
    cr_assert_eq(convnd_ref_wgrad_f64(&p, x, dy, NULL, dw, NULL), CONVND_OK);
    dw[1] += 0.25; /* one wrong element */
    const double lhs = dot_f64(y, p.dtype, dy, ny, NULL);
    const double rhs = dot_f64(dw, p.dtype, w, nw, NULL);
    cr_expect(fabs(lhs - rhs) > 1e-3, "a wrong dw element went unnoticed");
    free(x), free(w), free(dy), free(y), free(dw);
}

Test(wgrad_ref, bind_wgrad_transposed_swaps_operands) {
    test_rng r = test_rng_seed(0x5eed0153);
    for (int i = 0; i < 100; ++i) {
        convnd_problem t, q;
        random_problem(&r, CONVND_TRANSPOSED, &t);
        int32_t swap = -1;
        cr_assert_eq(convnd_bind_wgrad(&t, &q, &swap), CONVND_OK, "%s", convnd_last_error());
        cr_assert_eq(swap, 1);
        cr_assert_eq(q.mode, CONVND_WGRAD);
        int64_t nx, ny, nw;
        void *x = random_tensor(&t, CONVND_X, &r, &nx);
        void *dy = random_tensor(&t, CONVND_Y, &r, &ny);
        convnd_tensor_desc tw, qw, qx, qy;
        cr_assert_eq(convnd_tensor_describe(&t, CONVND_W, &tw), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&q, CONVND_W, &qw), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&q, CONVND_X, &qx), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&q, CONVND_Y, &qy), CONVND_OK);
        nw = tw.numel;
        cr_assert_eq(qx.numel, ny);
        cr_assert_eq(qy.numel, nx);
        cr_assert_eq(memcmp(tw.shape, qw.shape, sizeof tw.shape), 0, "dw shape differs");
        cr_assert_eq(memcmp(tw.strides, qw.strides, sizeof tw.strides), 0, "dw strides differ");
        double *direct = f64_buffer(nw), *bound = f64_buffer(nw), *mag = f64_buffer(nw);
        cr_assert_eq(convnd_ref_wgrad_f64(&t, x, dy, NULL, direct, mag), CONVND_OK);
        cr_assert_eq(convnd_ref_wgrad_f64(&q, dy, x, NULL, bound, NULL), CONVND_OK);
        char text[512];
        for (int64_t e = 0; e < nw; ++e)
            cr_expect(fabs(direct[e] - bound[e]) <= 1e-12 * mag[e],
                      "dw[%lld]: transposed formula %.17g, bound wgrad %.17g\n  %s", (long long)e,
                      direct[e], bound[e], convnd_problem_format(text, sizeof text, &t));
        free(x), free(dy), free(direct), free(bound), free(mag);
    }
}

/* dgrad of p (forward or transposed): output shape == p's x shape, and <p(x), dy> = <x, dx>. */
static void check_dgrad(const convnd_problem *p, test_rng *r) {
    convnd_problem d;
    char text[512];
    cr_assert_eq(convnd_bind_dgrad(p, &d), CONVND_OK, "%s\n  %s", convnd_last_error(),
                 convnd_problem_format(text, sizeof text, p));
    cr_assert_eq(d.mode, p->mode == CONVND_FORWARD ? CONVND_TRANSPOSED : CONVND_FORWARD);
    convnd_tensor_desc px, py, dx, dyd, pw, dw;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X, &px), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_Y, &py), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_W, &pw), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&d, CONVND_Y, &dx), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&d, CONVND_X, &dyd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&d, CONVND_W, &dw), CONVND_OK);
    /* dx is exactly x (shape and layout), dy exactly y, the weight the same tensor */
    cr_expect_eq(memcmp(px.shape, dx.shape, sizeof px.shape), 0, "dx shape != x shape\n  %s",
                 convnd_problem_format(text, sizeof text, p));
    cr_expect_eq(memcmp(px.strides, dx.strides, sizeof px.strides), 0, "dx strides != x's");
    cr_expect_eq(memcmp(py.strides, dyd.strides, sizeof py.strides), 0, "dy strides != y's");
    cr_expect_eq(memcmp(pw.strides, dw.strides, sizeof pw.strides), 0, "w strides differ");
    int64_t nx, nw, ny;
    void *x = random_tensor(p, CONVND_X, r, &nx);
    void *w = random_tensor(p, CONVND_W, r, &nw);
    void *dy = random_tensor(p, CONVND_Y, r, &ny);
    double *y = f64_buffer(ny), *g = f64_buffer(nx);
    cr_assert_eq(convnd_ref_conv_f64(p, x, w, NULL, NULL, y, NULL), CONVND_OK);
    cr_assert_eq(convnd_ref_conv_f64(&d, dy, w, NULL, NULL, g, NULL), CONVND_OK);
    double ml, mr;
    const double lhs = dot_f64(y, p->dtype, dy, ny, &ml);
    const double rhs = dot_f64(g, p->dtype, x, nx, &mr);
    cr_expect(fabs(lhs - rhs) <= 1e-12 * (ml + mr) + 1e-300,
              "<F(x), dy> = %.17g but <x, dgrad(dy)> = %.17g\n  %s", lhs, rhs,
              convnd_problem_format(text, sizeof text, p));
    free(x), free(w), free(dy), free(y), free(g);
}

Test(wgrad_ref, bind_dgrad_shape_and_duality) {
    test_rng r = test_rng_seed(0x5eed0154);
    for (int i = 0; i < 150; ++i) {
        convnd_problem p;
        random_problem(&r, i % 2 ? CONVND_TRANSPOSED : CONVND_FORWARD, &p);
        check_dgrad(&p, &r);
    }
}

/* PyTorch's floor-away case: stride 2 on an even input drops a row; dx must still be 8 wide. */
Test(wgrad_ref, bind_dgrad_restores_floored_size) {
    convnd_problem p, d;
    cr_assert(test_problem_parse("fwd 2d N=1 Ci=3 Co=4 I=8,7 K=3 S=2,3 P0=1 P1=1", &p, NULL, 0));
    cr_assert_eq(convnd_bind_dgrad(&p, &d), CONVND_OK, "%s", convnd_last_error());
    int64_t o[CONVND_MAX_DIMS];
    cr_assert_eq(convnd_output_size(&d, o), CONVND_OK);
    cr_expect(o[0] == 8 && o[1] == 7, "dgrad output %lldx%lld, x is 8x7", (long long)o[0],
              (long long)o[1]);
    cr_expect(d.C_in == 4 && d.C_out == 3 && d.mode == CONVND_TRANSPOSED);
}

Test(wgrad_ref, bind_errors) {
    convnd_problem p, out;
    cr_assert(test_problem_parse("wg 1d Ci=2 Co=2 I=5 K=3", &p, NULL, 0));
    memset(&out, 0x5a, sizeof out);
    const convnd_problem before = out;
    int32_t swap = 7;
    cr_expect_eq(convnd_bind_dgrad(&p, &out), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "mode=wgrad"), "%s", convnd_last_error());
    cr_expect_eq(convnd_bind_wgrad(&p, &out, &swap), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect_eq(memcmp(&out, &before, sizeof out), 0, "out written on error");
    cr_expect_eq(swap, 7, "swap written on error");
    cr_assert(test_problem_parse("tr 1d Ci=2 Co=2 I=5 K=3", &p, NULL, 0));
    cr_expect_eq(convnd_bind_wgrad(&p, &out, NULL), CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "swap_operands"), "%s", convnd_last_error());
    cr_expect_eq(convnd_bind_dgrad(NULL, &out), CONVND_ERR_NULL_POINTER);
    /* a forward problem's epilogue does not carry over */
    cr_assert(test_problem_parse("fwd 1d Ci=2 Co=2 I=5 K=3 bias act=relu", &p, NULL, 0));
    cr_assert_eq(convnd_bind_wgrad(&p, &out, &swap), CONVND_OK, "%s", convnd_last_error());
    cr_expect(out.has_bias == 0 && out.activation == CONVND_ACT_NONE && swap == 0);
}
