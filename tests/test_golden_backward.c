/* Backward golden cases from PyTorch autograd (tests/golden_backward/gen_golden_backward.py):
 * F.conv{1,2,3}d and F.conv_transpose{1,2,3}d bound by the PyTorch front-end, then
 * convnd_bind_dgrad / convnd_bind_wgrad. The CPU reference on the bound problems must reproduce
 * autograd's float64 dx and dw, and conv_nd (the planner's dgrad, every wgrad schedule forced)
 * must land within the dtype's tolerance of them, with its outputs poisoned first. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "golden/golden_fixture.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_tolerance.h"

#define GOLDEN_BWD_DIR CONVND_TESTS_DIR "/golden_backward"
#define GOLDEN_BWD_MIN_CASES 72
#define GOLDEN_F64_TOL 1e-12 /* f64 vs f64: summation order only */

static golden_set fixtures;

static void load_fixtures(void) {
    char err[512] = "";
    cr_assert(golden_load(GOLDEN_BWD_DIR, &fixtures, err, sizeof err), "fixtures: %s", err);
}

static void free_fixtures(void) {
    golden_free(&fixtures);
}

TestSuite(golden_backward, .init = load_fixtures, .fini = free_fixtures);

static convnd_ints ints_of(const golden_case *c, const char *key) {
    convnd_ints v;
    v.len = golden_ints(c, key, v.v, CONVND_MAX_RANK);
    cr_assert(v.len > 0, "%s: bad %s", c->name, key);
    return v;
}

static convnd_shape shape_of(const golden_case *c, const char *key) {
    convnd_shape s;
    s.rank = golden_ints(c, key, s.v, CONVND_MAX_RANK);
    cr_assert(s.rank > 0, "%s: bad %s", c->name, key);
    return s;
}

static int64_t offset_of(const golden_case *c, const char *key) {
    int64_t v;
    cr_assert(golden_int(c, key, &v), "%s: no %s", c->name, key);
    return v;
}

/* The case's forward or transposed problem, bound as PyTorch's call. */
static convnd_problem bind_case(const golden_case *c) {
    int64_t dims, groups;
    cr_assert(golden_int(c, "dims", &dims) && golden_int(c, "groups", &groups));
    const convnd_shape x = shape_of(c, "x"), w = shape_of(c, "w");
    const convnd_ints s = ints_of(c, "stride"), p = ints_of(c, "padding"),
                      d = ints_of(c, "dilation"), op = ints_of(c, "output_padding");
    convnd_problem q;
    const char *fe = golden_get(c, "fe");
    convnd_status st =
        strcmp(fe, "conv") == 0
            ? convnd_bind_torch_conv((int32_t)dims, &x, &w, -1, &s, &p, &d, groups, &q)
            : convnd_bind_torch_conv_transpose((int32_t)dims, &x, &w, -1, &s, &p, &op, groups, &d,
                                               &q);
    cr_assert_eq(st, CONVND_OK, "%s: bind: %s", c->name, convnd_last_error());
    const char *dt = golden_get(c, "dtype");
    q.dtype = strcmp(dt, "f16") == 0    ? CONVND_F16
              : strcmp(dt, "bf16") == 0 ? CONVND_BF16
                                        : CONVND_F32;
    return q;
}

/* n fixture values at offset key, stored in dt (golden_tensor: exact, present). */
static void *host_tensor(const golden_case *c, const char *key, convnd_dtype dt, int64_t n) {
    char err[256] = "";
    void *t = NULL;
    cr_assert(golden_tensor(&fixtures, c, key, n, dt, &t, err, sizeof err) && t, "%s %s", err, key);
    return t;
}

static int64_t numel(const convnd_problem *p, convnd_tensor t) {
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(p, t, &d), CONVND_OK, "%s", convnd_last_error());
    return d.numel;
}

/* One backward output: the reference (mag for the tolerance) must match autograd in f64, and
 * conv_nd by spec (NULL: the planner) within the dtype's bound. out_tensor: which descriptor of
 * q is the output (Y for dgrad, W for wgrad). */
static void check_output(const golden_case *c, const char *what, const convnd_problem *q,
                         convnd_tensor out_tensor, const void *a, const void *b,
                         const double *expected, const char *spec) {
    const int64_t na = numel(q, CONVND_X), nout = numel(q, out_tensor);
    const int64_t nb = numel(q, out_tensor == CONVND_W ? CONVND_Y : CONVND_W);
    cr_assert(expected + nout <= fixtures.expected + fixtures.n_expected);
    double *ref = calloc((size_t)nout + 1, sizeof(double)), *mag = calloc((size_t)nout + 1, 8);
    cr_assert(ref && mag);
    const convnd_status rs = out_tensor == CONVND_W
                                 ? convnd_ref_wgrad_f64(q, a, b, NULL, ref, mag)
                                 : convnd_ref_conv_f64(q, a, b, NULL, NULL, ref, mag);
    cr_assert_eq(rs, CONVND_OK, "%s %s: reference: %s", c->name, what, convnd_last_error());
    for (int64_t i = 0; i < nout; ++i)
        cr_expect(fabs(ref[i] - expected[i]) <= GOLDEN_F64_TOL * (mag[i] + 1e-300),
                  "%s %s[%lld]: reference %.17g, autograd %.17g", c->name, what, (long long)i,
                  ref[i], expected[i]);

    const size_t es = convnd_ref_dtype_size(q->dtype);
    void *da = test_device_upload(q->dtype, a, na), *db = test_device_upload(q->dtype, b, nb);
    void *dout = test_device_upload(q->dtype, NULL, nout); /* poisoned */
    convnd_options opts = {.schedule = spec};
    size_t ws_bytes = 0;
    cr_assert_eq(convnd_workspace_size(q, &opts, &ws_bytes), CONVND_OK, "%s", convnd_last_error());
    void *ws = ws_bytes ? test_device_upload(CONVND_F32, NULL, (int64_t)(ws_bytes / 4 + 1)) : NULL;
    const convnd_status st = conv_nd(q, da, db, NULL, NULL, dout, ws, ws_bytes, NULL, &opts);
    cr_expect_eq(st, CONVND_OK, "%s %s by %s: %s", c->name, what, spec ? spec : "planner",
                 convnd_last_error());
    void *h = malloc(es * (size_t)(nout + 1));
    cr_assert(h);
    convnd_memcpy_d2h(h, dout, es * (size_t)nout);
    const test_tolerance tol = test_tolerance_for(q);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < nout; ++i) {
        const double v = convnd_ref_load(q->dtype, h, i);
        if (!(fabs(v - expected[i]) <= test_tolerance_bound(&tol, expected[i], mag[i]))) {
            if (first < 0) first = i;
            ++bad;
        }
    }
    cr_expect(bad == 0, "%s %s by %s: %lld of %lld wrong, first [%lld] got %.9g, autograd %.9g",
              c->name, what, spec ? spec : "planner", (long long)bad, (long long)nout,
              (long long)first, first >= 0 ? convnd_ref_load(q->dtype, h, first) : 0.0,
              first >= 0 ? expected[first] : 0.0);
    free(h), free(ref), free(mag);
    convnd_free(da), convnd_free(db), convnd_free(dout);
    if (ws) convnd_free(ws);
}

Test(golden_backward, autograd_dx_and_dw) {
    cr_assert(fixtures.count >= GOLDEN_BWD_MIN_CASES, "only %d cases", (int)fixtures.count);
    const char *wgrad_specs[] = {NULL,
                                 "wgrad_direct",
                                 "wgrad_splitk:k8",
                                 "wgrad_splitk:k128",
                                 "wgrad_igemm_simt:64x64x8_k1",
                                 "wgrad_igemm_simt:32x32x8_k8"};
    for (int32_t i = 0; i < fixtures.count; ++i) {
        const golden_case *c = &fixtures.cases[i];
        const convnd_problem p = bind_case(c);
        const convnd_shape y = shape_of(c, "y");
        convnd_tensor_desc yd;
        cr_assert_eq(convnd_tensor_describe(&p, CONVND_Y, &yd), CONVND_OK);
        cr_assert(yd.rank == y.rank && memcmp(yd.shape, y.v, sizeof(int64_t) * (size_t)y.rank) == 0,
                  "%s: y shape differs from PyTorch's", c->name);
        void *x = host_tensor(c, "xo", p.dtype, numel(&p, CONVND_X));
        void *w = host_tensor(c, "wo", p.dtype, numel(&p, CONVND_W));
        void *dy = host_tensor(c, "dyo", p.dtype, yd.numel);
        const double *dx = fixtures.expected + offset_of(c, "dxo");
        const double *dw = fixtures.expected + offset_of(c, "dwo");

        convnd_problem dg, wg;
        int32_t swap = -1;
        cr_assert_eq(convnd_bind_dgrad(&p, &dg), CONVND_OK, "%s: %s", c->name, convnd_last_error());
        cr_assert_eq(convnd_bind_wgrad(&p, &wg, &swap), CONVND_OK, "%s: %s", c->name,
                     convnd_last_error());
        check_output(c, "dx", &dg, CONVND_Y, dy, w, dx, NULL);
        for (size_t s = 0; s < sizeof wgrad_specs / sizeof wgrad_specs[0]; ++s)
            check_output(c, "dw", &wg, CONVND_W, swap ? dy : x, swap ? x : dy, dw, wgrad_specs[s]);
        /* the schedules with a narrower domain, on the cases inside it: tensor cores take the
         * 16-bit fixtures (f32 ones are exact-math), the depthwise one C_in/g = 1 */
        if (wg.dtype != CONVND_F32)
            check_output(c, "dw", &wg, CONVND_W, swap ? dy : x, swap ? x : dy, dw,
                         "wgrad_igemm_tc:32x32x32_k8");
        if (wg.C_in == wg.groups)
            check_output(c, "dw", &wg, CONVND_W, swap ? dy : x, swap ? x : dy, dw,
                         "wgrad_depthwise:s16");
        free(x), free(w), free(dy);
    }
}
