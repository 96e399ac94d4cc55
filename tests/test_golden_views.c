/* PyTorch golden fixtures of views (SPEC §11), prefix inputs and state outputs (SPEC §12) and
 * halo inputs (SPEC §14) (tests/golden/views/gen_golden_views.py): the copy-based code users
 * write today (Wan's cat + pad + conv3d causal cache and causal conv1d over cat(prefix, x), a
 * shard's cat(prefix, shard, suffix) + pad + conv, slice writes into bigger buffers, convs of
 * slices and padded pitches) replayed through convnd_plan_create +
 * convnd_plan_execute_io on the active device, with the planner's choice and with every
 * schedule:config that supports the case, in every thread order, y's view and the state poisoned
 * before each run. y must land within its dtype's tolerance of PyTorch's float64 result; the
 * state (a copy) and every element of y's buffer outside y's view must be bit for bit what they
 * should be. The cache cases also run as bound by convnd_bind_causal_conv +
 * convnd_bind_causal_cache. The C reference must reproduce PyTorch too. */
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
#include "test_orders.h"
#include "test_schedule_runs.h"
#include "test_tolerance.h"

#define GOLDEN_VIEWS_DIR CONVND_TESTS_DIR "/golden/views"
#define GOLDEN_VIEWS_MIN_CASES 27
/* The reference and PyTorch both compute in f64 and differ only in summation order and libm
 * (~1e-16 per term, relative to the magnitude); a semantic error is O(1). */
#define GOLDEN_F64_TOL 1e-12

static golden_set fixtures;

static void load_fixtures(void) {
    char err[512] = "";
    cr_assert(golden_load(GOLDEN_VIEWS_DIR, &fixtures, err, sizeof err), "fixtures: %s", err);
}

static void free_fixtures(void) {
    golden_free(&fixtures);
}

TestSuite(golden_views, .init = load_fixtures, .fini = free_fixtures, .timeout = 600);

/* ---- one case's host data ------------------------------------------------------------------ */

/* Loaded once per case and shared by every route, schedule and thread order. Buffers are host
 * copies in the case's dtype; x, z and y are views at an element offset (*at) into theirs. */
typedef struct views_case {
    const golden_case *c;
    convnd_problem p; /* as the generator wrote it */
    convnd_tensor_desc yd, pd, fd, sd;
    size_t es;
    int x_in_y, z_in_y; /* x or z is a view of y's buffer */
    int64_t xn, zn, yn, wn, xat, zat, yat;
    void *xbuf, *prefix, *suffix, *w, *bias, *zbuf;
    void *ybuf;             /* y's buffer before the call: fixture contents or poison */
    unsigned char *in_view; /* yn flags: the elements of y's buffer that y's view covers */
    const double *expected; /* yn values: the whole buffer after PyTorch's code */
    void *state_expected;   /* sd.numel elements, exact in the dtype */
    double *mag;            /* reference magnitudes, indexed like y from its base */
    test_tolerance tol;
} views_case;

static int64_t gint(const golden_case *c, const char *key) {
    int64_t v = 0;
    cr_assert(golden_int(c, key, &v), "%s: no integer %s", c->name, key);
    return v;
}

/* n fixture values at offset key, stored in dt (golden_tensor: exact); NULL when absent. */
static void *fixture_tensor(const golden_case *c, const char *key, int64_t n, convnd_dtype dt) {
    char err[256] = "";
    void *t = NULL;
    cr_assert(golden_tensor(&fixtures, c, key, n, dt, &t, err, sizeof err), "%s", err);
    return t;
}

/* The problem text of the case ("problem=" with ';' for spaces), parsed and validated. */
static convnd_problem case_problem(const golden_case *c) {
    const char *text = golden_get(c, "problem");
    cr_assert(text, "%s: no problem", c->name);
    char buf[512];
    cr_assert(strlen(text) < sizeof buf, "%s: problem too long", c->name);
    strcpy(buf, text);
    for (char *s = buf; *s; ++s)
        if (*s == ';') *s = ' ';
    return test_parse_valid(buf);
}

/* Flags the elements of y's buffer (yn from its start) that a view at yat with yd's shape and
 * strides covers; every one must lie inside the buffer. */
static unsigned char *view_mask(const views_case *v) {
    unsigned char *m = calloc((size_t)v->yn + 1, 1);
    cr_assert(m);
    for (int64_t i = 0; i < v->yd.numel; ++i) {
        int64_t rest = i, off = v->yat;
        for (int r = v->yd.rank - 1; r >= 0; --r) {
            off += (rest % v->yd.shape[r]) * v->yd.strides[r];
            rest /= v->yd.shape[r];
        }
        cr_assert(off >= 0 && off < v->yn, "%s: y element %lld at %lld, outside its buffer of %lld",
                  v->c->name, (long long)i, (long long)off, (long long)v->yn);
        m[off] = 1;
    }
    return m;
}

static const void *at(const void *buf, int64_t elements, size_t es) {
    return buf ? (const char *)buf + es * (size_t)elements : NULL;
}

/* Loads case c, runs the C reference on it and checks the reference against PyTorch: y within
 * GOLDEN_F64_TOL of the magnitude, the state exactly. */
static void views_case_load(views_case *v, const golden_case *c) {
    memset(v, 0, sizeof *v);
    v->c = c;
    v->p = case_problem(c);
    const convnd_problem *p = &v->p;
    const convnd_dtype dt = p->dtype;
    v->es = convnd_ref_dtype_size(dt);
    cr_assert_eq(convnd_tensor_describe(p, CONVND_Y, &v->yd), CONVND_OK, "%s", convnd_last_error());
    const int io = p->prefix_size > 0 || p->suffix_size > 0 || p->state_size > 0;
    if (p->prefix_size > 0)
        cr_assert_eq(convnd_tensor_describe(p, CONVND_X_PREFIX, &v->pd), CONVND_OK);
    if (p->suffix_size > 0)
        cr_assert_eq(convnd_tensor_describe(p, CONVND_X_SUFFIX, &v->fd), CONVND_OK);
    if (p->state_size > 0) cr_assert_eq(convnd_tensor_describe(p, CONVND_STATE, &v->sd), CONVND_OK);
    convnd_tensor_desc wd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_W, &wd), CONVND_OK);

    const char *xo = golden_get(c, "xo"), *zo = golden_get(c, "zo");
    cr_assert(xo && zo, "%s: no xo or zo", c->name);
    v->x_in_y = strcmp(xo, "y") == 0;
    v->z_in_y = strcmp(zo, "y") == 0;
    v->xn = gint(c, "xn"), v->zn = gint(c, "zn"), v->yn = gint(c, "yn");
    v->xat = gint(c, "xat"), v->zat = gint(c, "zat"), v->yat = gint(c, "yat");
    v->xbuf = v->x_in_y ? NULL : fixture_tensor(c, "xo", v->xn, dt);
    v->zbuf = v->z_in_y ? NULL : fixture_tensor(c, "zo", v->zn, dt);
    v->prefix = fixture_tensor(c, "po", v->pd.numel, dt);
    v->suffix = golden_get(c, "fo") ? fixture_tensor(c, "fo", v->fd.numel, dt) : NULL;
    v->wn = wd.numel;
    v->w = fixture_tensor(c, "wo", v->wn, dt);
    v->bias = fixture_tensor(c, "bo", p->C_out, dt);
    v->ybuf = fixture_tensor(c, "yo", v->yn, dt);
    if (!v->ybuf) { /* a fresh tensor */
        v->ybuf = malloc(v->es * (size_t)(v->yn > 0 ? v->yn : 1));
        cr_assert(v->ybuf);
        test_poison_fill(dt, v->ybuf, v->yn);
    }
    cr_assert((v->xbuf != NULL) != v->x_in_y, "%s: x's buffer", c->name);
    cr_assert((v->prefix != NULL) == (p->prefix_size > 0), "%s: x_prefix", c->name);
    cr_assert((v->suffix != NULL) == (p->suffix_size > 0), "%s: x_suffix", c->name);
    cr_assert((v->bias != NULL) == (p->has_bias != 0), "%s: bias", c->name);
    cr_assert((v->zbuf != NULL || v->z_in_y) == (p->has_z != 0), "%s: z", c->name);
    const int64_t eo = gint(c, "eo"), so = gint(c, "so");
    cr_assert(eo >= 0 && eo + v->yn <= fixtures.n_expected, "%s: eo", c->name);
    cr_assert((so >= 0) == (p->state_size > 0) && so + v->sd.numel <= fixtures.n_expected, "%s: so",
              c->name);
    v->expected = fixtures.expected + eo;
    v->in_view = view_mask(v);

    /* the state PyTorch computed, in the dtype: it is a copy of inputs, so exact */
    v->state_expected = malloc(v->es * (size_t)(v->sd.numel + 1));
    cr_assert(v->state_expected);
    for (int64_t i = 0; i < v->sd.numel; ++i) {
        const double e = fixtures.expected[so + i];
        convnd_ref_store(dt, v->state_expected, i, e);
        cr_assert(convnd_ref_load(dt, v->state_expected, i) == e,
                  "%s: expected state[%lld] = %.17g is no value of the dtype", c->name,
                  (long long)i, e);
    }

    /* the reference: over X = cat(x_prefix, x, x_suffix) as an explicit copy when the case has a
     * prefix, a suffix or a state, else on the views themselves */
    const void *x = v->x_in_y ? at(v->ybuf, v->xat, v->es) : at(v->xbuf, v->xat, v->es);
    const void *z = v->z_in_y ? at(v->ybuf, v->zat, v->es) : at(v->zbuf, v->zat, v->es);
    convnd_problem q = *p;
    void *X = NULL;
    if (io)
        cr_assert_eq(convnd_ref_io_input(p, v->prefix, x, v->suffix, &q, &X), CONVND_OK, "%s",
                     c->name);
    const int64_t y_span = v->yd.bytes / (int64_t)v->es;
    double *exact = calloc((size_t)y_span + 1, sizeof(double));
    v->mag = calloc((size_t)y_span + 1, sizeof(double));
    cr_assert(exact && v->mag);
    cr_assert_eq(convnd_ref_conv_f64(&q, io ? X : x, v->w, v->bias, z, exact, v->mag), CONVND_OK,
                 "%s: reference: %s", c->name, convnd_last_error());
    for (int64_t i = 0; i < v->yn; ++i)
        if (v->in_view[i])
            cr_expect(fabs(exact[i - v->yat] - v->expected[i]) <=
                          GOLDEN_F64_TOL * CONVND_REF_ACT_MAX_SLOPE * v->mag[i - v->yat],
                      "%s: reference y at buffer[%lld] %.17g, PyTorch %.17g", c->name, (long long)i,
                      exact[i - v->yat], v->expected[i]);
    if (p->state_size > 0) {
        void *state = malloc(v->es * (size_t)v->sd.numel);
        cr_assert(state);
        cr_assert_eq(convnd_ref_state(p, &q, X, state), CONVND_OK);
        cr_expect(memcmp(state, v->state_expected, v->es * (size_t)v->sd.numel) == 0,
                  "%s: the reference's state differs from PyTorch's", c->name);
        free(state);
    }
    v->tol = test_tolerance_for(&q);
    free(exact);
    free(X);
}

static void views_case_free(views_case *v) {
    free(v->xbuf), free(v->zbuf), free(v->prefix), free(v->suffix), free(v->w), free(v->bias);
    free(v->ybuf);
    free(v->in_view), free(v->state_expected), free(v->mag);
}

/* ---- one run on the device ----------------------------------------------------------------- */

/* p (the recorded problem or its bound twin) with spec forced (NULL: the planner), in the
 * current thread order: y's buffer starts as before the call with y's view poisoned (or holding
 * z when z is y), the state poisoned; then y's view against PyTorch within the tolerance, the
 * rest of the buffer and the state bit for bit. Returns 1 when it ran and passed. */
static int run_once(const views_case *v, const convnd_problem *p, const char *route,
                    const char *spec, const char *order) {
    const golden_case *c = v->c;
    const convnd_dtype dt = p->dtype;
    const size_t es = v->es;
    convnd_options opts = {.schedule = spec};
    convnd_plan_t *plan = NULL;
    convnd_status st = convnd_plan_create(&plan, p, &opts);
    cr_assert_eq(st, CONVND_OK, "%s (%s) on %s: plan: %s", c->name, route, spec ? spec : "planner",
                 convnd_last_error());
    char chosen[256] = "";
    convnd_plan_describe(plan, chosen, sizeof chosen);

    unsigned char *before = malloc(es * (size_t)(v->yn + 1)),
                  *got = malloc(es * (size_t)(v->yn + 1));
    void *state_got = malloc(es * (size_t)(v->sd.numel + 1));
    cr_assert(before && got && state_got);
    memcpy(before, v->ybuf, es * (size_t)v->yn);
    if (!v->z_in_y)
        for (int64_t i = 0; i < v->yn; ++i)
            if (v->in_view[i]) test_poison_fill(dt, before + es * (size_t)i, 1);
    void *dy = test_device_upload(dt, before, v->yn);
    void *dx = v->x_in_y ? dy : test_device_upload(dt, v->xbuf, v->xn);
    void *dz = v->z_in_y ? dy : v->zbuf ? test_device_upload(dt, v->zbuf, v->zn) : NULL;
    void *dp = v->prefix ? test_device_upload(dt, v->prefix, v->pd.numel) : NULL;
    void *df = v->suffix ? test_device_upload(dt, v->suffix, v->fd.numel) : NULL;
    void *dw = test_device_upload(dt, v->w, v->wn);
    void *db = v->bias ? test_device_upload(dt, v->bias, p->C_out) : NULL;
    void *ds = p->state_size > 0 ? test_device_upload(dt, NULL, v->sd.numel) : NULL; /* poison */
    size_t ws_bytes = 0;
    cr_assert_eq(convnd_plan_workspace_size(plan, &ws_bytes), CONVND_OK);
    void *ws = NULL;
    if (ws_bytes) cr_assert_eq(convnd_malloc(&ws, ws_bytes), CONVND_OK);
    cr_assert(dy && dx && dw);

    const convnd_io io = {at(dx, v->xat, es),
                          dp,
                          dw,
                          db,
                          at(dz, v->zat, es),
                          (char *)dy + es * (size_t)v->yat,
                          ds,
                          df,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL};
    st = convnd_plan_execute_io(plan, &io, ws, ws_bytes, NULL);
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    cr_assert_eq(convnd_memcpy_d2h(got, dy, es * (size_t)v->yn), CONVND_OK);
    if (ds) cr_assert_eq(convnd_memcpy_d2h(state_got, ds, es * (size_t)v->sd.numel), CONVND_OK);

    int64_t bad_y = 0, bad_out = 0, first_y = -1, first_out = -1;
    for (int64_t i = 0; st == CONVND_OK && i < v->yn; ++i) {
        if (!v->in_view[i]) { /* outside y's view: untouched, bit for bit */
            if (memcmp(got + es * (size_t)i, before + es * (size_t)i, es)) {
                if (first_out < 0) first_out = i;
                ++bad_out;
            }
            continue;
        }
        const double g = convnd_ref_load(dt, got, i);
        const double bound = test_tolerance_bound(&v->tol, v->expected[i], v->mag[i - v->yat]);
        if (!(fabs(g - v->expected[i]) <= bound)) {
            if (first_y < 0) first_y = i;
            ++bad_y;
        }
    }
    int64_t bad_state = 0, first_state = -1;
    for (int64_t i = 0; st == CONVND_OK && i < v->sd.numel; ++i)
        if (memcmp((char *)state_got + es * (size_t)i, (char *)v->state_expected + es * (size_t)i,
                   es)) {
            if (first_state < 0) first_state = i;
            ++bad_state;
        }
    const char *what = spec ? spec : "planner";
    cr_expect_eq(st, CONVND_OK, "%s (%s) on %s = %s, order %s: %s", c->name, route, what, chosen,
                 order, convnd_last_error());
    cr_expect(bad_y == 0,
              "%s (%s) on %s = %s, order %s: %lld of %lld y elements off PyTorch, first at "
              "buffer[%lld]: %.9g vs %.9g",
              c->name, route, what, chosen, order, (long long)bad_y, (long long)v->yd.numel,
              (long long)first_y, first_y >= 0 ? convnd_ref_load(dt, got, first_y) : 0.0,
              first_y >= 0 ? v->expected[first_y] : 0.0);
    cr_expect(bad_out == 0,
              "%s (%s) on %s = %s, order %s: %lld elements of y's buffer outside its view changed, "
              "first at buffer[%lld]",
              c->name, route, what, chosen, order, (long long)bad_out, (long long)first_out);
    cr_expect(bad_state == 0,
              "%s (%s) on %s = %s, order %s: %lld of %lld state elements differ from PyTorch's "
              "new cache, first [%lld]: %.9g vs %.9g",
              c->name, route, what, chosen, order, (long long)bad_state, (long long)v->sd.numel,
              (long long)first_state,
              first_state >= 0 ? convnd_ref_load(dt, state_got, first_state) : 0.0,
              first_state >= 0 ? convnd_ref_load(dt, v->state_expected, first_state) : 0.0);

    convnd_plan_destroy(plan);
    void *dev[] = {dy, v->x_in_y ? NULL : dx, v->z_in_y ? NULL : dz, dp, df, dw, db, ds, ws};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i)
        if (dev[i]) convnd_free(dev[i]);
    free(before), free(got), free(state_got);
    return st == CONVND_OK && bad_y == 0 && bad_out == 0 && bad_state == 0;
}

#define MAX_CONFIGS 256

/* Runs done by this test process (for the log: a suite that runs nothing must not look green). */
static int runs_done;

/* p with the planner and with every schedule:config that supports it, in every thread order.
 * Returns how many forced configurations ran. */
static int run_everywhere(const views_case *v, const convnd_problem *p, const char *route) {
    static test_schedule_config configs[MAX_CONFIGS];
    const size_t n = test_list_conv_configs(configs, MAX_CONFIGS);
    int forced = 0;
    for (size_t k = 0; k <= n; ++k) {
        char spec[128];
        if (k < n) {
            test_schedule_spec(configs[k], spec, sizeof spec);
            if (!convnd_schedule_supports(spec, p, NULL, 0)) continue;
            ++forced;
        }
        for (int order = 0; order < test_order_count(); ++order) {
            test_order_apply(order);
            run_once(v, p, route, k < n ? spec : NULL, test_order_name(order));
            ++runs_done;
        }
    }
    return forced;
}

/* The cache case as a user of the front-ends writes it: convnd_bind_causal_conv on x's and w's
 * PyTorch shapes with the non-time padding, then convnd_bind_causal_cache with the cached and
 * state frames; dtype, layouts, views and epilogue set as the bindings leave them to the caller.
 * Its padding must be the one recorded from Wan's code. */
static convnd_problem bind_cache_case(const views_case *v) {
    const convnd_problem *p = &v->p;
    const int32_t d = p->dims;
    convnd_shape xs = {d + 2, {p->N, p->C_in}}, ws = {d + 2, {p->C_out, p->C_in / p->groups}};
    convnd_ints stride = {d, {0}}, dilation = {d, {0}}, pad;
    for (int32_t t = 0; t < d; ++t) {
        xs.v[2 + t] = p->input[t];
        ws.v[2 + t] = p->kernel[t];
        stride.v[t] = p->stride[t];
        dilation.v[t] = p->dilation[t];
    }
    pad.len = golden_ints(v->c, "causal_pad", pad.v, CONVND_MAX_RANK);
    cr_assert(pad.len >= -1, "%s: bad causal_pad", v->c->name);
    convnd_problem causal, bound;
    cr_assert_eq(convnd_bind_causal_conv(d, &xs, &ws, p->has_bias ? p->C_out : -1, &stride,
                                         pad.len >= 0 ? &pad : NULL, &dilation, p->groups, &causal),
                 CONVND_OK, "%s: %s", v->c->name, convnd_last_error());
    cr_assert_eq(convnd_bind_causal_cache(&causal, p->prefix_size, p->state_size, &bound),
                 CONVND_OK, "%s: %s", v->c->name, convnd_last_error());
    bound.dtype = p->dtype;
    bound.x_layout = p->x_layout;
    bound.w_layout = p->w_layout;
    bound.y_layout = p->y_layout;
    bound.activation = p->activation;
    bound.x_view = p->x_view;
    bound.y_view = p->y_view;
    bound.z_view = p->z_view;
    for (int32_t t = 0; t < d; ++t)
        cr_expect(bound.pad_before[t] == p->pad_before[t] && bound.pad_after[t] == p->pad_after[t],
                  "%s: the binding pads dim %d by %lld/%lld, Wan's code by %lld/%lld", v->c->name,
                  t, (long long)bound.pad_before[t], (long long)bound.pad_after[t],
                  (long long)p->pad_before[t], (long long)p->pad_after[t]);
    cr_assert_eq(convnd_validate(&bound), CONVND_OK, "%s", convnd_last_error());
    return bound;
}

/* Every case of one kind; returns how many. */
static int run_kind(const char *kind) {
    int cases = 0, bound = 0;
    for (int32_t i = 0; i < fixtures.count; ++i) {
        const golden_case *c = &fixtures.cases[i];
        const char *k = golden_get(c, "kind");
        if (!k || strcmp(k, kind)) continue;
        views_case v;
        views_case_load(&v, c);
        cr_expect_gt(run_everywhere(&v, &v.p, "as recorded"), 0,
                     "%s: no schedule:config supports it", c->name);
        if (golden_get(c, "causal_pad")) {
            const convnd_problem b = bind_cache_case(&v);
            cr_expect_gt(run_everywhere(&v, &b, "bound"), 0, "%s: bound: no schedule supports it",
                         c->name);
            ++bound;
        }
        views_case_free(&v);
        ++cases;
    }
    cr_log_info("golden_views %s: %d cases (%d also through the causal-cache binding), %d runs",
                kind, cases, bound, runs_done);
    if (!strcmp(kind, "cache"))
        cr_expect_geq(bound, 8, "cache cases through the binding: %d", bound);
    return cases;
}

/* ---- tests ----------------------------------------------------------------------------------- */

Test(golden_views, fixtures_cover_the_patterns) {
    cr_assert_geq(fixtures.count, GOLDEN_VIEWS_MIN_CASES, "only %d cases", (int)fixtures.count);
    int cache = 0, slice_y = 0, slice_x = 0, halo = 0, cl = 0, half = 0, state = 0, in_place = 0,
        prefix_x_view = 0;
    for (int32_t i = 0; i < fixtures.count; ++i) {
        const golden_case *c = &fixtures.cases[i];
        const char *k = golden_get(c, "kind");
        cr_assert(k, "%s: no kind", c->name);
        cache += !strcmp(k, "cache");
        slice_y += !strcmp(k, "slice_y");
        slice_x += !strcmp(k, "slice_x");
        halo += !strcmp(k, "halo");
        const convnd_problem p = case_problem(c);
        cl += p.x_layout == CONVND_CHANNELS_LAST;
        half += p.dtype != CONVND_F32;
        state += p.state_size > 0;
        in_place += strcmp(golden_get(c, "zo"), "y") == 0;
        prefix_x_view += p.prefix_size > 0 && p.x_view.custom;
    }
    cr_expect_eq(cache + slice_y + slice_x + halo, fixtures.count, "cases of an unknown kind");
    cr_expect_geq(halo, 4, "halo cases: %d", halo);
    cr_expect_geq(cache, 10, "cache cases: %d", cache);
    cr_expect_geq(slice_y, 5, "slice_y cases: %d", slice_y);
    cr_expect_geq(slice_x, 3, "slice_x cases: %d", slice_x);
    cr_expect_geq(cl, 6, "channels-last cases: %d", cl);
    cr_expect_geq(half, 6, "f16/bf16 cases: %d", half);
    cr_expect_geq(state, 10, "cases with a state: %d", state);
    cr_expect_geq(in_place, 1, "in-place residual cases: %d", in_place);
    cr_expect_geq(prefix_x_view, 2, "cases with a prefix and x a view: %d", prefix_x_view);
}

Test(golden_views, cat_conv_causal_cache) {
    cr_assert_gt(run_kind("cache"), 0);
}

/* SPEC §14: one shard's rows of a sharded conv over cat(prefix, shard, suffix) + pad */
Test(golden_views, cat_conv_halo) {
    cr_assert_gt(run_kind("halo"), 0);
}

Test(golden_views, slice_writes) {
    cr_assert_gt(run_kind("slice_y"), 0);
}

Test(golden_views, slice_and_pitch_reads) {
    cr_assert_gt(run_kind("slice_x"), 0);
}
