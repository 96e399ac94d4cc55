/* Errata (docs/errata.md): a malformed file is refused with its line number; an excluded
 * configuration is never routed to, a forced one fails at plan creation with the errata's words,
 * explain says so; lines for another device, dtype or layout do not apply; CONVND_ERRATA=off turns
 * it off. And the whole loop on the emulated device: convnd-selftest's engine finds a planted
 * bug (tests/planted/: the implicit GEMM's prefetch above its barrier) in one configuration,
 * writes it to the errata, and the planner then routes around it with correct results. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convnd.h"
#include "problem_internal.h"
#include "schedule.h"
#include "selftest.h"
#include "test_conv_case.h"
#include "test_schedule_runs.h"

TestSuite(errata, .timeout = 300);

/* A fresh file holding text; CONVND_ERRATA names it. The path is static: one per test process. */
static const char *errata_file(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/convnd_errata_XXXXXX");
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(setenv("CONVND_ERRATA", path, 1), 0);
    return path;
}

static void device_key(char *buf, size_t len) {
    cr_assert_eq(convnd_errata_device_key(buf, len), CONVND_OK, "%s", convnd_last_error());
}

static void plan_name(const convnd_problem *p, const char *forced, char *buf, size_t len) {
    const convnd_options opts = {.schedule = forced};
    cr_assert_eq(convnd_plan_name(p, &opts, buf, len), CONVND_OK, "%s", convnd_last_error());
    buf[strcspn(buf, " ")] = '\0'; /* "schedule:config" */
}

static const char *const gemm_problem = "fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 bf16 x=cl w=cl";

/* A bad line makes errata_check and plan creation fail, naming the file, the line and the fault;
 * the lines before it (a comment, a good line) are fine. */
static void expect_malformed(const char *bad_line, const char *expected) {
    char text[512];
    snprintf(text, sizeof text, "# a comment\nexclude direct:t128 dtype=f16\n\n%s\n", bad_line);
    const char *path = errata_file(text);
    char where[96];
    snprintf(where, sizeof where, "%s:4:", path);
    cr_expect_eq(convnd_errata_check(), CONVND_ERR_INVALID_ARGUMENT, "%s", bad_line);
    cr_expect(strstr(convnd_last_error(), where) && strstr(convnd_last_error(), expected),
              "'%s': %s (expected '%s' and '%s')", bad_line, convnd_last_error(), where, expected);
    const convnd_problem p = test_parse_valid(gemm_problem);
    convnd_plan_t *plan = NULL;
    cr_expect_eq(convnd_plan_create(&plan, &p, NULL), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect_null(plan);
    cr_expect(strstr(convnd_last_error(), where), "%s", convnd_last_error());
    unlink(path);
}

Test(errata, a_malformed_line_is_refused_with_its_number) {
    expect_malformed("exclude igemm_tc:64x64x32_s3 colour=red", "unknown key 'colour'");
    expect_malformed("exclude no_such_schedule", "no_such_schedule");
    expect_malformed("exclude igemm_tc:9x9", "9x9");
    expect_malformed("exclude igemm_tc dtype=f64", "dtype=f64");
    expect_malformed("exclude igemm_tc layout=nhwc", "layout=nhwc");
    expect_malformed("exclude igemm_tc mode=backward", "mode=backward");
    expect_malformed("exclude igemm_tc cc=90", "cc=90");
    expect_malformed("exclude igemm_tc sms=-3", "sms=-3");
    expect_malformed("exclude igemm_tc device=\"NVIDIA H100", "quote");
    expect_malformed("exclude", "names no schedule");
    expect_malformed("include igemm_tc", "'include'");
    expect_malformed("exclude igemm_tc dtype", "expected key=value");
}

Test(errata, a_missing_file_or_off_excludes_nothing) {
    cr_assert_eq(setenv("CONVND_ERRATA", "/tmp/convnd_errata_that_does_not_exist", 1), 0);
    cr_expect_eq(convnd_errata_check(), CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(setenv("CONVND_ERRATA", "off", 1), 0);
    char path[64];
    cr_expect_eq(convnd_errata_path(path, sizeof path), CONVND_OK);
    cr_expect_str_eq(path, "");
    cr_assert_eq(unsetenv("CONVND_ERRATA"), 0);
    cr_assert_eq(setenv("HOME", "/home/someone", 1), 0);
    cr_assert_eq(unsetenv("XDG_CACHE_HOME"), 0);
    cr_expect_eq(convnd_errata_path(path, sizeof path), CONVND_OK);
    cr_expect_str_eq(path, "/home/someone/.cache/convnd/errata");
}

/* The planner's choice for a GEMM-shaped problem, excluded for this device and dtype: the
 * planner takes another, a forced spec fails with the errata's line, explain says why. */
Test(errata, an_excluded_configuration_is_never_routed_to) {
    cr_assert_eq(setenv("CONVND_ERRATA", "off", 1), 0);
    const convnd_problem p = test_parse_valid(gemm_problem);
    char chosen[128], key[512], text[1024];
    plan_name(&p, NULL, chosen, sizeof chosen);
    device_key(key, sizeof key);
    snprintf(text, sizeof text, "exclude %s dtype=bf16 layout=channels-last %s  # seen wrong\n",
             chosen, key);
    const char *path = errata_file(text);

    char now[128];
    plan_name(&p, NULL, now, sizeof now);
    cr_expect_str_neq(now, chosen, "the planner still routes to the excluded %s", chosen);
    /* and its result is right */
    test_conv_case c;
    char err[256];
    cr_assert(test_case_init(&c, &p, 0, 11, err, sizeof err), "%s", err);
    cr_expect_eq(test_case_run(&c, NULL), CONVND_OK, "%s", convnd_last_error());
    cr_expect(test_case_check(&c, err, sizeof err), "%s: %s", now, err);
    test_case_free(&c);

    /* forced: refused at plan creation, never rerouted */
    const convnd_options forced = {.schedule = chosen};
    convnd_plan_t *plan = NULL;
    cr_expect_eq(convnd_plan_create(&plan, &p, &forced), CONVND_ERR_UNSUPPORTED);
    cr_expect_null(plan);
    char want[160];
    snprintf(want, sizeof want, "excluded by errata (%s:1): seen wrong", path);
    cr_expect(strstr(convnd_last_error(), want), "%s", convnd_last_error());

    size_t needed = 0;
    cr_assert_eq(convnd_plan_explain(&p, NULL, NULL, 0, &needed), CONVND_OK);
    char *why = malloc(needed);
    cr_assert_eq(convnd_plan_explain(&p, NULL, why, needed, NULL), CONVND_OK);
    char line[256];
    snprintf(line, sizeof line, "refuses: %s", want);
    const char *at = strstr(why, chosen);
    cr_expect(at && strstr(at, line) && strchr(at, '\n') > strstr(at, line), "%s", why);
    free(why);

    /* off: routed there again */
    cr_assert_eq(setenv("CONVND_ERRATA", "off", 1), 0);
    plan_name(&p, NULL, now, sizeof now);
    cr_expect_str_eq(now, chosen);
    unlink(path);
}

/* Lines for another device, dtype, layout, mode or version leave the choice alone; a device
 * prefix, a config-less schedule and a matching cc apply. */
Test(errata, only_matching_lines_apply) {
    cr_assert_eq(setenv("CONVND_ERRATA", "off", 1), 0);
    const convnd_problem p = test_parse_valid(gemm_problem);
    char chosen[128];
    plan_name(&p, NULL, chosen, sizeof chosen);
    char schedule[64];
    snprintf(schedule, sizeof schedule, "%.*s", (int)strcspn(chosen, ":"), chosen);
    const char *device = convnd_device_name();
    (void)device;
    char key[512];
    device_key(key, sizeof key);
    char name[300];
    const char *q = strstr(key, "device=\"") + 8;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(q, "\""), q);
    const char *miss[] = {"dtype=f16",
                          "layout=channels-first",
                          "mode=transposed,wgrad",
                          "device=\"Some Other GPU\"",
                          "cc=8.0",
                          "sms=7",
                          "driver=1",
                          "convnd=99.0.0"};
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; ++i) {
        char text[512], now[128];
        snprintf(text, sizeof text, "exclude %s %s\n", chosen, miss[i]);
        const char *path = errata_file(text);
        plan_name(&p, NULL, now, sizeof now);
        cr_expect_str_eq(now, chosen, "%s", text);
        unlink(path);
    }
    char prefix[320];
    snprintf(prefix, sizeof prefix, "device=\"%.*s*\"", (int)(strlen(name) > 3 ? 3 : strlen(name)),
             name);
    const char *hit[] = {prefix, "mode=forward dtype=bf16,f16", "cc=9.0"};
    for (size_t i = 0; i < sizeof hit / sizeof hit[0]; ++i) {
        char text[512], now[128];
        snprintf(text, sizeof text, "exclude %s %s\n", schedule, hit[i]);
        const char *path = errata_file(text);
        plan_name(&p, NULL, now, sizeof now);
        cr_expect(strncmp(now, schedule, strlen(schedule)), "%s: still %s", text, now);
        unlink(path);
    }
}

/* ---- the self-test's loop, with a planted bug ------------------------------------------- */

convnd_status convnd_planted_prefetch_igemm_simt(const convnd_launch_args *a);
convnd_status convnd_planted_none_igemm_simt(const convnd_launch_args *a);

/* The planted build is igemm_simt:64x64x8_s3's tile (families/igemm/planted/planted_igemm.inc). */
static const char *const planted_spec = "igemm_simt:64x64x8_s3";

typedef struct planted_ctx {
    convnd_status (*launcher)(const convnd_launch_args *a);
    int launches;
} planted_ctx;

/* The self-test's runner: planted_spec runs the planted launcher on the case (y poisoned first,
 * as test_case_run does), every other spec conv_nd. */
static convnd_status run_planted(void *ctx, test_conv_case *c, const char *spec) {
    planted_ctx *pc = ctx;
    if (strcmp(spec, planted_spec)) return test_case_run(c, spec);
    ++pc->launches;
    const size_t ybytes = (size_t)c->yd.numel * c->esize;
    test_poison_fill(c->p.dtype, c->hy, c->yd.numel);
    if (convnd_memcpy_h2d(c->dy, c->hy, ybytes) != CONVND_OK) return CONVND_ERR_DEVICE;
    convnd_launch_args a;
    memset(&a, 0, sizeof a);
    convnd_status st = convnd_params_from_problem(&c->p, &a.params);
    if (st != CONVND_OK) return st;
    a.x = c->dx;
    a.w = c->dw;
    a.y = c->dy;
    a.device = CONVND_DEVICE_EMULATED;
    st = pc->launcher(&a);
    if (convnd_memcpy_d2h(c->hy, c->dy, ybytes) != CONVND_OK) return CONVND_ERR_DEVICE;
    return st;
}

static selftest_summary run_selftest(planted_ctx *ctx, const char *errata, FILE *out) {
    selftest_options o;
    memset(&o, 0, sizeof o);
    o.level = SELFTEST_QUICK;
    o.only = planted_spec;
    o.errata = errata;
    o.seed = 5;
    o.out = out;
    o.run = run_planted;
    o.run_ctx = ctx;
    selftest_summary s;
    cr_assert_eq(selftest_run(&o, &s), CONVND_OK, "%s", convnd_last_error());
    return s;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[8192];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(errata, the_selftest_finds_a_planted_bug_and_the_planner_then_avoids_it) {
    char errata[64];
    snprintf(errata, sizeof errata, "/tmp/convnd_selftest_errata_%d", (int)getpid());
    unlink(errata);
    FILE *sink = fopen("/dev/null", "w");

    /* the control: the same harness without a planted bug finds nothing and writes nothing */
    planted_ctx none = {convnd_planted_none_igemm_simt, 0};
    selftest_summary s = run_selftest(&none, errata, sink);
    cr_expect_eq(s.failed, 0);
    cr_expect_gt(s.passed, 0);
    cr_expect_gt(none.launches, 0, "the runner never ran the configuration");
    cr_expect_neq(access(errata, F_OK), 0, "a clean run wrote errata");

    /* planted: found, and written with this device's key */
    planted_ctx bug = {convnd_planted_prefetch_igemm_simt, 0};
    s = run_selftest(&bug, errata, sink);
    cr_expect_gt(s.failed, 0, "the planted prefetch race was not found");
    cr_expect_eq(s.errata_lines, s.failed);
    const char *text = read_all(errata);
    char key[512], line[700];
    device_key(key, sizeof key);
    snprintf(line, sizeof line, "exclude %s dtype=f32 layout=channels-last mode=forward %s",
             planted_spec, key);
    cr_expect(strstr(text, line), "errata:\n%s\nexpected a line starting '%s'", text, line);
    /* found again: not written twice */
    s = run_selftest(&bug, errata, sink);
    cr_expect_gt(s.failed, 0);
    cr_expect_eq(s.errata_lines, 0);
    fclose(sink);

    /* the planner reads it: the case the self-test failed on is routed elsewhere and is right */
    cr_assert_eq(setenv("CONVND_ERRATA", errata, 1), 0);
    cr_assert_eq(convnd_errata_check(), CONVND_OK, "%s", convnd_last_error());
    const convnd_problem p =
        test_parse_valid("fwd 2d N=1 Ci=32 Co=64 I=8,8 K=3 P0=1 P1=1 x=cl w=cl");
    const char *ask[] = {NULL, "igemm_simt"};
    for (int i = 0; i < 2; ++i) {
        char now[128];
        plan_name(&p, ask[i], now, sizeof now);
        cr_expect_str_neq(now, planted_spec, "%s routes to the excluded configuration",
                          ask[i] ? ask[i] : "the planner");
        test_conv_case c;
        char err[256];
        cr_assert(test_case_init(&c, &p, 0, 3, err, sizeof err), "%s", err);
        cr_expect_eq(test_case_run(&c, ask[i]), CONVND_OK, "%s", convnd_last_error());
        cr_expect(test_case_check(&c, err, sizeof err), "%s: %s", now, err);
        test_case_free(&c);
    }
    const convnd_options forced = {.schedule = planted_spec};
    convnd_plan_t *plan = NULL;
    cr_expect_eq(convnd_plan_create(&plan, &p, &forced), CONVND_ERR_UNSUPPORTED);
    cr_expect(strstr(convnd_last_error(), "excluded by errata ("), "%s", convnd_last_error());
    unlink(errata);
}
