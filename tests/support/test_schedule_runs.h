/* What the per-schedule test files share: the (schedule, configuration) parameter lists of
 * Criterion's parameterized tests, "name:config" specs, reproducible seeds from case ids,
 * misaligned device copies (for the vector paths' alignment fallback), and running one case on
 * a forced spec in every thread order with each result checked against the CPU reference. */
#ifndef CONVND_TEST_SCHEDULE_RUNS_H
#define CONVND_TEST_SCHEDULE_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "conv_params.h"
#include "convnd.h"
#include "test_conv_case.h"
#include "test_feature_table.h"

typedef struct test_schedule_config {
    int32_t schedule, config; /* indices into convnd_schedule_table and its config names */
} test_schedule_config;

/* A dtype and math setting a schedule runs. */
typedef struct test_numerics {
    convnd_dtype dtype;
    convnd_math math;
} test_numerics;

/* The numerics a GEMM-family schedule runs: a "*_tc" or "hopper_*" schedule f16, bf16 and f32 with
 * TF32 allowed; a "*_simt" one f32, with math default and with TF32 allowed (which it may ignore:
 * still exact FMA). Sets *count. */
const test_numerics *test_numerics_of(test_schedule_config sc, size_t *count);

/* problem text (tests/support/test_problem_text.h syntax) parsed, or the test fails; the _valid
 * form also asserts that convnd_validate accepts it. */
convnd_problem test_parse(const char *text);
convnd_problem test_parse_valid(const char *text);

/* The launch parameters of a valid p (what a plan hands every schedule question), or the test
 * fails. */
convnd_conv_params test_params_of(const convnd_problem *p);

/* 1 when "schedule:config" names a tensor-core configuration this build left out (CMake
 * CONVND_SKIP_TC_CONFIGS: tests/run_sanitized.sh's build has no 256-thread 64-deep tiles, too
 * slow under ASan; the plain suite runs every configuration), or contains one of the
 * comma-separated texts of the environment's CONVND_TEST_SKIP_CONFIGS. */
int test_config_skipped(const char *spec);

/* Fills out[] with every (schedule, config) whose schedule name starts with prefix (NULL: all),
 * in registry order, except those test_config_skipped names; returns how many (at most max). */
size_t test_list_schedule_configs(const char *prefix, test_schedule_config *out, size_t max);

/* Every (schedule, config) but the wgrad schedules' (tests/test_wgrad.c is their suite). */
size_t test_list_conv_configs(test_schedule_config *out, size_t max);

/* "name:config" of sc. */
void test_schedule_spec(test_schedule_config sc, char *buf, size_t len);

/* A seed from a case id (FNV-1a), so cases stay reproducible when tables change. */
uint64_t test_seed_of(const char *id, uint64_t salt);

/* A device buffer of n elements starting one element past a 16-byte boundary, holding host's
 * data (when host is non-NULL). *base receives the allocation to convnd_free. NULL on failure. */
void *test_upload_misaligned(const void *host, int64_t n, size_t esize, void **base);

/* Runs c with spec forced in every thread order of the active device and checks each result
 * (cr_expect: a failure names spec, what, the order and the problem). */
void test_run_all_orders(test_conv_case *c, const char *spec, const char *what);

/* Asserts that spec supports p, sets up a case (fresh random inputs from seed; z == y when
 * z_in_place) and runs it with test_run_all_orders; id names the case in messages. */
void test_run_supported_case(const char *spec, const convnd_problem *p, const char *id,
                             int z_in_place, uint64_t seed);

/* Every case of the table in every numerics of sc (the text's dtype replaced by each; see
 * test_numerics_of), each by test_run_supported_case: sc must support them all. */
void test_run_case_table(test_schedule_config sc, const test_case_text *cases, size_t count);

/* ---- supports() and the planner ---------------------------------------------------------- */

/* problem (tests/support/test_problem_text.h syntax) with dtype and math set: spec must refuse
 * it with a reason containing needle. */
void test_expect_refusal(const char *spec, const char *problem, convnd_dtype dtype,
                         convnd_math math, const char *needle);

/* conv_nd with spec forced on a problem it refuses: CONVND_ERR_UNSUPPORTED, a message containing
 * needle, and y's poison untouched (no silent fallback, nothing written). */
void test_expect_forced_error(const char *spec, const char *problem, const char *needle);

/* The planner's "schedule:config" for problem. */
void test_plan_of(const char *problem, char *plan, size_t len);

/* The planner picks expected for problem; an expected ending in ':' matches any config of that
 * schedule. */
void test_expect_plan(const char *problem, const char *expected);

#endif
