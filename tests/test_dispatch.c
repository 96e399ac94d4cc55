/* conv_nd's dispatch: forced schedules (option and CONVND_SCHEDULE), their errors, workspace
 * checks, plan names, zero-size problems, the listing API and the autotune cache, and that no
 * error ever writes to y. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convnd.h"
#include "planner.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"
#include "test_random.h"
#include "test_random_problem.h"

TestSuite(dispatch, .timeout = 120);

static void setup(test_conv_case *c, const char *text) {
    const convnd_problem p = test_parse_valid(text);
    char err[256];
    cr_assert(test_case_init(c, &p, 0, 42, err, sizeof err), "%s", err);
}

/* y on the device still holds the poison test_case_init put there: nothing was written. */
static void expect_y_untouched(const test_conv_case *c, const char *what) {
    const int64_t n = c->yd.numel > 0 ? c->yd.numel : 1;
    void *h = malloc(c->esize * (size_t)n);
    cr_assert(h);
    cr_assert(convnd_memcpy_d2h(h, c->dy, c->esize * (size_t)n) == CONVND_OK);
    int64_t written = 0;
    for (int64_t i = 0; i < n; ++i)
        written += !test_is_poison(c->p.dtype, h, i);
    free(h);
    cr_expect(written == 0, "%s: %lld elements of y were written", what, (long long)written);
}

/* conv_nd with the case's buffers and the given options */
static convnd_status call(test_conv_case *c, const convnd_options *opts) {
    return conv_nd(&c->p, c->dx, c->dw, c->p.has_bias ? c->db : NULL, c->p.has_z ? c->dz : NULL,
                   c->dy, NULL, 0, NULL, opts);
}

static const char *small = "fwd 2d N=2 Ci=3 Co=4 I=6,5 K=3 P0=1 P1=1 bias";

Test(dispatch, unknown_schedule_lists_valid_names) {
    test_conv_case c;
    setup(&c, small);
    const convnd_options opts = {.schedule = "no_such_schedule"};
    cr_expect_eq(call(&c, &opts), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "no_such_schedule"), "message: %s", convnd_last_error());
    cr_expect(strstr(convnd_last_error(), "direct"), "message lists no valid names: %s",
              convnd_last_error());
    expect_y_untouched(&c, "unknown schedule");
    test_case_free(&c);
}

Test(dispatch, bad_config_name_or_index) {
    test_conv_case c;
    setup(&c, small);
    const char *bad[] = {"direct:t999", "direct:99", "direct:", "direct:-1", "direct:1x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const convnd_options opts = {.schedule = bad[i]};
        cr_expect_eq(call(&c, &opts), CONVND_ERR_INVALID_ARGUMENT, "%s accepted", bad[i]);
        cr_expect(strstr(convnd_last_error(), "t128"), "%s: message lists no configs: %s", bad[i],
                  convnd_last_error());
        expect_y_untouched(&c, bad[i]);
    }
    test_case_free(&c);
}

Test(dispatch, config_by_name_and_by_index) {
    test_conv_case c;
    setup(&c, small);
    const char *good[] = {"direct", "direct:t256", "direct:0", "direct:1"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        cr_expect_eq(test_case_run(&c, good[i]), CONVND_OK, "%s: %s", good[i], convnd_last_error());
        char msg[512];
        cr_expect(test_case_check(&c, msg, sizeof msg), "%s: %s", good[i], msg);
    }
    const convnd_options opts = {.schedule = "direct:1"};
    char name[64];
    cr_assert_eq(convnd_plan_name(&c.p, &opts, name, sizeof name), CONVND_OK);
    cr_expect_str_eq(name, "direct:t256");
    test_case_free(&c);
}

/* Problems some schedule may refuse; the forced call must fail with the schedule's reason. */
static const char *const probe_problems[] = {
    "tr 2d Ci=4 Co=3 I=5 K=3 S=2 P0=1 P1=0",       "fwd 3d Ci=3 Co=4 I=5 K=3 P0=1 P1=1 f16",
    "fwd 2d Ci=6 Co=6 g=3 I=6 K=3 bf16 x=cl w=cl", "fwd 1d Ci=5 Co=3 I=11 K=2 S=2 D=2 P0=-1 P1=2",
    "fwd 2d Ci=8 Co=8 I=6 K=3 P0=1 P1=1 tf32",     "fwd 2d Ci=8 Co=8 I=6 K=3 P0=1 P1=1",
};

Test(dispatch, forced_unsupported_reports_reason) {
    int probed = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t cfg = 0; cfg < s->num_configs; ++cfg) {
            for (size_t k = 0; k < sizeof probe_problems / sizeof probe_problems[0]; ++k) {
                char spec[128], reason[512];
                snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[cfg]);
                test_conv_case c;
                setup(&c, probe_problems[k]);
                if (convnd_schedule_supports(spec, &c.p, reason, sizeof reason)) {
                    test_case_free(&c);
                    continue;
                }
                ++probed;
                cr_expect(reason[0] != '\0', "%s refuses '%s' without a reason", spec,
                          probe_problems[k]);
                const convnd_options opts = {.schedule = spec};
                cr_expect_eq(call(&c, &opts), CONVND_ERR_UNSUPPORTED, "%s on '%s'", spec,
                             probe_problems[k]);
                cr_expect(strstr(convnd_last_error(), reason), "%s: message '%s' lacks '%s'", spec,
                          convnd_last_error(), reason);
                expect_y_untouched(&c, spec);
                test_case_free(&c);
            }
        }
    }
    if (probed == 0) cr_skip_test("every registered schedule supports every probe problem");
}

Test(dispatch, workspace_too_small) {
    int probed = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t cfg = 0; cfg < s->num_configs; ++cfg) {
            for (size_t k = 0; k < sizeof probe_problems / sizeof probe_problems[0]; ++k) {
                char spec[128], reason[512];
                snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[cfg]);
                test_conv_case c;
                setup(&c, probe_problems[k]);
                const convnd_options opts = {.schedule = spec};
                size_t need = 0;
                if (!convnd_schedule_supports(spec, &c.p, reason, sizeof reason) ||
                    convnd_workspace_size(&c.p, &opts, &need) != CONVND_OK || need == 0) {
                    test_case_free(&c);
                    continue;
                }
                ++probed;
                void *ws = test_device_upload(CONVND_F32, NULL, (int64_t)need / 4 + 1);
                cr_assert(ws);
                const convnd_status st = conv_nd(&c.p, c.dx, c.dw, c.p.has_bias ? c.db : NULL, NULL,
                                                 c.dy, ws, need - 1, NULL, &opts);
                cr_expect_eq(st, CONVND_ERR_WORKSPACE, "%s with %zu of %zu bytes", spec, need - 1,
                             need);
                char needed[32];
                snprintf(needed, sizeof needed, "%zu", need);
                cr_expect(strstr(convnd_last_error(), needed), "message names no size: %s",
                          convnd_last_error());
                expect_y_untouched(&c, "workspace too small");
                cr_expect_eq(conv_nd(&c.p, c.dx, c.dw, c.p.has_bias ? c.db : NULL, NULL, c.dy, NULL,
                                     0, NULL, &opts),
                             CONVND_ERR_WORKSPACE, "%s with a NULL workspace", spec);
                convnd_free(ws);
                test_case_free(&c);
            }
        }
    }
    if (probed == 0) cr_skip_test("no registered schedule needs a workspace yet");
}

Test(dispatch, plan_name_visible_and_consistent) {
    test_rng r = test_rng_seed(7);
    const test_problem_limits lim = {.max_outputs = 1 << 20, .max_macs = 1 << 30};
    for (int i = 0; i < 50; ++i) {
        convnd_problem p;
        test_random_problem(&r, &lim, &p);
        char name[128], text[512], reason[512];
        convnd_problem_format(text, sizeof text, &p);
        cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK, "%s: %s", text,
                     convnd_last_error());
        cr_expect(strchr(name, ':'), "plan name '%s' lacks ':config'", name);
        cr_expect(convnd_schedule_supports(name, &p, reason, sizeof reason),
                  "planner chose '%s', which refuses %s: %s", name, text, reason);
    }
    const convnd_problem p = test_parse_valid(small);
    char name[8];
    cr_expect_eq(convnd_plan_name(&p, NULL, name, 3), CONVND_ERR_INVALID_ARGUMENT,
                 "a too-small buffer is an error");
    cr_expect_eq(convnd_plan_name(&p, NULL, NULL, 0), CONVND_ERR_NULL_POINTER);
}

Test(dispatch, env_schedule_honoured) {
    const convnd_problem p = test_parse_valid(small);
    char name[64];
    cr_assert_eq(setenv("CONVND_SCHEDULE", "direct:t256", 1), 0);
    cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK);
    cr_expect_str_eq(name, "direct:t256");
    /* the option wins over the environment */
    const convnd_options opts = {.schedule = "direct:t128"};
    cr_assert_eq(convnd_plan_name(&p, &opts, name, sizeof name), CONVND_OK);
    cr_expect_str_eq(name, "direct:t128");

    cr_assert_eq(setenv("CONVND_SCHEDULE", "bogus", 1), 0);
    test_conv_case c;
    setup(&c, small);
    cr_expect_eq(call(&c, NULL), CONVND_ERR_INVALID_ARGUMENT, "unknown env schedule accepted");
    cr_expect(strstr(convnd_last_error(), "bogus"), "message: %s", convnd_last_error());
    expect_y_untouched(&c, "CONVND_SCHEDULE=bogus");
    size_t ws;
    cr_expect_eq(convnd_workspace_size(&c.p, NULL, &ws), CONVND_ERR_INVALID_ARGUMENT);

    cr_assert_eq(setenv("CONVND_SCHEDULE", "", 1), 0); /* empty: the planner decides */
    cr_expect_eq(test_case_run(&c, NULL), CONVND_OK, "%s", convnd_last_error());
    char msg[512];
    cr_expect(test_case_check(&c, msg, sizeof msg), "%s", msg);
    test_case_free(&c);
}

Test(dispatch, zero_size_does_nothing) {
    const char *cases[] = {"fwd 2d N=0 Ci=3 Co=4 I=5 K=3", "fwd 2d Ci=3 Co=0 I=5 K=3",
                           "tr 3d N=0 Ci=2 Co=2 I=3 K=2 S=2 bias", "fwd 1d N=0 Ci=0 Co=0 I=4 K=1"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        test_conv_case c;
        setup(&c, cases[i]);
        cr_expect_eq(call(&c, NULL), CONVND_OK, "%s: %s", cases[i], convnd_last_error());
        cr_expect_eq(c.yd.numel, 0);
        expect_y_untouched(&c, cases[i]); /* the one-element sentinel buffer */
        const convnd_options opts = {.schedule = "direct"};
        cr_expect_eq(call(&c, &opts), CONVND_OK, "%s forced: %s", cases[i], convnd_last_error());
        test_case_free(&c);
    }
}

Test(dispatch, errors_leave_y_untouched) {
    test_conv_case c;
    setup(&c, small);
    convnd_problem bad = c.p;
    bad.groups = 2; /* does not divide C_in = 3 */
    cr_expect_eq(conv_nd(&bad, c.dx, c.dw, c.db, NULL, c.dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_INVALID_ARGUMENT);
    expect_y_untouched(&c, "invalid groups");
    cr_expect_eq(conv_nd(&c.p, NULL, c.dw, c.db, NULL, c.dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_NULL_POINTER);
    expect_y_untouched(&c, "NULL x");
    cr_expect_eq(conv_nd(&c.p, c.dx, c.dw, NULL, NULL, c.dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_NULL_POINTER, "NULL bias with has_bias");
    expect_y_untouched(&c, "NULL bias");
    cr_expect_eq(conv_nd(&c.p, c.dy, c.dw, c.db, NULL, c.dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_ALIASING, "x == y accepted");
    expect_y_untouched(&c, "x aliases y");
    cr_expect_eq(conv_nd(NULL, c.dx, c.dw, c.db, NULL, c.dy, NULL, 0, NULL, NULL),
                 CONVND_ERR_NULL_POINTER);
    expect_y_untouched(&c, "NULL problem");
    test_case_free(&c);
}

Test(dispatch, listing_api) {
    cr_assert_geq(convnd_schedule_count(), 1);
    int has_direct = 0;
    for (int32_t i = 0; i < convnd_schedule_count(); ++i) {
        cr_assert_not_null(convnd_schedule_name(i));
        has_direct |= !strcmp(convnd_schedule_name(i), "direct");
        cr_expect_geq(convnd_schedule_config_count(i), 1, "%s has no configs",
                      convnd_schedule_name(i));
        for (int32_t c = 0; c < convnd_schedule_config_count(i); ++c)
            cr_expect_not_null(convnd_schedule_config_name(i, c));
        cr_expect_null(convnd_schedule_config_name(i, convnd_schedule_config_count(i)));
    }
    cr_expect(has_direct, "the universal direct schedule is not registered");
    cr_expect_null(convnd_schedule_name(convnd_schedule_count()));
    cr_expect_null(convnd_schedule_name(-1));
    cr_expect_eq(convnd_schedule_config_count(-1), 0);

    const convnd_problem p = test_parse_valid(small);
    char reason[256];
    cr_expect(convnd_schedule_supports("direct", &p, reason, sizeof reason));
    cr_expect(convnd_schedule_supports("direct:t128", &p, reason, sizeof reason));
    cr_expect(!convnd_schedule_supports("nope", &p, reason, sizeof reason));
    cr_expect(strstr(reason, "nope"), "reason: %s", reason);
    cr_expect(!convnd_schedule_supports("direct:t7", &p, reason, sizeof reason));
    cr_expect(strstr(reason, "t7"), "reason: %s", reason);
    convnd_problem bad = p;
    bad.stride[0] = 0;
    cr_expect(!convnd_schedule_supports("direct", &bad, reason, sizeof reason));
    cr_expect(strstr(reason, "stride"), "reason: %s", reason);
    cr_expect(!convnd_schedule_supports("direct", &bad, NULL, 0), "NULL reason buffer");
}

Test(dispatch, autotune_on_emulated_device_uses_heuristic) {
    if (convnd_active_device() != CONVND_DEVICE_EMULATED) cr_skip_test("GPU present");
    test_conv_case c;
    setup(&c, small);
    char path[] = "/tmp/convnd_autotune_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    const convnd_options tuned = {.autotune = 1, .autotune_cache_file = path};
    char with[64], without[64];
    cr_assert_eq(convnd_plan_name(&c.p, &tuned, with, sizeof with), CONVND_OK);
    cr_assert_eq(convnd_plan_name(&c.p, NULL, without, sizeof without), CONVND_OK);
    cr_expect_str_eq(with, without);
    cr_expect_eq(call(&c, &tuned), CONVND_OK, "%s", convnd_last_error());
    FILE *f = fopen(path, "r");
    cr_assert(f);
    cr_expect_eq(fgetc(f), EOF, "the emulated device wrote an autotune cache");
    fclose(f);
    remove(path);
    test_case_free(&c);
}

Test(dispatch, problem_key_covers_every_field) {
    const convnd_problem p =
        test_parse_valid("fwd 2d N=2 Ci=4 Co=6 g=2 I=7,6 K=3,2 S=2,1 D=1,2 P0=1,0 "
                         "P1=0,-1 bias z beta=0.5 act=silu");
    const uint64_t key = convnd_problem_key(&p);
    convnd_problem q = p;
    q.input[2] = 99; /* past dims: not part of the problem */
    cr_expect_eq(convnd_problem_key(&q), key);
#define CHANGED(field, value)                                                                      \
    do {                                                                                           \
        convnd_problem v = p;                                                                      \
        v.field = value;                                                                           \
        cr_expect_neq(convnd_problem_key(&v), key, "key ignores " #field);                         \
    } while (0)
    CHANGED(mode, CONVND_TRANSPOSED);
    CHANGED(N, 3);
    CHANGED(C_in, 8);
    CHANGED(C_out, 8);
    CHANGED(groups, 1);
    CHANGED(input[1], 5);
    CHANGED(kernel[0], 1);
    CHANGED(stride[1], 2);
    CHANGED(dilation[0], 2);
    CHANGED(pad_before[1], 1);
    CHANGED(pad_after[0], 1);
    CHANGED(dtype, CONVND_F16);
    CHANGED(x_layout, CONVND_CHANNELS_LAST);
    CHANGED(w_layout, CONVND_CHANNELS_LAST);
    CHANGED(y_layout, CONVND_CHANNELS_LAST);
    CHANGED(has_bias, 0);
    CHANGED(has_z, 0);
    CHANGED(alpha, 2.0f);
    CHANGED(beta, 1.0f);
    CHANGED(activation, CONVND_ACT_GELU);
    CHANGED(math, CONVND_MATH_ALLOW_TF32);
#undef CHANGED
}

Test(dispatch, autotune_cache_file_lookup) {
    const convnd_problem p = test_parse_valid(small);
    char path[] = "/tmp/convnd_autotune_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    const unsigned long long key = (unsigned long long)convnd_problem_key(&p);
    fprintf(f, "garbage line\n%016llx no_such:t1\n%016llx direct:t128\n%016llx direct:t256\n", key,
            key, key);
    fprintf(f, "%016llx direct:t999\n", key); /* stale config: ignored */
    fclose(f);
    convnd_choice plan;
    const convnd_conv_params params = test_params_of(&p);
    cr_assert(convnd_autotune_lookup(&p, &params, path, &plan), "cached plan not found");
    cr_expect_eq(plan.config, 1, "the last valid line wins");
    cr_expect_str_eq(convnd_choice_schedule_name(plan), "direct");
    /* now in memory: found without the file */
    remove(path);
    cr_expect(convnd_autotune_lookup(&p, &params, NULL, &plan));
    convnd_problem other = p;
    other.N = 5;
    const convnd_conv_params other_params = test_params_of(&other);
    cr_expect(!convnd_autotune_lookup(&other, &other_params, NULL, &plan));
}
