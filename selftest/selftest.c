/* convnd-selftest's engine (selftest.h). */
#define _POSIX_C_SOURCE 200809L /* setenv, clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "problem_internal.h" /* the names errata lines use: convnd_layout_name, ... */
#include "selftest.h"
#include "test_feature_table.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_tolerance.h"
#include "causal_ref.h"
#include "convnd_causal.h"
#include "convnd_ref.h"
#include "test_wgrad_case.h"

/* First, problems deep enough in the reduction that every pipelined GEMM refills its stages
 * many times (32 channels x 9 taps: 9 k-tiles of 32, 36 of 8), where a stage or barrier bug
 * shows; they stand for their class when the level takes one case per class. Then the
 * forced-schedule suite's feature table (forward and transposed, every SPEC feature), then
 * weight gradients (dense, strided, depthwise; each dtype and layout) and views (SPEC §11). */
static const char *const lead_rows[] = {
    "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 x=cl w=cl",
    "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 f16 x=cl w=cl",
    "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 bf16 x=cl w=cl",
    "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 tf32 x=cl w=cl",
    "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1",
    "tr 2d N=1 Ci=32 Co=32 I=5,5 K=3 S=2 P0=1 P1=0 f16 x=cl w=cl",
};
static const char *const extra_rows[] = {
    "wg 2d N=2 Ci=8 Co=16 I=6,6 K=3 P0=1 P1=1",
    "wg 2d N=2 Ci=8 Co=16 I=6,6 K=3 P0=1 P1=1 x=cl w=cl y=cl",
    "wg 2d N=2 Ci=16 Co=16 I=6,5 K=3 S=2 P0=1 P1=0 f16 x=cl w=cl y=cl",
    "wg 2d N=2 Ci=16 Co=8 I=5,6 K=3 P0=1 P1=1 bf16 x=cl w=cl y=cl",
    "wg 2d N=2 Ci=8 Co=8 I=5,6 K=3 P0=1 P1=1 f16",
    "wg 2d N=2 Ci=8 Co=8 I=5,6 K=3 P0=1 P1=1 bf16",
    "wg 2d N=2 Ci=8 Co=8 I=6 K=3 P0=1 P1=1 tf32 x=cl w=cl y=cl",
    "wg 3d N=1 Ci=8 Co=8 I=3,4,4 K=3 P0=2,1,1 P1=0,1,1 f16 x=cl w=cl y=cl",
    "wg 1d N=2 Ci=8 Co=8 g=8 I=60 K=4 P0=3 P1=0",
    "wg 1d N=2 Ci=16 Co=16 g=16 I=60 K=4 P0=3 P1=0 f16 x=cl w=cl y=cl",
    "wg 1d N=2 Ci=16 Co=16 g=16 I=60 K=4 P0=3 P1=0 bf16 x=cl w=cl y=cl",
    "wg 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=210,30,6,1 ys=187,45,9,1",
    "fwd 2d N=2 Ci=3 Co=4 I=5,6 K=3 P0=1 P1=1 xs=210,30,6,1 ys=187,45,9,1",
    "fwd 2d N=2 Ci=16 Co=16 I=6,6 K=3 P0=1 P1=1 f16 x=cl w=cl xs=1152,1,192,32",
    "fwd 2d N=2 Ci=16 Co=16 I=6,6 K=3 P0=1 P1=1 bf16 x=cl w=cl xs=1152,1,192,32",
    "fwd 2d N=2 Ci=16 Co=16 I=6,6 K=3 P0=1 P1=1 x=cl w=cl xs=1152,1,192,32",
    /* a prefix input and a state output (SPEC §12): causal caches (tests/test_io_axis.c's) */
    "fwd 3d N=1 Ci=16 Co=24 I=3,4,5 K=3 P0=0,1,1 P1=0,1,1 f16 x=cl w=cl bias axis=0 pre=2 st=2",
    "fwd 1d N=2 Ci=16 Co=8 I=6 K=3 D=2 P0=-1 P1=2 bf16 x=cl w=cl axis=0 pre=4 st=2",
    "fwd 2d N=2 Ci=8 Co=12 I=5,6 K=3 S=2,1 P0=0,1 P1=0,1 tf32 x=cl w=cl axis=0 pre=3 st=4",
    "fwd 2d N=2 Ci=8 Co=8 I=4,5 K=3 D=1,2 P0=1,0 x=cl w=cl bias act=relu axis=1 pre=3 st=7",
    "fwd 1d N=2 Ci=4 Co=4 g=4 I=7 K=4 P0=0 bias act=silu axis=0 pre=3 st=3",
    "fwd 3d N=1 Ci=3 Co=4 I=3,4,5 K=3 P0=0,1,1 P1=0,1,1 bias axis=0 pre=2 st=2",
};
enum {
    LEAD_ROWS = sizeof lead_rows / sizeof lead_rows[0],
    EXTRA_ROWS = sizeof extra_rows / sizeof extra_rows[0]
};

static int32_t row_count(void) {
    return LEAD_ROWS + (int32_t)test_feature_table_count + EXTRA_ROWS;
}

/* Row r's problem text, whether z is y, and its name (the feature table's id, else deep_N or
 * extra_N). */
static const char *row_text(int32_t r, int *z_in_place, char *name, size_t name_len) {
    *z_in_place = 0;
    if (r < LEAD_ROWS) {
        snprintf(name, name_len, "deep_%d", (int)r);
        return lead_rows[r];
    }
    r -= LEAD_ROWS;
    if (r < (int32_t)test_feature_table_count) {
        *z_in_place = test_feature_table[r].z_in_place;
        snprintf(name, name_len, "%s", test_feature_table[r].id);
        return test_feature_table[r].problem;
    }
    r -= (int32_t)test_feature_table_count;
    snprintf(name, name_len, "extra_%d", (int)r);
    return extra_rows[r];
}

static const char *dtype_class(const convnd_problem *p) {
    return p->dtype == CONVND_F16              ? "f16"
           : p->dtype == CONVND_BF16           ? "bf16"
           : p->math == CONVND_MATH_ALLOW_TF32 ? "tf32"
                                               : "f32";
}

static int has_views(const convnd_problem *p) {
    return p->x_view.custom || p->y_view.custom || p->z_view.custom;
}

static int has_io(const convnd_problem *p) {
    return p->prefix_size > 0 || p->suffix_size > 0 || p->state_size > 0;
}

/* The class a case stands for: mode, dtype, x's layout, views. */
static int class_of(const convnd_problem *p) {
    const int dt = p->dtype == CONVND_F16              ? 2
                   : p->dtype == CONVND_BF16           ? 3
                   : p->math == CONVND_MATH_ALLOW_TF32 ? 1
                                                       : 0;
    return ((((int)p->mode * 4 + dt) * 2 + (p->x_layout == CONVND_CHANNELS_LAST)) * 2 +
            has_views(p)) *
               2 +
           has_io(p);
}
enum { CLASSES = 3 * 4 * 2 * 2 * 2 };

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int listed(const char *only, const char *schedule, const char *spec) {
    if (!only) return 1;
    const char *at = only;
    while (*at) {
        const size_t len = strcspn(at, ",");
        if ((strlen(schedule) == len && !strncmp(at, schedule, len)) ||
            (strlen(spec) == len && !strncmp(at, spec, len)))
            return 1;
        at += len;
        if (*at == ',') ++at;
    }
    return 0;
}

typedef struct case_result {
    int passed;
    double worst_ref, worst_direct; /* max error / tolerance against each (-1: not compared) */
    char why[512];
} case_result;

static convnd_status run_conv(const selftest_options *o, test_conv_case *c, const char *spec) {
    return o->run ? o->run(o->run_ctx, c, spec) : test_case_run(c, spec);
}

/* The last run of c (in thread order `order`, its status st) against the CPU reference and,
 * when direct is not NULL, against direct's y (the sum of both tolerances): the worst ratios kept
 * in r, r failed with the reason at the first that is over. Returns r->passed. */
static int judge_run(const test_conv_case *c, convnd_status st, const void *direct, int order,
                     case_result *r) {
    if (st != CONVND_OK) {
        snprintf(r->why, sizeof r->why, "%s (order %s): %s", convnd_status_string(st),
                 test_order_name(order), convnd_last_error());
        return r->passed = 0;
    }
    const double wr = test_case_worst(c, NULL);
    const double wd = direct ? test_case_worst(c, direct) : 0.0;
    r->worst_ref = fmax(r->worst_ref, wr);
    r->worst_direct = fmax(r->worst_direct, wd);
    if (!(wr <= 1.0)) {
        char msg[384];
        test_case_check(c, msg, sizeof msg);
        snprintf(r->why, sizeof r->why, "against the CPU reference (order %s): %s",
                 test_order_name(order), msg);
        r->passed = 0;
    } else if (!(wd <= 1.0)) {
        snprintf(r->why, sizeof r->why,
                 "against the direct schedule (order %s): %.3g x the sum of tolerances",
                 test_order_name(order), wd);
        r->passed = 0;
    }
    return r->passed;
}

/* A forward or transposed case: the direct schedule's result first (the same-device peer), then
 * spec in each thread order the device has (the emulated device: forward and reverse, copies
 * landing early, where a race between barriers shows), each against the CPU reference and
 * against direct's. */
static void conv_case(const selftest_options *o, const convnd_problem *p, int z_in_place,
                      const char *spec, case_result *r) {
    test_conv_case c;
    char err[256];
    r->worst_ref = r->worst_direct = -1;
    if (!test_case_init(&c, p, z_in_place, o->seed, err, sizeof err)) {
        snprintf(r->why, sizeof r->why, "setting up the case: %s", err);
        test_case_free(&c);
        return;
    }
    void *direct = NULL;
    const size_t ybytes = c.esize * (size_t)(c.y_span > 0 ? c.y_span : 1);
    if (strncmp(spec, "direct:", 7)) {
        convnd_status st = test_case_run(&c, "direct");
        if (st != CONVND_OK) {
            snprintf(r->why, sizeof r->why, "the direct schedule failed: %s", convnd_last_error());
            test_case_free(&c);
            return;
        }
        direct = malloc(ybytes);
        if (direct) memcpy(direct, c.hy, ybytes);
    }
    r->passed = 1;
    r->worst_ref = r->worst_direct = 0;
    const int emulated = convnd_active_device() != CONVND_DEVICE_GPU;
    if (emulated) convnd_emu_set_copies(CONVND_EMU_COPIES_EARLY, 0);
    for (int order = 0; order < test_order_count() && r->passed; ++order) {
        test_order_apply(order);
        const convnd_status st = run_conv(o, &c, spec);
        if (!judge_run(&c, st, direct, order, r)) break;
    }
    test_order_apply(0);
    if (emulated) convnd_emu_set_copies(CONVND_EMU_COPIES_LATE, 0);
    free(direct);
    if (!direct) r->worst_direct = -1;
    test_case_free(&c);
}

/* A prefix/state case (SPEC §12): the conv over the explicit X = cat(prefix, x) is the case's
 * problem, whose reference the CPU computes; p runs with the prefix and the state as their own
 * buffers, first on direct, then on spec in each thread order. y as conv_case's, and the state
 * bit for bit against X's last positions. */
static void io_case(const selftest_options *o, const convnd_problem *p, int z_in_place,
                    const char *spec, case_result *r) {
    r->worst_ref = r->worst_direct = -1;
    convnd_tensor_desc xd, pd, fd, sd;
    if (convnd_tensor_describe(p, CONVND_X, &xd) != CONVND_OK ||
        convnd_tensor_describe(p, CONVND_X_PREFIX, &pd) != CONVND_OK ||
        convnd_tensor_describe(p, CONVND_X_SUFFIX, &fd) != CONVND_OK ||
        convnd_tensor_describe(p, CONVND_STATE, &sd) != CONVND_OK) {
        snprintf(r->why, sizeof r->why, "describing the case: %s", convnd_last_error());
        return;
    }
    const size_t es = convnd_ref_dtype_size(p->dtype);
    const int64_t x_span = xd.bytes / (int64_t)es, p_span = pd.bytes / (int64_t)es,
                  f_span = fd.bytes / (int64_t)es, s_n = sd.numel > 0 ? sd.numel : 1;
    test_rng rng = test_rng_seed(o->seed);
    void *hx = malloc(es * (size_t)(x_span + 1)), *hp = malloc(es * (size_t)(p_span + 1));
    void *hf = malloc(es * (size_t)(f_span + 1));
    void *sref = malloc(es * (size_t)s_n), *sgot = malloc(es * (size_t)s_n);
    void *X = NULL, *direct = NULL, *dp = NULL, *df = NULL, *dx = NULL, *ds = NULL;
    test_conv_case c;
    memset(&c, 0, sizeof c);
    convnd_problem q;
    char err[256];
    if (!hx || !hp || !hf || !sref || !sgot) {
        snprintf(r->why, sizeof r->why, "out of host memory");
        goto done;
    }
    test_fill_random(p->dtype, hx, x_span, &rng);
    test_fill_random(p->dtype, hp, p_span, &rng);
    test_fill_random(p->dtype, hf, f_span, &rng);
    if (convnd_ref_io_input(p, hp, hx, hf, &q, &X) != CONVND_OK ||
        convnd_ref_state(p, &q, X, sref) != CONVND_OK) {
        snprintf(r->why, sizeof r->why, "the reference: %s", convnd_last_error());
        goto done;
    }
    if (!test_case_init(&c, &q, z_in_place, test_rng_next(&rng), err, sizeof err) ||
        !test_case_set_inputs(&c, X, NULL, err, sizeof err)) {
        snprintf(r->why, sizeof r->why, "setting up the case: %s", err);
        goto done;
    }
    dp = test_device_upload(p->dtype, hp, p_span);
    df = test_device_upload(p->dtype, hf, f_span);
    dx = test_device_upload(p->dtype, hx, x_span);
    ds = test_device_upload(p->dtype, NULL, s_n);
    if (!dp || !df || !dx || !ds) {
        snprintf(r->why, sizeof r->why, "device allocation failed");
        goto done;
    }
    const size_t ybytes = c.esize * (size_t)(c.y_span > 0 ? c.y_span : 1);
    if (strncmp(spec, "direct:", 7)) {
        if (test_case_run_io(&c, p, "direct", p->prefix_size ? dp : NULL, dx,
                             p->suffix_size ? df : NULL, p->state_size ? ds : NULL) != CONVND_OK) {
            snprintf(r->why, sizeof r->why, "the direct schedule failed: %s", convnd_last_error());
            goto done;
        }
        if ((direct = malloc(ybytes))) memcpy(direct, c.hy, ybytes);
    }
    r->passed = 1;
    r->worst_ref = 0;
    r->worst_direct = direct ? 0 : -1;
    for (int order = 0; order < test_order_count() && r->passed; ++order) {
        test_order_apply(order);
        test_poison_fill(p->dtype, sgot, s_n);
        convnd_status st = convnd_memcpy_h2d(ds, sgot, es * (size_t)s_n);
        if (st == CONVND_OK)
            st = test_case_run_io(&c, p, spec, p->prefix_size ? dp : NULL, dx,
                                  p->suffix_size ? df : NULL, p->state_size ? ds : NULL);
        if (st == CONVND_OK) st = convnd_memcpy_d2h(sgot, ds, es * (size_t)s_n);
        if (!judge_run(&c, st, direct, order, r)) break;
        if (r->passed && p->state_size && memcmp(sgot, sref, es * (size_t)sd.numel)) {
            snprintf(r->why, sizeof r->why,
                     "the state (order %s) differs from X's last %lld positions",
                     test_order_name(order), (long long)p->state_size);
            r->passed = 0;
        }
    }
    test_order_apply(0);
    if (!direct) r->worst_direct = -1;
done:
    convnd_free(dp);
    convnd_free(df);
    convnd_free(dx);
    convnd_free(ds);
    test_case_free(&c);
    free(X);
    free(direct);
    free(hx);
    free(hp);
    free(hf);
    free(sref);
    free(sgot);
}

/* A weight-gradient case: wgrad_direct's dw is the same-device peer; spec runs twice in each
 * thread order, every run correct and all bit-identical (test_wgrad_bit_identical). */
static void wgrad_case(const selftest_options *o, const convnd_problem *p, const char *spec,
                       case_result *r) {
    test_wgrad_case c;
    char err[256];
    r->worst_ref = r->worst_direct = -1;
    if (!test_wgrad_init(&c, p, 0, o->seed, err, sizeof err)) {
        snprintf(r->why, sizeof r->why, "setting up the case: %s", err);
        test_wgrad_free(&c);
        return;
    }
    const size_t bytes = c.esize * (size_t)(c.dwd.numel > 0 ? c.dwd.numel : 1);
    void *direct = NULL;
    if (strncmp(spec, "wgrad_direct:", 13)) {
        if (test_wgrad_run(&c, "wgrad_direct") != CONVND_OK) {
            snprintf(r->why, sizeof r->why, "wgrad_direct failed: %s", convnd_last_error());
            test_wgrad_free(&c);
            return;
        }
        direct = malloc(bytes);
        if (direct) memcpy(direct, c.hdw, bytes);
    }
    char msg[384] = "";
    r->passed = test_wgrad_bit_identical(&c, spec, NULL, msg, sizeof msg);
    r->worst_ref = test_wgrad_worst(&c, NULL);
    if (!r->passed) snprintf(r->why, sizeof r->why, "%s", msg);
    if (direct) { /* the last run's dw against wgrad_direct's */
        r->worst_direct = test_wgrad_worst(&c, direct);
        if (r->passed && !(r->worst_direct <= 1.0)) {
            snprintf(r->why, sizeof r->why, "against wgrad_direct: %.3g x the sum of tolerances",
                     r->worst_direct);
            r->passed = 0;
        }
    }
    free(direct);
    test_wgrad_free(&c);
}

/* ---- the errata file ------------------------------------------------------------------------ */

static void make_parent_dirs(const char *path) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = dir + 1; *s; ++s) {
        if (*s != '/') continue;
        *s = '\0';
        mkdir(dir, 0755); /* an existing folder is fine; a failure shows when the file is opened */
        *s = '/';
    }
}

/* 1 when the file already holds a line starting with `entry` (a failure found before). */
static int already_listed(const char *path, const char *entry) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048];
    int found = 0;
    const size_t n = strlen(entry);
    while (!found && fgets(line, sizeof line, f))
        found = !strncmp(line, entry, n);
    fclose(f);
    return found;
}

static convnd_status append_erratum(const char *path, const char *spec, const convnd_problem *p,
                                    const char *row, const case_result *r, int *written) {
    char key[512], entry[768], date[32];
    convnd_status st = convnd_errata_device_key(key, sizeof key);
    if (st != CONVND_OK) return st;
    snprintf(entry, sizeof entry, "exclude %s dtype=%s layout=%s mode=%s %s", spec, dtype_class(p),
             convnd_layout_name(p->x_layout), convnd_mode_name(p->mode), key);
    *written = 0;
    if (already_listed(path, entry)) return CONVND_OK;
    make_parent_dirs(path);
    struct stat sb;
    const int is_new = stat(path, &sb) != 0 || sb.st_size == 0;
    FILE *f = fopen(path, "a");
    if (!f)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "convnd-selftest: the errata file %s cannot be written", path);
    const time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    if (is_new)
        fprintf(f, "# convnd errata: configurations the planner never routes to on a device.\n"
                   "# Written by convnd-selftest; edit by hand as docs/errata.md says.\n");
    char why[sizeof r->why];
    snprintf(why, sizeof why, "%s", r->why);
    for (char *s = why; *s; ++s)
        if (*s == '\n' || *s == '\r') *s = ' ';
    fprintf(f, "%s  # convnd-selftest %s: %s: %s\n", entry, date, row, why);
    *written = fclose(f) == 0;
    return *written ? CONVND_OK
                    : convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                   "convnd-selftest: writing the errata file %s failed", path);
}

/* ---- the run -------------------------------------------------------------------------------- */

/* ---- the stateful causal conv1d (SPEC §13): its calls, against the f64 reference ----------- */

/* A causal case: the call's problem, in the table's words. */
typedef struct causal_row {
    const char *id;
    convnd_causal_problem p;
    int states, seq_idx; /* initial and final states given; per-token ids (two sequences a row) */
} causal_row;

static const causal_row causal_rows[] = {
    {"rows_states_w4", {2, 40, 70, 4, CONVND_F32, CONVND_CAUSAL_BDL, 1, 1, 0}, 1, 0},
    {"rows_states_w4_cl", {2, 40, 70, 4, CONVND_BF16, CONVND_CAUSAL_BLD, 1, 0, 0}, 1, 0},
    {"packed_states_w3", {1, 33, 90, 3, CONVND_F16, CONVND_CAUSAL_BLD, 0, 1, 3}, 1, 0},
    {"seq_idx_w5", {2, 8, 50, 5, CONVND_F32, CONVND_CAUSAL_BDL, 1, 0, 0}, 0, 1},
    {"width1", {2, 6, 9, 1, CONVND_F16, CONVND_CAUSAL_BDL, 1, 1, 0}, 0, 0},
};

static void *causal_dev(const void *host, size_t bytes) {
    void *d = NULL;
    if (convnd_malloc(&d, bytes ? bytes : 1) != CONVND_OK) return NULL;
    if (host && bytes && convnd_memcpy_h2d(d, host, bytes) != CONVND_OK) {
        convnd_free(d);
        return NULL;
    }
    return d;
}

/* Runs row in every thread order of the device on poisoned outputs, each run against the
 * reference (the forced-schedule suite's tolerance for the bound problem), the final states
 * bit for bit. */
static void causal_case(const selftest_options *o, const causal_row *row, case_result *r) {
    const convnd_causal_problem *p = &row->p;
    const size_t eb = convnd_ref_dtype_size(p->dtype);
    const int64_t n = p->batch * p->dim * p->seqlen, S = p->num_seqs > 0 ? p->num_seqs : p->batch;
    const int64_t sn = S * p->dim * (p->width - 1);
    test_rng rng = test_rng_seed(o->seed ^ 0x5eed5eedULL);
    void *x = malloc(eb * (size_t)n + 1), *w = malloc(eb * (size_t)(p->dim * p->width)),
         *b = malloc(eb * (size_t)p->dim + 1), *init = malloc(eb * (size_t)sn + 1),
         *y = malloc(eb * (size_t)n + 1), *fin = malloc(eb * (size_t)sn + 1);
    int32_t qsl[8] = {0, 20, 21, (int32_t)p->seqlen}, *ids = malloc(4 * (size_t)n + 4);
    double *ref = malloc(sizeof(double) * (size_t)(n + 1)),
           *mag = malloc(sizeof(double) * (size_t)(n + 1)),
           *fref = malloc(sizeof(double) * (size_t)(sn + 1));
    test_fill_random(p->dtype, x, n, &rng);
    test_fill_random(p->dtype, w, p->dim * p->width, &rng);
    test_fill_random(p->dtype, b, p->dim, &rng);
    test_fill_random(p->dtype, init, sn, &rng);
    for (int64_t i = 0; i < p->batch * p->seqlen; ++i)
        ids[i] = (int32_t)((i % p->seqlen) >= p->seqlen / 2);
    const convnd_causal_tensors host = {.x = x,
                                        .weight = w,
                                        .bias = b,
                                        .seq_idx = row->seq_idx ? ids : NULL,
                                        .query_start_loc = p->num_seqs ? qsl : NULL,
                                        .initial_states = row->states ? init : NULL,
                                        .final_states = row->states ? fin : NULL,
                                        .y = y};
    convnd_ref_causal_conv1d(p, &host, ref, mag, fref);
    convnd_problem bound;
    convnd_io unused;
    r->worst_ref = 0;
    r->worst_direct = -1;
    r->passed = convnd_bind_causal_conv1d(p, &host, &bound, &unused) == CONVND_OK;
    if (!r->passed) snprintf(r->why, sizeof r->why, "binding: %s", convnd_last_error());
    const test_tolerance tol = test_tolerance_for(&bound);
    for (int order = 0; r->passed && order < test_order_count(); ++order) {
        test_order_apply(order);
        convnd_causal_tensors d = host;
        d.x = causal_dev(x, eb * (size_t)n);
        d.weight = causal_dev(w, eb * (size_t)(p->dim * p->width));
        d.bias = causal_dev(b, eb * (size_t)p->dim);
        d.seq_idx = host.seq_idx ? causal_dev(ids, 4 * (size_t)(p->batch * p->seqlen)) : NULL;
        d.query_start_loc =
            host.query_start_loc ? causal_dev(qsl, 4 * (size_t)(p->num_seqs + 1)) : NULL;
        d.initial_states = host.initial_states ? causal_dev(init, eb * (size_t)sn) : NULL;
        memset(y, 0xff, eb * (size_t)n); /* poisoned: NaN in every dtype */
        memset(fin, 0xff, eb * (size_t)sn);
        d.y = causal_dev(y, eb * (size_t)n);
        d.final_states = host.final_states ? causal_dev(fin, eb * (size_t)sn) : NULL;
        const convnd_status st = convnd_causal_conv1d(p, &d, NULL);
        if (st == CONVND_OK) {
            convnd_memcpy_d2h(y, d.y, eb * (size_t)n);
            if (d.final_states) convnd_memcpy_d2h(fin, d.final_states, eb * (size_t)sn);
        } else {
            r->passed = 0;
            snprintf(r->why, sizeof r->why, "order %s: %s", test_order_name(order),
                     convnd_last_error());
        }
        for (int64_t i = 0; r->passed && i < n; ++i) {
            const double g = convnd_ref_load(p->dtype, y, i);
            const double bound_i = test_tolerance_bound(&tol, ref[i], mag[i]);
            const double ratio =
                bound_i > 0 ? fabs(g - ref[i]) / bound_i : (g == ref[i] ? 0 : INFINITY);
            if (!(ratio <= 1.0)) {
                r->passed = 0;
                snprintf(r->why, sizeof r->why, "order %s: y[%lld] = %.9g, reference %.9g",
                         test_order_name(order), (long long)i, g, ref[i]);
            }
            if (ratio > r->worst_ref) r->worst_ref = ratio;
        }
        for (int64_t i = 0; r->passed && host.final_states && i < sn; ++i)
            if (convnd_ref_load(p->dtype, fin, i) != fref[i]) {
                r->passed = 0;
                snprintf(r->why, sizeof r->why, "order %s: final state %lld is %.9g, not %.9g",
                         test_order_name(order), (long long)i, convnd_ref_load(p->dtype, fin, i),
                         fref[i]);
            }
        convnd_free((void *)d.x);
        convnd_free((void *)d.weight);
        convnd_free((void *)d.bias);
        convnd_free((void *)d.seq_idx);
        convnd_free((void *)d.query_start_loc);
        convnd_free((void *)d.initial_states);
        convnd_free(d.y);
        convnd_free(d.final_states);
    }
    test_order_apply(0);
    free(x), free(w), free(b), free(init), free(y), free(fin), free(ids), free(ref), free(mag),
        free(fref);
}

static void print_row(FILE *out, const char *spec, const convnd_problem *p, const char *row,
                      const case_result *r, double ms) {
    char ref[16], direct[16];
    snprintf(ref, sizeof ref, r->worst_ref < 0 ? "-" : "%.3f", r->worst_ref);
    snprintf(direct, sizeof direct, r->worst_direct < 0 ? "-" : "%.3f", r->worst_direct);
    fprintf(out, "%-30s %-4s %-14s %-10s %-5s %-30s %-4s %9s %9s %9.1f%s%s\n", spec, dtype_class(p),
            convnd_layout_name(p->x_layout), convnd_mode_name(p->mode),
            has_io(p)      ? "state"
            : has_views(p) ? "view"
                           : "-",
            row, r->passed ? "pass" : "FAIL", ref, direct, ms, r->passed ? "" : "  ", r->why);
}

/* One case's end: its row printed, counted, and a failure appended to the errata (once). */
static convnd_status record(const selftest_options *o, FILE *out, selftest_summary *sum,
                            const char *errata, const char *spec, const convnd_problem *p,
                            const char *row, const case_result *res, double t0) {
    const double ms = 1e3 * (now_seconds() - t0);
    if (o->progress) fprintf(o->progress, "\r%*s\r", 90, "");
    print_row(out, spec, p, row, res, ms);
    fflush(out);
    ++sum->cases;
    if (res->passed) {
        ++sum->passed;
        return CONVND_OK;
    }
    ++sum->failed;
    if (!errata[0]) return CONVND_OK;
    int written = 0;
    const convnd_status st = append_erratum(errata, spec, p, row, res, &written);
    if (written) {
        ++sum->errata_lines;
        snprintf(sum->errata, sizeof sum->errata, "%s", errata);
    }
    return st;
}

convnd_status selftest_run(const selftest_options *opts, selftest_summary *sum) {
    selftest_options o = *opts;
    FILE *out = o.out ? o.out : stdout;
    memset(sum, 0, sizeof *sum);
    const double start = now_seconds();
    char errata[1024] = "";
    if (!o.no_errata) {
        if (o.errata)
            snprintf(errata, sizeof errata, "%s", o.errata);
        else if (convnd_errata_path(errata, sizeof errata) != CONVND_OK)
            return CONVND_ERR_INVALID_ARGUMENT;
    }
    if (o.only) { /* every name in the list must exist */
        const char *at = o.only;
        while (*at) {
            const size_t len = strcspn(at, ",");
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)len, at);
            int32_t found = 0;
            for (int32_t i = 0; i < convnd_schedule_count() && !found; ++i) {
                char spec[160];
                found = !strcmp(name, convnd_schedule_name(i));
                for (int32_t k = 0; k < convnd_schedule_config_count(i) && !found; ++k) {
                    snprintf(spec, sizeof spec, "%s:%s", convnd_schedule_name(i),
                             convnd_schedule_config_name(i, k));
                    found = !strcmp(name, spec);
                }
            }
            if (!found)
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "--only: no schedule or schedule:config named '%s' "
                                    "(convnd-bench --list lists them)",
                                    name);
            at += len;
            if (*at == ',') ++at;
        }
    }

    /* every configuration is tried, the ones the errata exclude too */
    const char *was = getenv("CONVND_ERRATA");
    char saved[1024] = "";
    if (was) snprintf(saved, sizeof saved, "%s", was);
    setenv("CONVND_ERRATA", "off", 1);

    fprintf(out, "convnd-selftest on %s (%s), level %s\n", convnd_device_name(),
            convnd_active_device() == CONVND_DEVICE_GPU ? "GPU" : "emulated device",
            o.level == SELFTEST_QUICK  ? "quick"
            : o.level == SELFTEST_FULL ? "full"
                                       : "default");
    fprintf(out, "%-30s %-4s %-14s %-10s %-5s %-30s %-4s %9s %9s %9s\n", "config", "dtype",
            "layout", "mode", "io", "case", "result", "err/tol", "vs direct", "ms");
    int32_t total = 0;
    for (int32_t i = 0; i < convnd_schedule_count(); ++i)
        total += convnd_schedule_config_count(i);
    int32_t done = 0;
    convnd_status st = CONVND_OK;
    for (int32_t i = 0; i < convnd_schedule_count() && st == CONVND_OK; ++i) {
        const char *name = convnd_schedule_name(i);
        for (int32_t k = 0; k < convnd_schedule_config_count(i) && st == CONVND_OK; ++k) {
            char spec[160];
            snprintf(spec, sizeof spec, "%s:%s", name, convnd_schedule_config_name(i, k));
            ++done;
            if (!listed(o.only, name, spec)) continue;
            if (o.progress) {
                fprintf(o.progress, "\rconvnd-selftest: [%d/%d] %-34s %d failed so far", (int)done,
                        (int)total, spec, (int)sum->failed);
                fflush(o.progress);
            }
            int seen[CLASSES] = {0}, cases = 0;
            for (int32_t r = 0; r < row_count(); ++r) {
                int z_in_place;
                char row[64];
                const char *text = row_text(r, &z_in_place, row, sizeof row);
                convnd_problem p;
                char err[256], why[512];
                if (!test_problem_parse(text, &p, err, sizeof err)) continue;
                if (!convnd_schedule_supports(spec, &p, why, sizeof why)) continue;
                const int cls = class_of(&p);
                if (o.level == SELFTEST_QUICK && cases > 0) break;
                if (o.level == SELFTEST_DEFAULT && seen[cls]) continue;
                seen[cls] = 1;
                ++cases;
                case_result res;
                memset(&res, 0, sizeof res);
                const double t0 = now_seconds();
                if (p.mode == CONVND_WGRAD)
                    wgrad_case(&o, &p, spec, &res);
                else if (has_io(&p))
                    io_case(&o, &p, z_in_place, spec, &res);
                else
                    conv_case(&o, &p, z_in_place, spec, &res);
                st = record(&o, out, sum, errata, spec, &p, row, &res, t0);
            }
            /* the stateful causal conv1d's schedule runs its calls' problems (SPEC §13) */
            for (size_t r = 0;
                 !strcmp(name, "causal_conv1d") && r < sizeof causal_rows / sizeof causal_rows[0];
                 ++r) {
                if (o.level == SELFTEST_QUICK && cases > 0) break;
                convnd_problem p;
                convnd_io io;
                const causal_row *row = &causal_rows[r];
                const convnd_causal_tensors shape_only = {
                    .seq_idx = row->seq_idx ? (const int32_t *)1 : NULL,
                    .query_start_loc = row->p.num_seqs ? (const int32_t *)1 : NULL,
                    .initial_states = row->states ? (const void *)1 : NULL,
                    .final_states = row->states ? (void *)1 : NULL};
                if (convnd_bind_causal_conv1d(&row->p, &shape_only, &p, &io) != CONVND_OK) continue;
                ++cases;
                case_result res;
                memset(&res, 0, sizeof res);
                const double t0 = now_seconds();
                causal_case(&o, row, &res);
                st = record(&o, out, sum, errata, spec, &p, row->id, &res, t0);
            }
            if (cases) ++sum->configs;
        }
    }
    if (o.progress) fprintf(o.progress, "\r%*s\r", 90, "");
    if (was)
        setenv("CONVND_ERRATA", saved, 1);
    else
        unsetenv("CONVND_ERRATA");
    sum->seconds = now_seconds() - start;
    fprintf(out, "convnd-selftest: %d configurations, %d cases: %d passed, %d failed (%.1f s)",
            (int)sum->configs, (int)sum->cases, (int)sum->passed, (int)sum->failed, sum->seconds);
    if (sum->errata_lines)
        fprintf(out, "; %d line(s) appended to the errata %s: the planner no longer routes there",
                (int)sum->errata_lines, sum->errata);
    fprintf(out, "\n");
    return st;
}
