/* Strided views (SPEC §11): x read from and y written into views (channel slices of larger
 * buffers, padded row and batch pitches, a batch broadcast), on every schedule:config that
 * supports them, in every thread order, against the CPU reference, with y's gaps checked
 * untouched; schedules whose kernels read packed tensors only decline and the planner falls back;
 * bad views are refused with nothing written. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "convnd_ref.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_problem_text.h"
#include "test_orders.h"
#include "test_schedule_runs.h"
#include "test_wgrad_case.h"

/* y: O = 5x6. Strides are those of the larger buffer each view lives in. */
static const test_case_text view_cases[] = {
    /* y into channels [c0, c0+4) of a [2, 10, 5, 6] channels-first buffer (concat-free output) */
    {"y_channel_slice_cf", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 bias ys=300,30,6,1:420", 0},
    /* the same slice of a [2, 5, 6, 10] channels-last buffer */
    {"y_channel_slice_cl", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 bf16 y=cl ys=300,1,60,10", 0},
    /* x from channels of a [2, 7, 5, 6] buffer; channels-last [2, 5, 6, 7] */
    {"x_channel_slice_cf", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=210,30,6,1", 0},
    {"x_channel_slice_cl", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 f16 x=cl xs=210,1,42,7", 0},
    /* rows padded to 8, images to 125 elements */
    {"x_row_and_batch_pitch", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=125,40,8,1", 0},
    /* one image broadcast over the batch (an input may repeat elements) */
    {"x_batch_broadcast", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=0,30,6,1", 0},
    /* y with padded pitches, z packed on its own */
    {"y_pitch_z_packed",
     "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 bias z beta=0.5 act=relu ys=187,45,9,1 "
     "zs=120,30,6,1",
     0},
    /* in-place residual inside the slice: z == y, same view */
    {"z_in_place_slice", "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 z beta=1 ys=300,30,6,1", 1},
    /* 1-D grouped, dilated, causal into a [2, 9, 9] buffer */
    {"conv1d_grouped_slice", "fwd 1d N=2 Ci=4 Co=6 g=2 I=9 K=3 D=2 P0=4 P1=0 bf16 ys=81,9,1", 0},
    /* 3-D: x a channel slice of [1, 5, 3, 4, 5], y a channel slice of a [1, 3, 4, 5, 8] cl buffer
     */
    {"conv3d_slices",
     "fwd 3d N=1 Ci=2 Co=3 I=3,4,5 K=2,3,3 P0=1 P1=0,1,1 f16 xs=300,60,20,5,1 "
     "ys=480,1,160,40,8",
     0},
    /* transposed into a [2, 5, 6, 8] slice */
    {"transposed_slice", "tr 2d N=2 Ci=4 Co=3 I=3,4 K=3 S=2 P0=1 P1=0 bias ys=240,48,8,1", 0},
    /* the same into a [2, 6, 8, 5] channels-last buffer, bf16 (the tensor-core phases) */
    {"transposed_slice_cl",
     "tr 2d N=2 Ci=4 Co=3 I=3,4 K=3 S=2 P0=1 P1=0 bias bf16 x=cl y=cl ys=240,1,40,5", 0},
};
#define VIEW_CASES (sizeof view_cases / sizeof view_cases[0])

/* A custom view with exactly the packed strides: no view at all for the schedules. */
static const char *packed_view_case = "fwd 2d N=1 Ci=8 Co=8 I=6 K=3 P0=1 P1=1 ys=288,36,6,1";

#define MAX_CONFIGS 256
static test_schedule_config all_configs[MAX_CONFIGS];

TestSuite(views, .timeout = 600);

ParameterizedTestParameters(views, forced_schedules) {
    return cr_make_param_array(test_schedule_config, all_configs,
                               test_list_conv_configs(all_configs, MAX_CONFIGS));
}

/* Every case on this schedule:config when it supports it; one that reads views must support
 * them all (one that reads x and y views, all but those where z has its own strides), any other
 * must decline them all with a reason naming the view. */
ParameterizedTest(test_schedule_config *sc, views, forced_schedules) {
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    const convnd_schedule *s = convnd_schedule_table[sc->schedule];
    int ran = 0;
    for (size_t i = 0; i < VIEW_CASES; ++i) {
        const convnd_problem p = test_parse_valid(view_cases[i].problem);
        char reason[512] = "";
        const int32_t ok = convnd_schedule_supports(spec, &p, reason, sizeof reason);
        const int z_own_view = strstr(view_cases[i].problem, " zs=") != NULL;
        if ((s->reads & CONVND_READS_XY_VIEWS) && z_own_view) {
            cr_expect(!ok, "%s reads z through y's strides but accepts case %s", spec,
                      view_cases[i].id);
            cr_expect(strstr(reason, "reads z through y's strides only") != NULL,
                      "%s on case %s: reason '%s'", spec, view_cases[i].id, reason);
            continue;
        }
        if (!(s->reads & (CONVND_READS_VIEWS | CONVND_READS_XY_VIEWS))) {
            cr_expect(!ok, "%s reads packed tensors only but accepts case %s", spec,
                      view_cases[i].id);
            cr_expect(strstr(reason, "reads packed tensors only") != NULL,
                      "%s on case %s: reason '%s'", spec, view_cases[i].id, reason);
            continue;
        }
        /* a forward-only schedule, say, or a GEMM tile's limits (not the view) */
        if (!ok && (strstr(reason, "mode=") || (s->reads & CONVND_READS_XY_VIEWS))) {
            cr_expect(strstr(reason, "SPEC §11") == NULL, "%s declines case %s as a view: %s", spec,
                      view_cases[i].id, reason);
            continue;
        }
        test_run_supported_case(spec, &p, view_cases[i].id, view_cases[i].z_in_place,
                                test_seed_of(view_cases[i].id, 11));
        ++ran;
    }
    if (s->reads & (CONVND_READS_VIEWS | CONVND_READS_XY_VIEWS))
        cr_assert(ran > 0, "%s reads views but ran none of the %zu cases", spec, VIEW_CASES);
    /* a view with the packed strides is no view: whoever supports the packed problem runs it */
    convnd_problem p = test_parse_valid(packed_view_case), packed = p;
    packed.y_view.custom = 0;
    if (convnd_schedule_supports(spec, &packed, NULL, 0))
        test_run_supported_case(spec, &p, "packed_view", 0, 5);
}

Test(views, planner_falls_back_to_direct) {
    for (size_t i = 0; i < VIEW_CASES; ++i)
        test_expect_plan(view_cases[i].problem, "direct:");
    char plan[128];
    test_plan_of(packed_view_case, plan, sizeof plan);
    cr_expect(strncmp(plan, "direct:", 7) != 0, "the packed-stride view runs on %s", plan);
}

/* A forced schedule that reads packed tensors only: UNSUPPORTED, its reason, y untouched. */
Test(views, forced_packed_schedule_refuses) {
    test_expect_forced_error("cublas_im2col", view_cases[0].problem, "reads packed tensors only");
    test_expect_forced_error("depthwise", "fwd 2d N=2 Ci=4 Co=4 g=4 I=5,6 K=3 x=cl ys=300,1,60,10",
                             "y has strides [300, 1, 60, 10]");
    /* the implicit GEMMs read x and y views, but z only at y's offsets */
    test_expect_forced_error("igemm_simt", view_cases[6].problem, "z has strides [120, 30, 6, 1]");
    test_expect_forced_error("depthwise", "fwd 2d N=2 Ci=4 Co=4 g=4 I=5,6 K=3 xs=210,30,6,1",
                             "x has strides [210, 30, 6, 1]");
}

Test(views, describe_reports_view_strides) {
    const convnd_problem p = test_parse_valid(view_cases[0].problem);
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_Y, &d), CONVND_OK);
    const int64_t strides[] = {300, 30, 6, 1};
    for (int i = 0; i < 4; ++i)
        cr_expect_eq(d.strides[i], strides[i], "strides[%d]=%lld", i, (long long)d.strides[i]);
    cr_expect_eq(d.numel, 2 * 4 * 5 * 6);
    cr_expect_eq(d.bytes, 420 * 4, "bytes=%lld: base to the end of the last element",
                 (long long)d.bytes);
    /* z follows y's view unless it has its own */
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_Z, &d), CONVND_OK);
    cr_expect_eq(d.strides[1], 30);
    const convnd_problem q = test_parse_valid(view_cases[6].problem);
    cr_assert_eq(convnd_tensor_describe(&q, CONVND_Z, &d), CONVND_OK);
    cr_expect_eq(d.strides[0], 120);
    cr_expect_eq(d.bytes, 240 * 4);
}

/* ---- rejections: a status, a message naming the values, nothing written ------------------- */

static void expect_invalid(const char *problem, convnd_status status, const char *needle) {
    convnd_problem p = test_parse(problem);
    cr_expect_eq(convnd_validate(&p), status, "%s: status %s (%s)", problem,
                 convnd_status_string(convnd_validate(&p)), convnd_last_error());
    cr_expect(strstr(convnd_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", problem,
              convnd_last_error(), needle);
}

Test(views, bad_views_are_refused) {
    const char *base = "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1";
    char text[256];
    snprintf(text, sizeof text, "%s ys=300,30,5,1", base); /* rows overlap */
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT,
                   "y_view of shape [2, 4, 5, 6] with strides [300, 30, 5, 1] overlaps itself");
    snprintf(text, sizeof text, "%s ys=300,0,6,1", base); /* every channel on one plane */
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT, "overlaps itself");
    snprintf(text, sizeof text, "%s ys=300,-30,6,1", base);
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT, "y_view.strides[1]=-30 must be >= 0");
    snprintf(text, sizeof text, "%s ys=300,30,6,1:419", base);
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT,
                   "reaches 420 elements from its base, past its extent=419");
    snprintf(text, sizeof text, "%s xs=210,30,6,1:299", base);
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT, "x_view of shape [2, 3, 5, 6]");
    snprintf(text, sizeof text, "%s z beta=1 zs=120,30,6,1:100", base);
    expect_invalid(text, CONVND_ERR_INVALID_ARGUMENT, "z_view");
    snprintf(text, sizeof text, "%s xs=4611686018427387904,30,6,1", base);
    expect_invalid(text, CONVND_ERR_OVERFLOW, "reaches past what int64 can count");
    expect_invalid("wg 2d N=2 Ci=3 Co=4 I=5,6 K=3 z beta=1 zs=27,9,3,1", CONVND_ERR_UNSUPPORTED,
                   "views of dw are not supported");
    /* an input may repeat elements; only outputs must not */
    snprintf(text, sizeof text, "%s xs=0,0,6,1", base);
    convnd_problem ok = test_parse(text);
    cr_expect_eq(convnd_validate(&ok), CONVND_OK, "%s", convnd_last_error());
    /* conv_nd refuses a bad view before anything is written */
    snprintf(text, sizeof text, "%s ys=300,30,5,1", base);
    const convnd_problem bad = test_parse(text);
    float x[180] = {0}, w[108] = {0}, y[600];
    test_poison_fill(CONVND_F32, y, 600);
    void *dx = test_device_upload(CONVND_F32, x, 180), *dw = test_device_upload(CONVND_F32, w, 108);
    void *dy = test_device_upload(CONVND_F32, y, 600);
    cr_assert(dx && dw && dy);
    cr_expect_eq(conv_nd(&bad, dx, dw, NULL, NULL, dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_INVALID_ARGUMENT);
    cr_assert_eq(convnd_memcpy_d2h(y, dy, sizeof y), CONVND_OK);
    for (int i = 0; i < 600; ++i)
        cr_assert(test_is_poison(CONVND_F32, y, i), "y[%d] written by a refused call", i);
    convnd_free(dx);
    convnd_free(dw);
    convnd_free(dy);
}

/* conv_nd on tensors inside one buffer; returns its status. buf holds n elements (f32). */
static convnd_status run_in_buffer(const convnd_problem *p, float *dbuf, int64_t x_at, int64_t y_at,
                                   int64_t z_at, const void *w) {
    return conv_nd(p, dbuf + x_at, w, NULL, p->has_z ? dbuf + z_at : NULL, dbuf + y_at, NULL, 0,
                   NULL, NULL);
}

Test(views, aliasing_on_the_bytes_views_touch) {
    /* one [1, 7, 5, 6] channels-first buffer: x = channels 0..2, y = channels 3..6, the
     * DenseNet pattern (for N = 1 their byte ranges are disjoint) */
    convnd_problem p = test_parse_valid(
        "fwd 2d N=1 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=210,30,6,1:210 ys=210,30,6,1:120");
    const int64_t n = 210;
    float host[210], before[210], w[4 * 3 * 9];
    for (int64_t i = 0; i < n; ++i)
        host[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < 4 * 3 * 9; ++i)
        w[i] = (float)((i * 13) % 11) / 8.0f - 0.6f;
    void *dbuf = test_device_upload(CONVND_F32, host, n);
    void *dw = test_device_upload(CONVND_F32, w, 4 * 3 * 9);
    cr_assert(dbuf && dw);
    cr_expect_eq(run_in_buffer(&p, dbuf, 0, 90, 0, dw), CONVND_OK, "%s", convnd_last_error());
    float got[210], ref[210];
    cr_assert_eq(convnd_memcpy_d2h(got, dbuf, sizeof got), CONVND_OK);
    memcpy(ref, host, sizeof ref);
    cr_assert_eq(convnd_ref_conv(&p, host, w, NULL, NULL, ref + 90), CONVND_OK);
    for (int64_t i = 0; i < n; ++i)
        cr_expect(i < 90 ? got[i] == host[i] : fabsf(got[i] - ref[i]) <= 1e-5f,
                  "buffer[%lld] = %g, expected %g", (long long)i, (double)got[i],
                  (double)(i < 90 ? host[i] : ref[i]));

    /* y's view reaching into x's channels: refused, the buffer unchanged */
    cr_assert_eq(convnd_memcpy_h2d(dbuf, host, sizeof host), CONVND_OK);
    cr_expect_eq(run_in_buffer(&p, dbuf, 0, 60, 0, dw), CONVND_ERR_ALIASING);
    cr_expect(strstr(convnd_last_error(), "x [") && strstr(convnd_last_error(), "+360 bytes"), "%s",
              convnd_last_error());
    /* z inside y's range with other strides is no in-place residual */
    p.has_z = 1;
    p.beta = 1.0f;
    p.z_view.custom = 1;
    const int64_t zs[] = {120, 30, 6, 1};
    memcpy(p.z_view.strides, zs, sizeof zs);
    p.z_view.extent = 0;
    cr_expect_eq(run_in_buffer(&p, dbuf, 0, 90, 96, dw), CONVND_ERR_ALIASING);
    cr_expect(strstr(convnd_last_error(), "z ["), "%s", convnd_last_error());
    cr_assert_eq(convnd_memcpy_d2h(before, dbuf, sizeof before), CONVND_OK);
    cr_expect(memcmp(before, host, sizeof host) == 0, "a refused call wrote to the buffer");
    convnd_free(dbuf);
    convnd_free(dw);
}

/* The weight gradient reads x and dy through views (wgrad_direct and wgrad_splitk index both
 * through their strides): a channel slice of x, dy with a padded row pitch. */
/* Every wgrad schedule reads x and dy through their strides: each runs the views it supports
 * (dense and depthwise, f32 and 16-bit), and none declines one because it is a view. */
Test(views, wgrad_reads_x_and_dy_views) {
    static const char *const problems[] = {
        "wg 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=210,30,6,1 ys=187,45,9,1",
        "wg 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 f16 x=cl xs=210,1,42,7 ys=187,45,9,1",
        "wg 1d N=3 Ci=4 Co=4 g=4 I=9 K=4 D=2 P0=6 bf16 x=cl xs=60,1,6 ys=40,10,1",
        /* 16-byte chunks (wgrad_vec_tc): 8 of x's 16 channels, dy with a padded row pitch */
        "wg 2d N=2 Ci=8 Co=16 I=5,6 K=3 P0=1 P1=1 f16 x=cl y=cl xs=480,1,96,16 ys=576,1,112,16",
    };
    test_schedule_config configs[64];
    const size_t n = test_list_schedule_configs("wgrad_", configs, 64);
    cr_assert(n < 64, "more wgrad configurations than the list holds");
    cr_assert(n >= 5);
    int ran[64] = {0}; /* by schedule index */
    cr_assert(convnd_schedule_table_size <= 64);
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; ++i)
        for (size_t k = 0; k < n; ++k) {
            char spec[128], err[256], msg[1024];
            test_schedule_spec(configs[k], spec, sizeof spec);
            const convnd_problem p = test_parse_valid(problems[i]);
            if (!convnd_schedule_supports(spec, &p, err, sizeof err)) {
                cr_expect(!strstr(err, "(a view, SPEC"), "%s declines a view: %s", spec, err);
                continue;
            }
            ++ran[configs[k].schedule];
            test_wgrad_case c;
            cr_assert(test_wgrad_init(&c, &p, 0, 31 + i, err, sizeof err), "%s", err);
            for (int order = 0; order < test_order_count(); ++order) {
                test_order_apply(order);
                const convnd_status st = test_wgrad_run(&c, spec);
                cr_expect(st == CONVND_OK && test_wgrad_check(&c, msg, sizeof msg),
                          "%s on %s (order %s): %s %s", spec, problems[i], test_order_name(order),
                          st == CONVND_OK ? "" : convnd_last_error(), st == CONVND_OK ? msg : "");
            }
            test_wgrad_free(&c);
        }
    for (size_t k = 0; k < n; ++k)
        cr_expect(ran[configs[k].schedule] > 0, "%s ran none of the views",
                  convnd_schedule_table[configs[k].schedule]->name);
}
