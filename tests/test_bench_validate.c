/* The benchmark's validation step: a deliberately wrong candidate injected here must come out
 * FAILED and never be timed; correct candidates (a schedule, the pad + conv peer, the
 * cublas_im2col peer) pass and are timed; the materialized pad copy is exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "convnd_ref.h"
#include "driver.h"
#include "materialized_pad.h"
#include "random_fill.h"
#include "suite.h"

TestSuite(bench_validate, .timeout = 300);

/* ---- injected candidates: a schedule run, then a mistake --------------------------------- */

typedef enum mistake { NONE, CORRUPT_FIRST, SLIGHTLY_OFF_LAST, WRITE_NOTHING } mistake;

typedef struct injected {
    mistake kind;
    int64_t runs;
} injected;

static convnd_status injected_prepare(bench_instance *in, const convnd_problem *p, const void *x,
                                      const void *w, void *y, char *why, size_t why_len) {
    return bench_convnd_ops.prepare(in, p, x, w, y, why, why_len);
}

/* Adds `delta` times |v| + delta to element i of the f32 tensor y on the device. */
static convnd_status nudge(void *y, int64_t i, float rel) {
    float v;
    convnd_status s = convnd_memcpy_d2h(&v, (float *)y + i, sizeof v);
    if (s != CONVND_OK) return s;
    v += rel * (fabsf(v) + 1.0f);
    return convnd_memcpy_h2d((float *)y + i, &v, sizeof v);
}

static convnd_status injected_run(bench_instance *in, const void *x, const void *w, void *y,
                                  void *stream) {
    injected *inj = in->cand->user;
    ++inj->runs;
    if (inj->kind == WRITE_NOTHING) return CONVND_OK;
    convnd_status s = bench_convnd_ops.run(in, x, w, y, stream);
    if (s == CONVND_OK) s = convnd_synchronize(stream);
    if (s != CONVND_OK) return s;
    convnd_tensor_desc yd;
    convnd_tensor_describe(&in->problem, CONVND_Y, &yd);
    if (inj->kind == CORRUPT_FIRST) return nudge(y, 0, 1.0f);
    /* 1e-3 relative: a thousand times an f32 rounding, far inside "looks right" */
    if (inj->kind == SLIGHTLY_OFF_LAST) return nudge(y, yd.numel - 1, 1e-3f);
    return CONVND_OK;
}

static const bench_candidate_ops injected_ops = {injected_prepare, injected_run, NULL};

static bench_candidate make_candidate(const char *label, const char *spec,
                                      const bench_candidate_ops *ops, injected *inj) {
    bench_candidate c;
    memset(&c, 0, sizeof c);
    snprintf(c.label, sizeof c.label, "%s", label);
    snprintf(c.series, sizeof c.series, "%s", label);
    snprintf(c.spec, sizeof c.spec, "%s", spec);
    c.ops = ops;
    c.user = inj;
    return c;
}

static bench_config small_config(void) {
    bench_config cfg = {.seed = 42,
                        .timing = bench_timing_emulated,
                        .max_sets = 2,
                        .device_label = "TEST",
                        .baseline = "direct"};
    cfg.timing.min_reps = cfg.timing.max_reps = 2;
    return cfg;
}

static bench_problem problem(const char *row) {
    bench_problem bp;
    char err[512] = "";
    cr_assert(bench_parse_row(row, &bp, err, sizeof err), "%s", err);
    return bp;
}

Test(bench_validate, a_wrong_candidate_is_failed_and_never_timed) {
    /* strided, asymmetric padding, groups, channels-last, f32 */
    const bench_problem bp = problem("t,test,forward,2,6,4,2,9x7,3x3,2x1,1x1,1x0,0x2,f32,cl");
    injected good = {NONE, 0}, corrupt = {CORRUPT_FIRST, 0}, off = {SLIGHTLY_OFF_LAST, 0},
             lazy = {WRITE_NOTHING, 0};
    const bench_candidate cands[4] = {
        make_candidate("direct", "direct", &injected_ops, &good),
        make_candidate("corrupt", "direct", &injected_ops, &corrupt),
        make_candidate("slightly off", "direct", &injected_ops, &off),
        make_candidate("writes nothing", "direct", &injected_ops, &lazy)};
    bench_row rows[4];
    const bench_config cfg = small_config();
    bench_run_problem(&bp, cands, 4, &cfg, rows);

    cr_assert_eq(rows[0].status, BENCH_OK, "the correct candidate: %s", rows[0].note);
    cr_assert(rows[0].median_ms >= 0.0 && rows[0].reps == 2, "timed: %g ms, %d reps",
              rows[0].median_ms, (int)rows[0].reps);
    cr_assert_gt(good.runs, 1, "validation + warm-up + repeats");
    cr_assert_leq(rows[0].val_worst, 1.0);

    for (int i = 1; i < 4; ++i) {
        cr_assert_eq(rows[i].status, BENCH_FAILED, "%s: status %s, note '%s'", rows[i].candidate,
                     bench_status_name(rows[i].status), rows[i].note);
        cr_assert(isnan(rows[i].median_ms) && isnan(rows[i].tflops), "%s was timed",
                  rows[i].candidate);
        cr_assert(strstr(rows[i].note, "validation"), "%s", rows[i].note);
    }
    cr_assert_eq(corrupt.runs, 1, "a FAILED candidate runs once (validation), ran %lld",
                 (long long)corrupt.runs);
    cr_assert_eq(off.runs, 1);
    cr_assert_eq(lazy.runs, 1);
    cr_assert(strstr(rows[1].note, "1 outside the tolerance"), "%s", rows[1].note);
    cr_assert(strstr(rows[2].note, "1 outside the tolerance"), "%s", rows[2].note);
    cr_assert(strstr(rows[3].note, "unwritten"), "%s", rows[3].note);
    cr_assert_gt(rows[2].val_worst, 1.0);
}

Test(bench_validate, the_peers_validate_and_unsupported_rows_are_skipped) {
    const bench_problem bp = problem("p,test,forward,1,8,8,1,10x9,3x3,1x2,2x1,2x-1,0x1,bf16,cl");
    const bench_candidate cands[4] = {
        make_candidate("cublas_im2col", "cublas_im2col", &bench_convnd_ops, NULL),
        make_candidate("pad + conv", "", &bench_pad_conv_ops, NULL),
        make_candidate("auto", "", &bench_convnd_ops, NULL),
        make_candidate("cuDNN", "", &bench_cudnn_ops, NULL)};
    bench_row rows[4];
    const bench_config cfg = small_config();
    bench_run_problem(&bp, cands, 4, &cfg, rows);
    for (int i = 0; i < 3; ++i) {
        cr_assert_eq(rows[i].status, BENCH_OK, "%s: %s", rows[i].candidate, rows[i].note);
        cr_assert(rows[i].median_ms >= 0.0);
    }
    cr_assert(strstr(rows[1].plan, "pad copy + "), "%s", rows[1].plan);
    if (convnd_active_device() != CONVND_DEVICE_GPU || !bench_have_cudnn())
        cr_assert_eq(rows[3].status, BENCH_SKIPPED, "%s", rows[3].note);
    else
        cr_assert_eq(rows[3].status, BENCH_OK, "%s", rows[3].note);

    /* transposed: no input pad to copy */
    const bench_problem tp = problem("tp,test,transposed,1,4,6,2,5x4,3x2,2x1,1x1,1x0,0x-1,f16,cf");
    bench_run_problem(&tp, cands, 4, &cfg, rows);
    cr_assert_eq(rows[0].status, BENCH_OK, "cublas_im2col transposed: %s", rows[0].note);
    cr_assert_eq(rows[1].status, BENCH_SKIPPED);
    cr_assert(strstr(rows[1].note, "transposed"), "%s", rows[1].note);
}

/* Backward rows: wgrad through the wgrad schedules (and the planner), dgrad as its transposed
 * problem; validated on the reduced copy like every row; cuDNN skipped off the GPU. */
Test(bench_validate, backward_rows_validate) {
    const char *rows_text[] = {"w,test,wgrad,2,6,6,6,40x9,3x3,2x1,1x1,1x1,1x1,bf16,cl",
                               "w2,test,wgrad,1,4,6,2,12,4,1,1,3,0,f32,cf",
                               "d,test,dgrad,2,4,6,1,9x8,3x3,2x2,1x1,1x1,1x1,f16,cl"};
    const bench_candidate cands[4] = {
        make_candidate("auto", "", &bench_convnd_ops, NULL),
        make_candidate("wgrad_splitk", "wgrad_splitk:k8", &bench_convnd_ops, NULL),
        make_candidate("wgrad_direct", "wgrad_direct", &bench_convnd_ops, NULL),
        make_candidate("cuDNN", "", &bench_cudnn_ops, NULL)};
    const bench_config cfg = small_config();
    for (size_t r = 0; r < sizeof rows_text / sizeof rows_text[0]; ++r) {
        const bench_problem bp = problem(rows_text[r]);
        const int wgrad = bp.p.mode == CONVND_WGRAD;
        bench_row rows[4];
        bench_run_problem(&bp, cands, 4, &cfg, rows);
        cr_assert_eq(rows[0].status, BENCH_OK, "%s auto: %s", bp.name, rows[0].note);
        for (int i = 1; i < 3; ++i)
            cr_assert_eq(rows[i].status, wgrad ? BENCH_OK : BENCH_SKIPPED, "%s %s: %s", bp.name,
                         rows[i].candidate, rows[i].note);
        if (convnd_active_device() != CONVND_DEVICE_GPU || !bench_have_cudnn())
            cr_assert_eq(rows[3].status, BENCH_SKIPPED, "%s", rows[3].note);
    }
}

/* The implicit-GEMM and depthwise wgrad schedules as bench candidates: each row validated on the
 * emulated device where the schedule supports it, skipped (with its reason) where not. */
Test(bench_validate, wgrad_schedule_rows_validate) {
    struct {
        const char *row;
        int ok[3]; /* wgrad_igemm_tc, wgrad_igemm_simt, wgrad_depthwise */
    } rows_text[] = {
        {"wi,test,wgrad,2,16,24,1,9x8,3x3,1x1,1x1,1x1,1x1,bf16,cl", {1, 1, 0}},
        {"wd,test,wgrad,2,8,8,8,40x9,3x3,2x1,1x1,1x1,1x1,f16,cl", {1, 1, 1}},
        {"wf,test,wgrad,1,8,16,2,12,4,1,1,3,0,f32,cf", {0, 1, 0}},
    };
    const bench_candidate cands[3] = {
        make_candidate("wgrad_igemm_tc", "wgrad_igemm_tc:32x32x32_k8", &bench_convnd_ops, NULL),
        make_candidate("wgrad_igemm_simt", "wgrad_igemm_simt:32x32x8_k8", &bench_convnd_ops, NULL),
        make_candidate("wgrad_depthwise", "wgrad_depthwise:s16", &bench_convnd_ops, NULL)};
    const bench_config cfg = small_config();
    for (size_t r = 0; r < sizeof rows_text / sizeof rows_text[0]; ++r) {
        const bench_problem bp = problem(rows_text[r].row);
        bench_row rows[3];
        bench_run_problem(&bp, cands, 3, &cfg, rows);
        for (int i = 0; i < 3; ++i)
            cr_expect_eq(rows[i].status, rows_text[r].ok[i] ? BENCH_OK : BENCH_SKIPPED,
                         "%s %s: status %d, %s", bp.name, rows[i].candidate, (int)rows[i].status,
                         rows[i].note);
    }
}

Test(bench_validate, the_candidate_list) {
    bench_candidate c[64];
    int32_t n = 0;
    char err[256] = "";
    const bench_selection all = {.peers = 1, .auto_row = 1};
    cr_assert(bench_candidates(&all, c, 64, &n, err, sizeof err), "%s", err);
    cr_assert_str_eq(c[0].label, "auto");
    int found_im2col = 0, found_pad = 0;
    for (int32_t i = 0; i < n; ++i) {
        found_im2col |= strcmp(c[i].label, "cublas_im2col") == 0 && c[i].is_peer;
        found_pad |= strcmp(c[i].label, "pad + conv") == 0 && c[i].is_peer;
    }
    cr_assert(found_im2col && found_pad);
    cr_assert_eq(n, 1 + convnd_schedule_count() + 1 +
                        (bench_have_cudnn() && convnd_active_device() == CONVND_DEVICE_GPU));

    const bench_selection one = {.schedules = "direct:t128,cublas_im2col", .peers = 0};
    cr_assert(bench_candidates(&one, c, 64, &n, err, sizeof err), "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(c[0].spec, "direct:t128");
    const bench_selection bad = {.schedules = "direct:t999"};
    cr_assert_not(bench_candidates(&bad, c, 64, &n, err, sizeof err));
    cr_assert(strstr(err, "t999"), "%s", err);
    const bench_selection unknown = {.schedules = "nosuch"};
    cr_assert_not(bench_candidates(&unknown, c, 64, &n, err, sizeof err));
    cr_assert(strstr(err, "nosuch"), "%s", err);
}

/* ---- the materialized pad copy -------------------------------------------------------------- */

static void check_pad_copy(const char *row) {
    const bench_problem bp = problem(row);
    const convnd_problem *p = &bp.p;
    convnd_problem q;
    bench_padded_problem(p, &q);
    convnd_tensor_desc xd, qd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X, &xd), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&q, CONVND_X, &qd), CONVND_OK);
    void *hx = malloc((size_t)xd.bytes), *hq = malloc((size_t)qd.bytes), *dx, *dq;
    bench_rng r = bench_rng_seed(7);
    bench_fill_random(p->dtype, hx, xd.numel, &r);
    bench_poison(hq, (size_t)qd.bytes);
    cr_assert_eq(convnd_malloc(&dx, (size_t)xd.bytes), CONVND_OK);
    cr_assert_eq(convnd_malloc(&dq, (size_t)qd.bytes), CONVND_OK);
    convnd_memcpy_h2d(dx, hx, (size_t)xd.bytes);
    convnd_memcpy_h2d(dq, hq, (size_t)qd.bytes);
    cr_assert_eq(bench_pad_copy(p, dx, dq, NULL), CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_synchronize(NULL), CONVND_OK);
    convnd_memcpy_d2h(hq, dq, (size_t)qd.bytes);
    /* every padded element: x where it maps inside, zero elsewhere (poison means unwritten) */
    int64_t idx[CONVND_MAX_RANK] = {0};
    for (int64_t e = 0; e < qd.numel; ++e) {
        int64_t rem = e, qoff = 0, xoff = 0;
        int inside = 1;
        for (int32_t d = qd.rank - 1; d >= 0; --d) { /* logical index, last dim fastest */
            idx[d] = rem % qd.shape[d];
            rem /= qd.shape[d];
        }
        for (int32_t d = 0; d < qd.rank; ++d) {
            qoff += idx[d] * qd.strides[d];
            int64_t xi = idx[d];
            if (d >= 2) {
                xi -= p->pad_before[d - 2];
                inside = inside && xi >= 0 && xi < p->input[d - 2];
            }
            xoff += xi * xd.strides[d];
        }
        const double got = convnd_ref_load(p->dtype, hq, qoff);
        const double want = inside ? convnd_ref_load(p->dtype, hx, xoff) : 0.0;
        cr_assert(got == want, "%s: padded element %lld: got %g, want %g", bp.name, (long long)e,
                  got, want);
    }
    convnd_free(dx);
    convnd_free(dq);
    free(hx);
    free(hq);
}

Test(bench_validate, pad_copy_pads_and_crops_in_both_layouts) {
    check_pad_copy("a,t,forward,2,3,4,1,5x6,3x3,1x1,1x1,2x0,1x3,bf16,cl");
    check_pad_copy("b,t,forward,2,3,4,1,5x6,3x3,1x1,1x1,-1x2,1x-2,f32,cf");
    check_pad_copy("c,t,forward,1,5,5,5,11,4,1,1,3,0,f16,cl");
    check_pad_copy("d,t,forward,1,2,2,1,4x3x5,3x3x3,1x1x1,1x1x1,2x1x0,0x1x2,f32,cl");
}
