/* Golden cases from PyTorch (tests/golden/gen_golden.py): each case is a front-end call as a user
 * writes it. The matching binding must produce a problem whose output shape and layout are
 * PyTorch's, and the CPU reference run on that problem must reproduce PyTorch's float64 output.
 * Calls PyTorch rejected must be rejected by the binding. One test per front-end; every failure
 * names its case. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "golden/golden_fixture.h"

#define GOLDEN_DIR CONVND_TESTS_DIR "/golden"
#define GOLDEN_MIN_CASES 320

/* Relative to the magnitude: the reference and PyTorch both compute in f64 and differ only in
 * summation order and libm (~1e-16 * terms); a semantic error is O(1). */
#define GOLDEN_F64_TOL 1e-12

static golden_set fixtures;

static void load_fixtures(void) {
    char err[512] = "";
    cr_assert(golden_load(GOLDEN_DIR, &fixtures, err, sizeof err), "golden fixtures: %s", err);
}

static void free_fixtures(void) {
    golden_free(&fixtures);
}

TestSuite(golden, .init = load_fixtures, .fini = free_fixtures);

/* ---- arguments ------------------------------------------------------------------------------ */

static int is(const golden_case *c, const char *key, const char *value) {
    const char *v = golden_get(c, key);
    return v && strcmp(v, value) == 0;
}

static int shape_arg(const golden_case *c, const char *key, convnd_shape *s) {
    int n = golden_ints(c, key, s->v, CONVND_MAX_RANK);
    s->rank = n;
    return n >= 0;
}

/* A per-dim list argument: NULL when not given ("-"); *ok cleared when malformed. */
static const convnd_ints *ints_arg(const golden_case *c, const char *key, convnd_ints *storage,
                                   int *ok) {
    int n = golden_ints(c, key, storage->v, CONVND_MAX_DIMS);
    if (n == -1) return NULL;
    if (n < 0) *ok = 0;
    storage->len = n;
    return storage;
}

static const convnd_pads *pads_arg(const golden_case *c, const char *key, convnd_pads *storage,
                                   int *ok) {
    int n = golden_ints(c, key, storage->v, 2 * CONVND_MAX_RANK);
    if (n == -1) return NULL;
    if (n < 0) *ok = 0;
    storage->len = n;
    return storage;
}

static int64_t int_arg(const golden_case *c, const char *key, int *ok) {
    int64_t v = 0;
    if (!golden_int(c, key, &v)) *ok = 0;
    return v;
}

static convnd_onnx_auto_pad onnx_auto_pad(const golden_case *c, int *ok) {
    if (is(c, "auto_pad", "NOTSET")) return CONVND_ONNX_NOTSET;
    if (is(c, "auto_pad", "VALID")) return CONVND_ONNX_VALID;
    if (is(c, "auto_pad", "SAME_UPPER")) return CONVND_ONNX_SAME_UPPER;
    if (is(c, "auto_pad", "SAME_LOWER")) return CONVND_ONNX_SAME_LOWER;
    *ok = 0;
    return CONVND_ONNX_NOTSET;
}

/* ---- binding: the front-end call the case records ------------------------------------------- */

/* A torch conv{1,2,3}d call whose padding is a list or "same"/"valid", on input shape x. */
static convnd_status bind_torch_conv(const golden_case *c, int32_t dims, const convnd_shape *x,
                                     const convnd_shape *w, int64_t bias_len, convnd_problem *p,
                                     int *ok) {
    convnd_ints st, pd, dl;
    const convnd_ints *stride = ints_arg(c, "stride", &st, ok);
    const convnd_ints *dilation = ints_arg(c, "dilation", &dl, ok);
    int64_t groups = int_arg(c, "groups", ok);
    if (is(c, "padding", "same") || is(c, "padding", "valid")) {
        convnd_torch_padding mode =
            is(c, "padding", "same") ? CONVND_TORCH_PADDING_SAME : CONVND_TORCH_PADDING_VALID;
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_torch_conv_padding_mode(dims, x, w, bias_len, stride, mode, dilation,
                                                   groups, p);
    }
    const convnd_ints *padding = ints_arg(c, "padding", &pd, ok);
    if (!*ok) return CONVND_ERR_INTERNAL;
    return convnd_bind_torch_conv(dims, x, w, bias_len, stride, padding, dilation, groups, p);
}

/* y = conv(F.pad(x, pad)): bind the conv on the padded shape, then fold the pad into it. */
static convnd_status bind_pad_conv(const golden_case *c, int32_t dims, const convnd_shape *x,
                                   const convnd_shape *w, int64_t bias_len, convnd_problem *p,
                                   int *ok) {
    convnd_pads pad_storage;
    const convnd_pads *pad = pads_arg(c, "pad", &pad_storage, ok);
    if (!*ok || !pad || pad->len % 2 || pad->len > 2 * x->rank) {
        *ok = 0;
        return CONVND_ERR_INTERNAL;
    }
    convnd_shape padded = *x;
    for (int32_t j = 0; j < pad->len / 2; j++) /* torch order: last dim first */
        padded.v[x->rank - 1 - j] += pad->v[2 * j] + pad->v[2 * j + 1];
    convnd_status s = bind_torch_conv(c, dims, &padded, w, bias_len, p, ok);
    if (s != CONVND_OK) return s;
    return convnd_fold_pad(p, pad, CONVND_PAD_CONSTANT, 0.0);
}

/* Calls the binding of case c. *ok is cleared when the case itself is malformed. */
static convnd_status bind_case(const golden_case *c, convnd_problem *p, int *ok) {
    convnd_shape x, w;
    int64_t dims = 0, bias_len = -1;
    if (!shape_arg(c, "x", &x) || !shape_arg(c, "w", &w) || !golden_int(c, "dims", &dims) ||
        !golden_int(c, "bias", &bias_len)) {
        *ok = 0;
        return CONVND_ERR_INTERNAL;
    }
    const int32_t d = (int32_t)dims;
    convnd_ints a, b, e, f, g, h;
    convnd_pads pads_storage;

    if (is(c, "fe", "torch_conv") || is(c, "fe", "torch_conv_mode"))
        return bind_torch_conv(c, d, &x, &w, bias_len, p, ok);
    if (is(c, "fe", "torch_pad_conv")) return bind_pad_conv(c, d, &x, &w, bias_len, p, ok);
    if (is(c, "fe", "torch_conv_transpose")) {
        const convnd_ints *stride = ints_arg(c, "stride", &a, ok);
        const convnd_ints *padding = ints_arg(c, "padding", &b, ok);
        const convnd_ints *output_padding = ints_arg(c, "output_padding", &e, ok);
        const convnd_ints *dilation = ints_arg(c, "dilation", &f, ok);
        int64_t groups = int_arg(c, "groups", ok);
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_torch_conv_transpose(d, &x, &w, bias_len, stride, padding,
                                                output_padding, groups, dilation, p);
    }
    if (is(c, "fe", "torch_convolution") || is(c, "fe", "torch__convolution")) {
        const convnd_ints *stride = ints_arg(c, "stride", &a, ok);
        const convnd_ints *padding = ints_arg(c, "padding", &b, ok);
        const convnd_ints *dilation = ints_arg(c, "dilation", &e, ok);
        const convnd_ints *output_padding = ints_arg(c, "output_padding", &f, ok);
        int32_t transposed = (int32_t)int_arg(c, "transposed", ok);
        int64_t groups = int_arg(c, "groups", ok);
        if (is(c, "fe", "torch__convolution")) {
            int32_t allow_tf32 = (int32_t)int_arg(c, "allow_tf32", ok);
            if (!*ok) return CONVND_ERR_INTERNAL;
            return convnd_bind_torch__convolution(&x, &w, bias_len, stride, padding, dilation,
                                                  transposed, output_padding, groups, allow_tf32,
                                                  p);
        }
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_torch_convolution(&x, &w, bias_len, stride, padding, dilation,
                                             transposed, output_padding, groups, p);
    }
    if (is(c, "fe", "causal_conv")) {
        const convnd_ints *stride = ints_arg(c, "stride", &a, ok);
        const convnd_ints *padding = ints_arg(c, "padding", &b, ok);
        const convnd_ints *dilation = ints_arg(c, "dilation", &e, ok);
        int64_t groups = int_arg(c, "groups", ok);
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_causal_conv(d, &x, &w, bias_len, stride, padding, dilation, groups, p);
    }
    if (is(c, "fe", "onnx_conv") || is(c, "fe", "onnx_conv_transpose")) {
        convnd_onnx_auto_pad auto_pad = onnx_auto_pad(c, ok);
        const convnd_ints *dilations = ints_arg(c, "dilations", &a, ok);
        int64_t group = int_arg(c, "group", ok);
        const convnd_ints *kernel_shape = ints_arg(c, "kernel_shape", &b, ok);
        const convnd_pads *pads = pads_arg(c, "pads", &pads_storage, ok);
        const convnd_ints *strides = ints_arg(c, "strides", &e, ok);
        if (is(c, "fe", "onnx_conv")) {
            if (!*ok) return CONVND_ERR_INTERNAL;
            return convnd_bind_onnx_conv(&x, &w, bias_len, auto_pad, dilations, group, kernel_shape,
                                         pads, strides, p);
        }
        const convnd_ints *output_padding = ints_arg(c, "output_padding", &f, ok);
        const convnd_ints *output_shape = ints_arg(c, "output_shape", &g, ok);
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_onnx_conv_transpose(&x, &w, bias_len, auto_pad, dilations, group,
                                               kernel_shape, output_padding, output_shape, pads,
                                               strides, p);
    }
    if (is(c, "fe", "tf_conv")) {
        const convnd_ints *strides = ints_arg(c, "strides", &a, ok);
        const convnd_ints *dilations = ints_arg(c, "dilations", &h, ok);
        convnd_tf_padding padding = is(c, "padding", "SAME")     ? CONVND_TF_SAME
                                    : is(c, "padding", "CAUSAL") ? CONVND_TF_CAUSAL
                                                                 : CONVND_TF_VALID;
        if (!is(c, "padding", "SAME") && !is(c, "padding", "CAUSAL") && !is(c, "padding", "VALID"))
            *ok = 0;
        convnd_tf_data_format format =
            is(c, "data_format", "NCHW") ? CONVND_TF_CHANNELS_FIRST : CONVND_TF_CHANNELS_LAST;
        if (!*ok) return CONVND_ERR_INTERNAL;
        return convnd_bind_tf_conv(&x, &w, bias_len, strides, padding, dilations, format, p);
    }
    *ok = 0;
    return CONVND_ERR_INTERNAL;
}

/* ---- checking one case ---------------------------------------------------------------------- */

static convnd_layout layout_arg(const golden_case *c, const char *key, int *ok) {
    if (is(c, key, "cf")) return CONVND_CHANNELS_FIRST;
    if (is(c, key, "cl")) return CONVND_CHANNELS_LAST;
    *ok = 0;
    return CONVND_CHANNELS_FIRST;
}

/* Sets what the bindings leave to the caller: dtype, layouts of x and w, the epilogue. */
static int configure(const golden_case *c, convnd_problem *p) {
    int ok = 1;
    if (is(c, "dtype", "f32"))
        p->dtype = CONVND_F32;
    else if (is(c, "dtype", "f16"))
        p->dtype = CONVND_F16;
    else if (is(c, "dtype", "bf16"))
        p->dtype = CONVND_BF16;
    else
        ok = 0;
    convnd_layout xl = layout_arg(c, "xl", &ok), wl = layout_arg(c, "wl", &ok);
    if (is(c, "fe", "tf_conv")) {
        /* the binding sets x's (and y's) layout from data_format */
        cr_expect_eq(p->x_layout, xl, "%s: tf_conv bound x_layout %d, data_format means %d",
                     c->name, (int)p->x_layout, (int)xl);
    }
    p->x_layout = xl;
    p->w_layout = wl;
    double alpha = 1, beta = 0;
    int64_t has_z = 0;
    ok = ok && golden_real(c, "alpha", &alpha) && golden_real(c, "beta", &beta) &&
         golden_int(c, "z", &has_z);
    p->alpha = (float)alpha;
    p->beta = (float)beta;
    p->has_z = (int32_t)has_z;
    if (is(c, "act", "none"))
        p->activation = CONVND_ACT_NONE;
    else if (is(c, "act", "relu"))
        p->activation = CONVND_ACT_RELU;
    else if (is(c, "act", "silu"))
        p->activation = CONVND_ACT_SILU;
    else if (is(c, "act", "gelu"))
        p->activation = CONVND_ACT_GELU;
    else
        ok = 0;
    return ok;
}

/* n fixture values at offset key in dtype dt (golden_tensor); NULL when absent, *ok cleared
 * (with the reason) when out of range or not exact in dt. */
static void *fixture_tensor(const golden_case *c, const char *key, int64_t n, convnd_dtype dt,
                            int *ok) {
    char err[256] = "";
    void *t = NULL;
    const int got = golden_tensor(&fixtures, c, key, n, dt, &t, err, sizeof err);
    cr_expect(got, "%s", err);
    if (!got) *ok = 0;
    return t;
}

static int64_t shape_numel(const golden_case *c, const char *key) {
    int64_t s[CONVND_MAX_RANK];
    int n = golden_ints(c, key, s, CONVND_MAX_RANK);
    int64_t numel = n >= 0 ? 1 : -1;
    for (int i = 0; i < n; i++)
        numel *= s[i];
    return numel;
}

/* Shape and layout of y against PyTorch's; returns the y descriptor's validity. */
static int check_output_shape(const golden_case *c, const convnd_problem *p,
                              convnd_tensor_desc *yd) {
    int64_t expect[CONVND_MAX_RANK];
    int rank = golden_ints(c, "y", expect, CONVND_MAX_RANK);
    convnd_status s = convnd_tensor_describe(p, CONVND_Y, yd);
    cr_expect_eq(s, CONVND_OK, "%s: convnd_tensor_describe(y): %s: %s", c->name,
                 convnd_status_string(s), convnd_last_error());
    if (s != CONVND_OK) return 0;
    int same = yd->rank == rank;
    for (int r = 0; same && r < rank; r++)
        same = yd->shape[r] == expect[r];
    char got[128] = "", want[128] = "";
    for (int r = 0; r < yd->rank; r++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", r ? "," : "",
                 (long long)yd->shape[r]);
    for (int r = 0; r < rank; r++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", r ? "," : "",
                 (long long)expect[r]);
    cr_expect(same, "%s: binding gives y shape [%s], PyTorch [%s]", c->name, got, want);
    int ok = 1;
    convnd_layout yl = layout_arg(c, "yl", &ok);
    cr_expect(ok && yd->layout == yl, "%s: y layout resolves to %d, expected %s", c->name,
              (int)yd->layout, golden_get(c, "yl"));
    return same && ok && yd->layout == yl;
}

/* Runs the reference on the bound problem and compares with PyTorch's f64 output: the exact
 * result within GOLDEN_F64_TOL of the magnitude, the rounded output within one ulp of the
 * output dtype (plus the same slack). Reports the first mismatch. */
static void check_values(const golden_case *c, const convnd_problem *p,
                         const convnd_tensor_desc *yd) {
    convnd_tensor_desc xd, wd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X, &xd), CONVND_OK, "%s", c->name);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_W, &wd), CONVND_OK, "%s", c->name);
    cr_expect_eq(xd.numel, shape_numel(c, "x"), "%s: x has %lld elements, the call %lld", c->name,
                 (long long)xd.numel, (long long)shape_numel(c, "x"));
    cr_expect_eq(wd.numel, shape_numel(c, "w"), "%s: w has %lld elements, the call %lld", c->name,
                 (long long)wd.numel, (long long)shape_numel(c, "w"));
    int ok = 1;
    const convnd_dtype dt = p->dtype;
    void *x = fixture_tensor(c, "xo", xd.numel, dt, &ok);
    void *w = fixture_tensor(c, "wo", wd.numel, dt, &ok);
    void *bias = fixture_tensor(c, "bo", p->C_out, dt, &ok);
    void *z = fixture_tensor(c, "zo", yd->numel, dt, &ok);
    int64_t yo = -1;
    ok = ok && golden_int(c, "yo", &yo) && yo >= 0 && yo + yd->numel <= fixtures.n_expected;
    ok = ok && x && w && (bias != NULL) == (p->has_bias != 0) && (z != NULL) == (p->has_z != 0);
    cr_expect(ok, "%s: fixture data missing, out of range or not representable", c->name);

    size_t n = (size_t)(yd->numel > 0 ? yd->numel : 1);
    void *y = malloc(n * convnd_ref_dtype_size(dt));
    double *exact = malloc(n * sizeof(double)), *mag = malloc(n * sizeof(double));
    if (ok && y && exact && mag) {
        memset(y, 0xff, n * convnd_ref_dtype_size(dt)); /* NaN: an unwritten output shows */
        convnd_status s1 = convnd_ref_conv(p, x, w, bias, z, y);
        convnd_status s2 = convnd_ref_conv_f64(p, x, w, bias, z, exact, mag);
        cr_expect(s1 == CONVND_OK && s2 == CONVND_OK, "%s: reference failed: %s", c->name,
                  convnd_status_string(s1 != CONVND_OK ? s1 : s2));
        const double *want = fixtures.expected + yo;
        for (int64_t i = 0; s1 == CONVND_OK && s2 == CONVND_OK && i < yd->numel; i++) {
            const double slack = GOLDEN_F64_TOL * CONVND_REF_ACT_MAX_SLOPE * mag[i];
            const double rounded = convnd_ref_load(dt, y, i);
            const int exact_ok = fabs(exact[i] - want[i]) <= slack;
            const int rounded_ok = fabs(rounded - want[i]) <= convnd_ref_ulp(dt, want[i]) + slack;
            if (!exact_ok || !rounded_ok) {
                cr_expect(0,
                          "%s: y[%lld] (memory order): PyTorch %.17g, reference %.17g (rounded "
                          "%.9g), magnitude %.3g",
                          c->name, (long long)i, want[i], exact[i], rounded, mag[i]);
                break;
            }
        }
    }
    free(x);
    free(w);
    free(bias);
    free(z);
    free(y);
    free(exact);
    free(mag);
}

/* Checks one case; returns 1 when it ran (not malformed). */
static int check_case(const golden_case *c) {
    convnd_problem p, untouched;
    memset(&p, 0x5a, sizeof p);
    untouched = p;
    int ok = 1;
    convnd_status s = bind_case(c, &p, &ok);
    cr_expect(ok, "%s: malformed case", c->name);
    if (!ok) return 0;
    if (is(c, "expect", "error")) {
        cr_expect_neq(s, CONVND_OK, "%s: the binding accepted a call PyTorch rejects (%s)", c->name,
                      golden_get(c, "err") ? golden_get(c, "err") : "");
        cr_expect(s == CONVND_OK || memcmp(&p, &untouched, sizeof p) == 0,
                  "%s: the binding wrote its output problem on error", c->name);
        cr_expect(s == CONVND_OK || convnd_last_error()[0] != '\0',
                  "%s: rejected without a message", c->name);
        return 1;
    }
    if (is(c, "foldable", "0")) {
        /* PyTorch zero-fills positions the pad cropped; no conv padding of x does that */
        cr_expect_neq(s, CONVND_OK,
                      "%s: the pad crops where the conv pads (pad=%s, padding=%s): folding it "
                      "changes the result, the fold must refuse",
                      c->name, golden_get(c, "pad"), golden_get(c, "padding"));
        cr_expect(s == CONVND_OK || convnd_last_error()[0] != '\0', "%s: refused without a message",
                  c->name);
        return 1;
    }
    cr_expect_eq(s, CONVND_OK, "%s: binding failed: %s: %s", c->name, convnd_status_string(s),
                 convnd_last_error());
    if (s != CONVND_OK) return 1;
    cr_expect(configure(c, &p), "%s: malformed dtype, layout or epilogue", c->name);
    convnd_tensor_desc yd;
    if (check_output_shape(c, &p, &yd)) check_values(c, &p, &yd);
    return 1;
}

/* Checks every case of front-end fe (NULL: all) with the given expectation. */
static void check_front_end(const char *fe, const char *expect) {
    int checked = 0;
    for (int32_t i = 0; i < fixtures.count; i++) {
        const golden_case *c = &fixtures.cases[i];
        if ((fe && !is(c, "fe", fe)) || !is(c, "expect", expect)) continue;
        checked += check_case(c);
    }
    cr_assert_gt(checked, 0, "no golden case for %s", fe ? fe : "(all)");
    cr_log_info("golden %s: %d cases", fe ? fe : "rejections", checked);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static const char *const FRONT_ENDS[] = {
    "torch_conv",          "torch_conv_mode", "torch_conv_transpose", "torch_convolution",
    "torch__convolution",  "torch_pad_conv",  "causal_conv",          "onnx_conv",
    "onnx_conv_transpose", "tf_conv"};

Test(golden, fixtures_cover_every_front_end) {
    cr_assert_geq(fixtures.count, GOLDEN_MIN_CASES, "only %d golden cases", fixtures.count);
    for (size_t f = 0; f < sizeof FRONT_ENDS / sizeof FRONT_ENDS[0]; f++) {
        int n = 0;
        for (int32_t i = 0; i < fixtures.count; i++)
            n += is(&fixtures.cases[i], "fe", FRONT_ENDS[f]);
        cr_expect_gt(n, 0, "no golden case for front-end %s", FRONT_ENDS[f]);
    }
    int known = 0, errors = 0, half = 0, layouts = 0, epilogue = 0;
    for (int32_t i = 0; i < fixtures.count; i++) {
        const golden_case *c = &fixtures.cases[i];
        for (size_t f = 0; f < sizeof FRONT_ENDS / sizeof FRONT_ENDS[0]; f++)
            known += is(c, "fe", FRONT_ENDS[f]);
        errors += is(c, "expect", "error");
        half += !is(c, "dtype", "f32");
        layouts += is(c, "xl", "cl") || is(c, "wl", "cl");
        epilogue += !is(c, "act", "none") || is(c, "z", "1");
    }
    cr_expect_eq(known, fixtures.count, "cases with an unknown front-end");
    cr_expect_geq(errors, 5, "rejection cases: %d", errors);
    cr_expect_geq(half, 5, "f16/bf16 cases: %d", half);
    cr_expect_geq(layouts, 20, "channels-last cases: %d", layouts);
    cr_expect_geq(epilogue, 10, "epilogue cases: %d", epilogue);
}

Test(golden, torch_conv) {
    check_front_end("torch_conv", "ok");
}
Test(golden, torch_conv_same_valid) {
    check_front_end("torch_conv_mode", "ok");
}
Test(golden, torch_conv_transpose) {
    check_front_end("torch_conv_transpose", "ok");
}
Test(golden, torch_convolution) {
    check_front_end("torch_convolution", "ok");
}
Test(golden, torch__convolution) {
    check_front_end("torch__convolution", "ok");
}
Test(golden, torch_pad_folded_into_conv) {
    check_front_end("torch_pad_conv", "ok");
}
Test(golden, causal_conv) {
    check_front_end("causal_conv", "ok");
}
Test(golden, onnx_conv) {
    check_front_end("onnx_conv", "ok");
}
Test(golden, onnx_conv_transpose) {
    check_front_end("onnx_conv_transpose", "ok");
}
Test(golden, tf_conv) {
    check_front_end("tf_conv", "ok");
}
Test(golden, torch_rejections) {
    check_front_end(NULL, "error");
}
