/* The duality identity of SPEC §4 between the phase-decomposed transposed schedule and the
 * forward implicit GEMM: for a random forward problem F, run by igemm_tc or igemm_simt, and its
 * dual T, run by each convT configuration, <F(x), y> = <x, T(y)> within the bound that the two
 * outputs' error bounds give. Neither side is checked against the reference here: two
 * independently written kernels (one per mode) agreeing on the adjoint identity is the check.
 * Problems reach across 1/2/3-D, strides 1-4, dilation 1-3, kernels 1-16 (1-D), negative and
 * asymmetric padding, groups, both layouts, each dtype the schedules run. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_duality.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_random_problem.h"
#include "test_schedule_runs.h"

#define MAX_DUALITY_CONFIGS 32
static test_schedule_config duality_configs[MAX_DUALITY_CONFIGS];

static size_t list_duality_configs(void) {
    return test_list_schedule_configs("convT_", duality_configs, MAX_DUALITY_CONFIGS);
}

/* A valid forward problem without epilogue (the identity is about the linear map): dims 1-3,
 * strides 1-4, dilation 1-3, kernels up to 16 (1-D), padding -2..E, channels per group 1-20
 * (often multiples of 8), groups 1-3, any layouts. */
static void random_forward(test_rng *r, const test_numerics *n, convnd_problem *f) {
    static const int64_t kmax[] = {16, 5, 3}, imax[] = {40, 12, 6};
    for (;;) {
        convnd_problem_init(f, (int32_t)test_rng_int(r, 1, 3));
        f->N = test_rng_int(r, 1, 2);
        f->groups = test_rng_int(r, 1, 3);
        const int vec = test_rng_int(r, 0, 1);
        f->C_in = f->groups * test_rng_int(r, 1, 20);
        f->C_out = f->groups * (vec ? 8 * test_rng_int(r, 1, 2) : test_rng_int(r, 1, 20));
        for (int32_t t = 0; t < f->dims; ++t) {
            f->kernel[t] = test_rng_int(r, 1, kmax[f->dims - 1]);
            f->stride[t] = test_rng_int(r, 1, 4);
            f->dilation[t] = test_rng_int(r, 1, 3);
            const int64_t e = f->dilation[t] * (f->kernel[t] - 1) + 1;
            f->pad_before[t] = test_rng_int(r, -2, e - 1);
            f->pad_after[t] = test_rng_int(r, -2, e - 1);
            f->input[t] = test_rng_int(r, 1, imax[f->dims - 1]);
        }
        f->dtype = n->dtype;
        f->math = n->math;
        f->x_layout = (convnd_layout)test_rng_int(r, 0, 1);
        f->w_layout = (convnd_layout)test_rng_int(r, 0, 1);
        f->y_layout = (convnd_layout)test_rng_int(r, 0, 2);
        if (convnd_validate(f) != CONVND_OK) continue;
        const int64_t outputs = test_problem_outputs(f);
        if (outputs < 1 || outputs > 6000 || test_problem_macs(f) > 300000) continue;
        const convnd_problem t = test_dual_problem(f);
        if (convnd_validate(&t) != CONVND_OK || test_problem_macs(&t) > 300000) continue;
        return;
    }
}

#define DUALITY_CASES 16

TestSuite(transposed_duality, .timeout = 900);

ParameterizedTestParameters(transposed_duality, against_forward_igemm) {
    return cr_make_param_array(test_schedule_config, duality_configs, list_duality_configs());
}

ParameterizedTest(test_schedule_config *dc, transposed_duality, against_forward_igemm) {
    const convnd_schedule *s = convnd_schedule_table[dc->schedule];
    const int tc = strcmp(s->name, "convT_tc") == 0;
    size_t nnum;
    const test_numerics *num = test_numerics_of(*dc, &nnum);
    char t_spec[128], f_spec[128];
    snprintf(t_spec, sizeof t_spec, "%s:%s", s->name, s->config_names[dc->config]);
    /* the forward implicit GEMM's tile of the same name */
    snprintf(f_spec, sizeof f_spec, "%s:%s", tc ? "igemm_tc" : "igemm_simt",
             s->config_names[dc->config]);

    for (int i = 0; i < DUALITY_CASES; ++i) {
        test_rng r = test_rng_seed(0xd0a17000u + (uint64_t)i);
        convnd_problem f;
        random_forward(&r, &num[(size_t)i % nnum], &f);
        const convnd_problem t = test_dual_problem(&f);
        char ftext[512], ttext[512], reason[512], label[160];
        convnd_problem_format(ftext, sizeof ftext, &f);
        convnd_problem_format(ttext, sizeof ttext, &t);
        cr_assert(convnd_schedule_supports(f_spec, &f, reason, sizeof reason),
                  "%s refuses F: %s\n  F: %s", f_spec, reason, ftext);
        cr_assert(convnd_schedule_supports(t_spec, &t, reason, sizeof reason),
                  "%s refuses T: %s\n  T: %s", t_spec, reason, ttext);
        snprintf(label, sizeof label, "%s duality #%d", t_spec, i);
        test_check_duality(&f, f_spec, t_spec, test_rng_next(&r), label);
    }
}
