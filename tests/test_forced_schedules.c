/* Forced-schedule tests: every registered schedule x configuration (new schedules join by
 * registering in schedules/registry.c) over
 *   - a feature table covering every SPEC feature,
 *   - seeded random problems,
 *   - the duality identity <F(x), y> = <x, T(y)> (SPEC §4) on kernel outputs,
 * against the CPU reference at dtype-derived tolerances (tests/support/test_tolerance.h), with y
 * poisoned before each run and checked fully written, each case in every thread order of the
 * active device (forward and reverse on the emulated device). Criterion reports all parameter
 * cases under one name, so every message names schedule, configuration, case and problem. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "convnd_ref.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_duality.h"
#include "test_feature_table.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_random_problem.h"
#include "test_schedule_runs.h"
#include "test_tolerance.h"

/* ---- the parameter list: every (schedule, config) of the registry ------------------------- */

#define MAX_SCHEDULE_CONFIGS 256
static test_schedule_config all_schedule_configs[MAX_SCHEDULE_CONFIGS];

/* The wgrad schedules run weight-gradient problems only: tests/test_wgrad.c is their suite. */
static size_t list_schedule_configs(void) {
    return test_list_conv_configs(all_schedule_configs, MAX_SCHEDULE_CONFIGS);
}

#define FEATURE_COUNT test_feature_table_count

/* ---- running one case on one schedule:config ---------------------------------------------- */

/* Runs the case in every thread order and checks each result. Returns 1 when the schedule
 * supports the problem (and so ran), 0 when skipped. Failures are reported with cr_expect. */
static int run_case(test_schedule_config sc, const char *case_id, const convnd_problem *p,
                    int z_in_place, uint64_t seed) {
    char spec[128];
    test_schedule_spec(sc, spec, sizeof spec);
    if (!convnd_schedule_supports(spec, p, NULL, 0)) return 0;
    test_run_supported_case(spec, p, case_id, z_in_place, seed);
    return 1;
}

/* ---- the tests ------------------------------------------------------------------------------ */

TestSuite(forced_schedules, .timeout = 600);

ParameterizedTestParameters(forced_schedules, feature_table) {
    return cr_make_param_array(test_schedule_config, all_schedule_configs, list_schedule_configs());
}

ParameterizedTest(test_schedule_config *sc, forced_schedules, feature_table) {
    int ran = 0;
    for (size_t i = 0; i < FEATURE_COUNT; ++i) {
        const test_case_text *f = &test_feature_table[i];
        const convnd_problem p = test_parse_valid(f->problem);
        ran += run_case(*sc, f->id, &p, f->z_in_place, test_seed_of(f->id, 0));
    }
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    cr_log_info("%s: %d of %zu feature-table cases ran, %d thread orders each", spec, ran,
                FEATURE_COUNT, test_order_count());
    cr_assert(ran > 0, "%s supports none of the %zu feature-table cases", spec, FEATURE_COUNT);
}

/* Random problems: one seeded sequence, of which each schedule:config runs the first
 * RANDOM_CASES it supports (so a specialised schedule gets as many as the universal one). */
#define RANDOM_CASES 24
#define RANDOM_DRAWS 4000
static const test_problem_limits random_limits = {.max_outputs = 2048, .max_macs = 100000};

ParameterizedTestParameters(forced_schedules, random_problems) {
    return cr_make_param_array(test_schedule_config, all_schedule_configs, list_schedule_configs());
}

ParameterizedTest(test_schedule_config *sc, forced_schedules, random_problems) {
    int ran = 0, drawn = 0;
    for (; drawn < RANDOM_DRAWS && ran < RANDOM_CASES; ++drawn) {
        test_rng r = test_rng_seed(0x5eed0000u + (uint64_t)drawn);
        convnd_problem p;
        test_random_problem(&r, &random_limits, &p);
        char id[32];
        snprintf(id, sizeof id, "random#%d", drawn);
        ran += run_case(*sc, id, &p, (int)(test_rng_next(&r) & 1), test_rng_next(&r));
    }
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    cr_log_info("%s: ran %d random problems (of %d drawn)", spec, ran, drawn);
    cr_assert(ran > 0, "%s supports none of %d random problems", spec, drawn);
}

/* ---- duality (SPEC §4) ---------------------------------------------------------------------- */

/* The spec that runs p: the schedule under test when it supports p, else the direct schedule
 * (so a forward-only schedule still has its forward checked against a transposed direct). */
static const char *runner_for(const char *spec, const convnd_problem *p) {
    char reason[256];
    return convnd_schedule_supports(spec, p, reason, sizeof reason) ? spec : "direct";
}

#define DUALITY_CASES 8
#define DUALITY_DRAWS 1000

/* Tried in order for each duality problem. */
static const test_numerics duality_numerics[] = {{CONVND_F32, CONVND_MATH_DEFAULT},
                                                 {CONVND_F32, CONVND_MATH_ALLOW_TF32},
                                                 {CONVND_BF16, CONVND_MATH_DEFAULT},
                                                 {CONVND_F16, CONVND_MATH_DEFAULT}};

ParameterizedTestParameters(forced_schedules, duality) {
    return cr_make_param_array(test_schedule_config, all_schedule_configs, list_schedule_configs());
}

ParameterizedTest(test_schedule_config *sc, forced_schedules, duality) {
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    int ran = 0, i = 0;
    for (; i < DUALITY_DRAWS && ran < DUALITY_CASES; ++i) {
        test_rng r = test_rng_seed(0xd0a1000u + (uint64_t)i);
        convnd_problem f;
        do { /* no epilogue: the identity is about the linear map */
            test_random_problem(&r, &random_limits, &f);
            f.mode = CONVND_FORWARD;
            f.has_bias = f.has_z = 0;
            f.alpha = 1.0f;
            f.beta = 0.0f;
            f.activation = CONVND_ACT_NONE;
        } while (convnd_validate(&f) != CONVND_OK || test_problem_outputs(&f) < 1);
        /* the most precise numerics the schedule runs, so the bound stays tight */
        convnd_problem t;
        const char *f_spec = NULL, *t_spec = NULL;
        for (size_t k = 0; k < sizeof duality_numerics / sizeof duality_numerics[0]; ++k) {
            f.dtype = duality_numerics[k].dtype;
            f.math = duality_numerics[k].math;
            t = test_dual_problem(&f);
            f_spec = runner_for(spec, &f);
            t_spec = runner_for(spec, &t);
            if (f_spec == spec || t_spec == spec) break;
        }
        char ttext[512], label[160];
        convnd_problem_format(ttext, sizeof ttext, &t);
        cr_assert(convnd_validate(&t) == CONVND_OK,
                  "duality #%d: dual problem invalid: %s\n  T: %s", i, convnd_last_error(), ttext);
        if (f_spec != spec && t_spec != spec) continue; /* neither side is this schedule's */
        ++ran;
        snprintf(label, sizeof label, "%s duality #%d", spec, i);
        test_check_duality(&f, f_spec, t_spec, test_rng_next(&r), label);
    }
    cr_log_info("%s: ran %d duality problems (of %d drawn)", spec, ran, i);
    cr_assert(ran > 0, "%s ran none of %d duality problems", spec, i);
}
