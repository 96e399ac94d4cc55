/* The plan object (convnd.h "plans"): a plan executed many times from several threads gives
 * bytes identical to conv_nd's; executing makes no device allocation and never autotunes
 * (autotune runs at creation, on the caller's scratch); a forced schedule that does not support
 * the problem fails at creation with its reason; execute checks pointers like conv_nd.
 *
 * Threads never call Criterion's assertions: each records its first failure, the test asserts
 * after joining. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autotune.h"
#include "convnd.h"
#include "device_services.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"

TestSuite(plan, .timeout = 600);

enum { THREADS = 4, RUNS_PER_THREAD = 3 };

/* Fresh inputs per run; the seed goes into every message so a failure can be replayed. */
static uint64_t fresh_seed(void) {
    const char *env = getenv("CONVND_TEST_SEED");
    return env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
}

static convnd_problem parse(const char *text) {
    convnd_problem p;
    char err[128];
    cr_assert(test_problem_parse(text, &p, err, sizeof err), "%s: %s", text, err);
    return p;
}

typedef struct executor {
    const convnd_plan_t *plan;
    const test_conv_case *c;
    void *workspace;
    size_t workspace_bytes;
    int failures;
    char first_failure[256];
} executor;

/* Executes the shared plan RUNS_PER_THREAD times into this thread's own poisoned y and compares
 * the bytes with conv_nd's y (c->hy). */
static void *execute_many(void *arg) {
    executor *e = arg;
    const test_conv_case *c = e->c;
    const size_t bytes = (size_t)c->yd.bytes;
    void *host = malloc(bytes ? bytes : 1);
    for (int r = 0; r < RUNS_PER_THREAD && host; ++r) {
        void *dy = test_device_upload(c->p.dtype, c->z_in_place ? c->hz : NULL, c->yd.numel);
        convnd_status st =
            dy ? convnd_plan_execute(e->plan, c->dx, c->dw, c->db, c->z_in_place ? dy : c->dz, dy,
                                     e->workspace, e->workspace_bytes, NULL)
               : CONVND_ERR_OUT_OF_MEMORY;
        if (st == CONVND_OK) st = convnd_memcpy_d2h(host, dy, bytes);
        convnd_free(dy);
        if (st != CONVND_OK) {
            if (!e->failures++)
                snprintf(e->first_failure, sizeof e->first_failure, "run %d: %s (%s)", r,
                         convnd_status_string(st), convnd_last_error());
        } else if (memcmp(host, c->hy, bytes) != 0 && !e->failures++) {
            snprintf(e->first_failure, sizeof e->first_failure, "run %d: y differs from conv_nd's",
                     r);
        }
    }
    free(host);
    return NULL;
}

/* conv_nd (the planner's choice) against the reference, then one plan shared by THREADS
 * threads, in every thread order of the device. */
static void plan_matches_conv_nd(const char *text, int z_in_place, uint64_t seed) {
    const convnd_problem p = parse(text);
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        test_conv_case c;
        char err[256], msg[512];
        cr_assert(test_case_init(&c, &p, z_in_place, seed, err, sizeof err), "%s: %s", text, err);
        cr_assert_eq(test_case_run(&c, NULL), CONVND_OK, "%s: conv_nd: %s", text,
                     convnd_last_error());
        cr_assert(test_case_check(&c, msg, sizeof msg), "%s (seed %llu, %s): %s", text,
                  (unsigned long long)seed, test_order_name(o), msg);

        convnd_plan_t *plan = NULL;
        cr_assert_eq(convnd_plan_create(&plan, &p, NULL), CONVND_OK, "%s: %s", text,
                     convnd_last_error());
        char name[128], described[256];
        cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK);
        cr_assert_eq(convnd_plan_describe(plan, described, sizeof described), CONVND_OK);
        cr_expect(strncmp(described, name, strlen(name)) == 0 && described[strlen(name)] == ' ',
                  "describe '%s' does not start with conv_nd's plan '%s'", described, name);
        size_t ws = 0, ws_conv = 0;
        cr_assert_eq(convnd_plan_workspace_size(plan, &ws), CONVND_OK);
        cr_assert_eq(convnd_workspace_size(&p, NULL, &ws_conv), CONVND_OK);
        cr_expect_eq(ws, ws_conv, "%s: plan workspace %zu, conv_nd's %zu", text, ws, ws_conv);
        void *workspace = NULL;
        if (ws) cr_assert_eq(convnd_malloc(&workspace, ws * THREADS), CONVND_OK);

        executor e[THREADS];
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; ++i) {
            e[i] = (executor){.plan = plan, .c = &c, .workspace_bytes = ws};
            e[i].workspace = workspace ? (char *)workspace + (size_t)i * ws : NULL;
            cr_assert_eq(pthread_create(&t[i], NULL, execute_many, &e[i]), 0);
        }
        for (int i = 0; i < THREADS; ++i)
            cr_assert_eq(pthread_join(t[i], NULL), 0);
        for (int i = 0; i < THREADS; ++i)
            cr_expect_eq(e[i].failures, 0, "%s (%s, seed %llu), thread %d: %s", text, described,
                         (unsigned long long)seed, i, e[i].first_failure);
        convnd_free(workspace);
        convnd_plan_destroy(plan);
        test_case_free(&c);
    }
}

Test(plan, many_threads_bit_identical_to_conv_nd) {
    const uint64_t seed = fresh_seed();
    /* one problem per schedule family the planner routes to, and a workspace user */
    plan_matches_conv_nd("fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 bias", 0, seed);
    plan_matches_conv_nd("fwd 2d N=1 Ci=6 Co=6 g=6 I=7,7 K=3 P0=1 P1=1 x=cl w=cl", 0, seed + 1);
    plan_matches_conv_nd("tr 2d N=1 Ci=16 Co=16 I=4,4 K=3 S=2 P0=1 P1=1 bf16 z beta=0.5", 1,
                         seed + 2);
    plan_matches_conv_nd("fwd 1d N=2 Ci=3 Co=5 I=9 K=3 D=2 P0=2 P1=0 f16 act=relu", 0, seed + 3);
}

Test(plan, forced_unsupported_fails_at_create_with_the_reason) {
    const convnd_problem p = parse("fwd 2d N=1 Ci=4 Co=4 g=2 I=6,6 K=3 P0=1 P1=1");
    convnd_plan_t *plan = (convnd_plan_t *)&p; /* must come back NULL */
    convnd_options opts = {.schedule = "depthwise:cl_r4"};
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_ERR_UNSUPPORTED);
    cr_expect_null(plan);
    cr_expect(strstr(convnd_last_error(), "forced schedule 'depthwise:cl_r4' does not support") &&
                  strstr(convnd_last_error(), "not depthwise: groups=2, C_in=4"),
              "message: %s", convnd_last_error());
    opts.schedule = "no_such_schedule";
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "unknown schedule"), "%s", convnd_last_error());
    convnd_problem bad = p;
    bad.groups = 3;
    cr_assert_eq(convnd_plan_create(&plan, &bad, NULL), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "groups=3 does not divide C_in=4"), "%s",
              convnd_last_error());
    cr_expect_null(plan);
    /* a forced schedule that does support it is taken, and describe says why */
    opts.schedule = "grouped";
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_OK, "%s", convnd_last_error());
    char d[256];
    cr_assert_eq(convnd_plan_describe(plan, d, sizeof d), CONVND_OK);
    cr_expect(strncmp(d, "grouped:", 8) == 0 && strstr(d, "forced by convnd_options.schedule"),
              "%s", d);
    convnd_plan_destroy(plan);
}

/* Autotune (allowed on the emulated device by the test hook) runs once, at creation, on the
 * caller's scratch; executing the plan many times allocates nothing and times nothing. */
Test(plan, execute_never_allocates_nor_autotunes) {
    convnd_autotune_allow_emulated(1);
    const convnd_problem p = parse("fwd 2d N=1 Ci=8 Co=8 I=5,5 K=3 P0=1 P1=1");
    convnd_options opts = {.autotune = 1};
    convnd_plan_t *plan = NULL;
    /* no scratch: refused, naming what is needed */
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_ERR_WORKSPACE);
    cr_expect(strstr(convnd_last_error(), "autotune_scratch must hold"), "%s", convnd_last_error());
    cr_expect_null(plan);

    size_t scratch_bytes = 0;
    cr_assert_eq(convnd_plan_autotune_scratch_size(&p, &opts, &scratch_bytes), CONVND_OK);
    cr_assert_gt(scratch_bytes, 0);
    cr_assert_eq(convnd_malloc(&opts.autotune_scratch, scratch_bytes), CONVND_OK);
    opts.autotune_scratch_bytes = scratch_bytes;
    const uint64_t tuned_before = convnd_autotune_runs();
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_OK, "%s", convnd_last_error());
    cr_expect_eq(convnd_autotune_runs(), tuned_before + 1, "autotune did not run at creation");
    char d[256];
    cr_assert_eq(convnd_plan_describe(plan, d, sizeof d), CONVND_OK);
    cr_expect(strstr(d, "autotune: fastest"), "%s", d);

    test_conv_case c;
    char err[256], msg[512];
    cr_assert(test_case_init(&c, &p, 0, fresh_seed(), err, sizeof err), "%s", err);
    size_t ws = 0;
    cr_assert_eq(convnd_plan_workspace_size(plan, &ws), CONVND_OK);
    void *workspace = NULL;
    if (ws) cr_assert_eq(convnd_malloc(&workspace, ws), CONVND_OK);

    const uint64_t allocations = convnd_device_allocations(), tuned = convnd_autotune_runs();
    for (int r = 0; r < 20; ++r)
        cr_assert_eq(convnd_plan_execute(plan, c.dx, c.dw, c.db, c.dz, c.dy, workspace, ws, NULL),
                     CONVND_OK, "%s", convnd_last_error());
    cr_expect_eq(convnd_device_allocations(), allocations, "execute allocated device memory");
    cr_expect_eq(convnd_autotune_runs(), tuned, "execute autotuned");

    /* the tuned plan's result is right: conv_nd forced to the same schedule gives these bytes */
    const size_t bytes = (size_t)c.yd.bytes;
    void *planned = malloc(bytes);
    cr_assert_eq(convnd_memcpy_d2h(planned, c.dy, bytes), CONVND_OK);
    char spec[128];
    snprintf(spec, sizeof spec, "%.*s", (int)strcspn(d, " "), d);
    cr_assert_eq(test_case_run(&c, spec), CONVND_OK, "%s: %s", spec, convnd_last_error());
    cr_expect(test_case_check(&c, msg, sizeof msg), "%s: %s", spec, msg);
    cr_expect(memcmp(planned, c.hy, bytes) == 0, "plan %s and conv_nd differ", spec);

    /* a second plan finds the winner cached: no timing, no scratch needed */
    convnd_options cached = {.autotune = 1};
    convnd_plan_t *again = NULL;
    cr_assert_eq(convnd_plan_autotune_scratch_size(&p, &cached, &scratch_bytes), CONVND_OK);
    cr_expect_eq(scratch_bytes, 0);
    cr_assert_eq(convnd_plan_create(&again, &p, &cached), CONVND_OK, "%s", convnd_last_error());
    cr_expect_eq(convnd_autotune_runs(), tuned);
    char d2[256];
    cr_assert_eq(convnd_plan_describe(again, d2, sizeof d2), CONVND_OK);
    cr_expect(strstr(d2, "autotune: cached winner") && strncmp(d, d2, strlen(spec)) == 0,
              "%s vs %s", d2, d);

    free(planned);
    convnd_plan_destroy(again);
    convnd_plan_destroy(plan);
    convnd_free(workspace);
    convnd_free(opts.autotune_scratch);
    test_case_free(&c);
    convnd_autotune_allow_emulated(0);
}

/* The library's counters: creating a plan validates the problem and runs the planner once each;
 * executing it does neither (what the PyTorch op's plan cache relies on); conv_nd does both. */
Test(plan, execute_validates_and_plans_nothing) {
    const convnd_problem p = parse("fwd 2d N=2 Ci=8 Co=16 I=6,5 K=3 P0=1 P1=0 bf16 x=cl w=cl");
    test_conv_case c; /* set up first: its own shape queries validate */
    char err[256], msg[512];
    cr_assert(test_case_init(&c, &p, 0, fresh_seed(), err, sizeof err), "%s", err);
    convnd_counters before, created, executed, one_shot;
    convnd_get_counters(&before);
    convnd_plan_t *plan = NULL;
    cr_assert_eq(convnd_plan_create(&plan, &p, NULL), CONVND_OK, "%s", convnd_last_error());
    convnd_get_counters(&created);
    cr_expect_eq(created.validations, before.validations + 1);
    cr_expect_eq(created.plans, before.plans + 1);

    size_t ws = 0;
    cr_assert_eq(convnd_plan_workspace_size(plan, &ws), CONVND_OK);
    ws += 256; /* a workspace is given, so execute checks it (alignment, overlaps) */
    void *workspace = NULL;
    cr_assert_eq(convnd_malloc(&workspace, ws), CONVND_OK);
    for (int r = 0; r < 5; ++r)
        cr_assert_eq(convnd_plan_execute(plan, c.dx, c.dw, c.db, c.dz, c.dy, workspace, ws, NULL),
                     CONVND_OK, "%s", convnd_last_error());
    convnd_get_counters(&executed);
    cr_expect_eq(executed.validations, created.validations, "execute validated");
    cr_expect_eq(executed.plans, created.plans, "execute planned");
    cr_assert_eq(convnd_memcpy_d2h(c.hy, c.dy, (size_t)c.yd.bytes), CONVND_OK);
    cr_expect(test_case_check(&c, msg, sizeof msg), "%s", msg);

    cr_assert_eq(conv_nd(&p, c.dx, c.dw, c.db, c.dz, c.dy, workspace, ws, NULL, NULL), CONVND_OK,
                 "%s", convnd_last_error());
    convnd_get_counters(&one_shot);
    cr_expect_gt(one_shot.validations, executed.validations);
    cr_expect_eq(one_shot.plans, executed.plans + 1);
    convnd_get_counters(NULL); /* ignored */

    convnd_free(workspace);
    test_case_free(&c);
    convnd_plan_destroy(plan);
}

/* A plan answers shape queries from what it validated: the same descriptions and output sizes
 * as the raw-problem queries, with no validation; bad arguments are errors naming them. */
Test(plan, tensor_describe_and_output_size_validate_nothing) {
    const char *problems[] = {
        "fwd 2d N=2 Ci=8 Co=16 I=6,5 K=3 P0=1 P1=0 bf16 x=cl w=cl",
        "tr 3d N=1 Ci=4 Co=6 g=2 I=3,4,5 K=2,3,2 S=2,1,3 P0=1 P1=0 z bias",
        "wg 1d N=3 Ci=2 Co=5 I=11 K=3 S=2 P0=2 P1=-1 z beta=1",
        "fwd 1d N=2 Ci=5 Co=3 I=6 K=3 D=2 P0=1 bf16 x=cl axis=0 pre=3 st=4",
    };
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; ++i) {
        const convnd_problem p = parse(problems[i]);
        convnd_plan_t *plan = NULL;
        cr_assert_eq(convnd_plan_create(&plan, &p, NULL), CONVND_OK, "%s: %s", problems[i],
                     convnd_last_error());
        int64_t want_out[CONVND_MAX_DIMS], got_out[CONVND_MAX_DIMS];
        cr_assert_eq(convnd_output_size(&p, want_out), CONVND_OK);
        convnd_counters before, after;
        convnd_get_counters(&before);
        cr_assert_eq(convnd_plan_output_size(plan, got_out), CONVND_OK);
        for (convnd_tensor t = CONVND_X; t <= CONVND_STATE; ++t) {
            convnd_tensor_desc want, got;
            const convnd_status ws = convnd_tensor_describe(&p, t, &want);
            convnd_get_counters(&before); /* the raw query validated; the plan's must not */
            const convnd_status gs = convnd_plan_tensor_describe(plan, t, &got);
            convnd_get_counters(&after);
            cr_expect_eq(after.validations, before.validations, "%s: tensor %d validated",
                         problems[i], (int)t);
            cr_expect_eq(gs, ws, "%s: tensor %d: status %d, the raw query's %d", problems[i],
                         (int)t, (int)gs, (int)ws);
            if (ws == CONVND_OK && gs == CONVND_OK)
                cr_expect(memcmp(&got, &want, sizeof got) == 0, "%s: tensor %d differs",
                          problems[i], (int)t);
        }
        cr_expect(memcmp(got_out, want_out, sizeof got_out) == 0, "%s: output sizes differ",
                  problems[i]);
        cr_expect_eq(convnd_plan_tensor_describe(plan, (convnd_tensor)11, &(convnd_tensor_desc){0}),
                     CONVND_ERR_INVALID_ARGUMENT);
        cr_expect(strstr(convnd_last_error(), "tensor=11"), "%s", convnd_last_error());
        cr_expect_eq(convnd_plan_tensor_describe(plan, CONVND_X, NULL), CONVND_ERR_NULL_POINTER);
        cr_expect_eq(convnd_plan_output_size(plan, NULL), CONVND_ERR_NULL_POINTER);
        convnd_plan_destroy(plan);
    }
    cr_expect_eq(convnd_plan_output_size(NULL, (int64_t[CONVND_MAX_DIMS]){0}),
                 CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "plan is NULL"), "%s", convnd_last_error());
}

/* execute's pointer checks are conv_nd's, and an error writes nothing. */
Test(plan, execute_checks_pointers_and_workspace) {
    const convnd_problem p = parse("fwd 1d N=1 Ci=2 Co=3 I=8 K=3 bias");
    test_conv_case c;
    char err[256];
    cr_assert(test_case_init(&c, &p, 0, fresh_seed(), err, sizeof err), "%s", err);
    convnd_plan_t *plan = NULL;
    cr_assert_eq(convnd_plan_create(&plan, &p, NULL), CONVND_OK);
    cr_expect_eq(convnd_plan_execute(NULL, c.dx, c.dw, c.db, NULL, c.dy, NULL, 0, NULL),
                 CONVND_ERR_NULL_POINTER);
    cr_expect_eq(convnd_plan_execute(plan, NULL, c.dw, c.db, NULL, c.dy, NULL, 0, NULL),
                 CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "x is NULL"), "%s", convnd_last_error());
    cr_expect_eq(convnd_plan_execute(plan, c.dx, c.dw, NULL, NULL, c.dy, NULL, 0, NULL),
                 CONVND_ERR_NULL_POINTER);
    cr_expect(strstr(convnd_last_error(), "bias is NULL"), "%s", convnd_last_error());
    cr_expect_eq(convnd_plan_execute(plan, c.dy, c.dw, c.db, NULL, c.dy, NULL, 0, NULL),
                 CONVND_ERR_ALIASING);
    convnd_plan_destroy(plan);

    convnd_options opts = {.schedule = "cublas_im2col"};
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_OK, "%s", convnd_last_error());
    size_t ws = 0;
    cr_assert_eq(convnd_plan_workspace_size(plan, &ws), CONVND_OK);
    cr_assert_gt(ws, 0);
    cr_expect_eq(convnd_plan_execute(plan, c.dx, c.dw, c.db, NULL, c.dy, c.dz, ws - 1, NULL),
                 CONVND_ERR_WORKSPACE);
    cr_expect(strstr(convnd_last_error(), "needs"), "%s", convnd_last_error());
    convnd_plan_destroy(plan);

    /* nothing above touched y: it still holds what test_case_init left there */
    void *host = malloc((size_t)c.yd.bytes);
    void *before = malloc((size_t)c.yd.bytes);
    cr_assert_eq(convnd_memcpy_d2h(host, c.dy, (size_t)c.yd.bytes), CONVND_OK);
    test_poison_fill(c.p.dtype, before, c.yd.numel);
    cr_expect(memcmp(host, before, (size_t)c.yd.bytes) == 0, "a failed execute wrote y");
    free(host);
    free(before);
    test_case_free(&c);
}
