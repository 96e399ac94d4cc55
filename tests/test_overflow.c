/* Size limits: every size, element and byte count is checked at its exact limit (one below fits,
 * one above is CONVND_ERR_OVERFLOW naming the tensor); the kernels' 64-bit index path is chosen
 * exactly from 2^31 elements on (checked in the params, nothing allocated) and gives the
 * reference result when forced on small problems (CONVND_FORCE_INDEX64=1); schedules that index
 * in 32 bits decline such problems with a reason and the planner falls back; huge but valid
 * problems get a plan and a workspace size without overflowing anything. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "problem_internal.h"
#include "registry.h"
#include "test_conv_case.h"
#include "test_contract_support.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"
#include "test_random.h"
#include "test_random_problem.h"

TestSuite(overflow, .timeout = 600);

static const int64_t two30 = (int64_t)1 << 30;

/* ---- exact limits of the counts ----------------------------------------------------------------
 */

typedef struct limit_case {
    const char *what;
    const char *text; /* the problem with the count at its largest valid value */
    const char *field;
    int64_t *(*at)(convnd_problem *p); /* the size to push one past the limit */
    const char *names;                 /* what the overflow message must name */
} limit_case;

static int64_t *n_of(convnd_problem *p) {
    return &p->N;
}
static int64_t *cout_of(convnd_problem *p) {
    return &p->C_out;
}
static int64_t *input0_of(convnd_problem *p) {
    return &p->input[0];
}

/* x of 2^61 - 1 f32 elements is 2^63 - 4 bytes: fits; 2^61 elements is 2^63 bytes: does not. */
static const limit_case limits[] = {
    {"x bytes, f32", "fwd 1d N=2305843009213693951 Ci=1 Co=1 I=1 K=1 S=1", "N", n_of, "x of shape"},
    {"x bytes, f16", "fwd 1d N=1 Ci=1 Co=1 I=4611686018427387903 K=1 S=4611686018427387903 f16",
     "input[0]", input0_of, "x of shape"},
    {"w bytes, bf16", "fwd 3d N=1 Ci=1 Co=4611686018427387903 I=1 K=1 bf16", "C_out", cout_of,
     "w of shape"},
};

Test(overflow, byte_counts_switch_exactly_at_int64) {
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; ++k) {
        const limit_case *l = &limits[k];
        convnd_problem p = test_parse(l->text);
        cr_expect_eq(convnd_validate(&p), CONVND_OK, "%s at the limit: %s", l->what,
                     convnd_last_error());
        ++*l->at(&p);
        cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW, "%s one past the limit", l->what);
        cr_expect(strstr(convnd_last_error(), l->names), "%s: message '%s'", l->what,
                  convnd_last_error());
    }
}

Test(overflow, y_and_bias_byte_counts) {
    /* y: 2^62 f16 outputs from a strided 1-D input is 2^63 bytes */
    convnd_problem p = test_parse("tr 1d N=1 Ci=1 Co=1 I=2 K=1 S=1 f16");
    p.stride[0] = ((int64_t)1 << 62) - 2; /* O = (I-1)*S + 1 = 2^62 - 1 */
    cr_expect_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    ++p.stride[0];
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "y of shape"), "%s", convnd_last_error());
    /* bias: [C_out] is the only tensor with C_out alone; w = C_out * C_in/g... with C_in = 0
     * still counts C_in/g as 1 (strides), so w overflows together with bias: either is named */
    p = test_parse("fwd 1d N=0 Ci=0 Co=2305843009213693951 I=1 K=1");
    cr_expect_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    ++p.C_out;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), " of shape"), "%s", convnd_last_error());
}

/* Strides must fit even where a size-0 dim leaves no element (as PyTorch counts them), so an
 * empty tensor with an absurd extent is refused rather than accepted with wrapped strides. */
Test(overflow, empty_tensors_with_absurd_extents) {
    convnd_problem p = test_parse("fwd 2d N=0 Ci=1099511627776 Co=1 I=2097152,1 K=1");
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW, "extent 2^61 * 4 bytes accepted");
    cr_expect(strstr(convnd_last_error(), "x of shape [0, 1099511627776"), "%s",
              convnd_last_error());
    p.input[0] = 2097151;
    cr_expect_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_X, &d), CONVND_OK);
    cr_expect_eq(d.numel, 0);
    cr_expect_eq(d.strides[0], (int64_t)1099511627776 * 2097151);
}

/* Partial sums of the output-size formulas past int64: OVERFLOW, never a wrapped size. */
Test(overflow, output_size_intermediates) {
    convnd_problem p = test_parse("fwd 1d Ci=1 Co=1 I=10 K=3");
    p.pad_before[0] = INT64_MAX;
    p.pad_after[0] = 1;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "9223372036854775807"), "%s", convnd_last_error());
    /* I + P0 + P1 - E = 6 would give O = 7, but the partial sum I + P0 already leaves int64:
     * OVERFLOW, the documented answer (the kernels' index arithmetic needs those sums too) */
    p.pad_after[0] = INT64_MIN;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW, "%s", convnd_last_error());
    p = test_parse("tr 1d Ci=1 Co=1 I=3 K=1");
    p.stride[0] = INT64_MAX / 2 + 1; /* (I - 1) * S = 2^63 */
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    p.stride[0] = INT64_MAX / 2; /* (I - 1) * S + 1 = INT64_MAX: fits, then y's bytes don't */
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "y of shape"), "%s", convnd_last_error());
    p = test_parse("fwd 1d Ci=1 Co=1 I=10 K=2");
    p.dilation[0] = INT64_MAX; /* E = D * (K - 1) + 1 = 2^63 */
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "dilation"), "%s", convnd_last_error());
}

/* ---- geometry near the int64 limits, with tensors small enough to run ---------------------- */

/* Paddings, strides and dilations of 2^61..2^62 with a few elements per tensor: valid, so every
 * schedule that supports them must run them (64-bit indices: conv_needs_index64) and match the
 * reference; most taps fall into the padding, some (stride, dilation) read real elements. Under
 * the sanitized build this also proves that no index arithmetic overflows. */
static const char *const extreme_geometry[] = {
    "fwd 1d N=2 Ci=3 Co=4 I=10 K=3 P0=-4611686018427387904 P1=4611686018427387904 bias",
    "fwd 1d N=1 Ci=2 Co=2 I=10 K=3 P0=4611686018427387904 P1=-4611686018427387904 bias",
    "fwd 1d N=1 Ci=2 Co=3 I=10 K=3 S=4611686018427387904 P1=4611686018427387904",
    "fwd 2d N=1 Ci=4 Co=4 g=2 I=10,3 K=2,1 D=2305843009213693952,1 P1=2305843009213693952,0 f16",
    "tr 1d N=1 Ci=2 Co=3 I=4 K=2 S=2 P0=4611686018427387904 P1=-4611686018427387904 bias",
    "tr 2d N=1 Ci=2 Co=2 I=2 K=2 S=4611686018427387904,1 P1=4611686018427387904,0",
};

Test(overflow, extreme_geometry_runs_on_every_schedule) {
    int runs = 0;
    for (size_t k = 0; k < sizeof extreme_geometry / sizeof extreme_geometry[0]; ++k) {
        const convnd_problem p = test_parse(extreme_geometry[k]);
        cr_assert_eq(convnd_validate(&p), CONVND_OK, "'%s': %s", extreme_geometry[k],
                     convnd_last_error());
        test_conv_case c;
        char err[256], specs[64][TEST_SPEC_LEN];
        cr_assert(test_case_init(&c, &p, 0, 7 + k, err, sizeof err), "%s", err);
        const int n = test_supporting_specs(&c.p, specs, 64);
        cr_expect_geq(n, 1, "no schedule supports '%s'", extreme_geometry[k]);
        for (int i = 0; i < n; ++i) {
            cr_expect_eq(test_case_run(&c, specs[i]), CONVND_OK, "%s on '%s': %s", specs[i],
                         extreme_geometry[k], convnd_last_error());
            char msg[512];
            cr_expect(test_case_check(&c, msg, sizeof msg), "%s on '%s': %s", specs[i],
                      extreme_geometry[k], msg);
            ++runs;
        }
        test_case_free(&c);
    }
    cr_expect_geq(runs, 6);
}

/* Where the kernels' tap positions themselves would leave int64 (o*S - P0 with P0 = INT64_MIN,
 * o + P0 past INT64_MAX), the problem is refused even though its output size fits. */
Test(overflow, tap_positions_past_int64_are_refused) {
    convnd_problem p = test_parse("fwd 1d Ci=1 Co=1 I=10 K=3");
    p.pad_before[0] = INT64_MIN; /* O = 10 + P0 + P1 - 3 + 1 = 7 */
    p.pad_after[0] = INT64_MAX;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "input positions"), "%s", convnd_last_error());
    p.pad_before[0] = INT64_MIN + 1; /* -P0 = INT64_MAX fits, (O-1)*S - P0 = 7 + INT64_MAX not */
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    p = test_parse("fwd 1d Ci=1 Co=1 I=10 K=3");
    p.pad_before[0] = -(INT64_MAX - 20); /* (O-1)*S - P0 + E - 1 = 7 + INT64_MAX - 20 + 2 */
    p.pad_after[0] = INT64_MAX - 20;
    cr_expect_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    p = test_parse("tr 1d Ci=1 Co=1 I=3 K=1");
    p.pad_before[0] = INT64_MAX; /* O = 2 + 1 - P0 - P1 = 3, but o + P0 passes INT64_MAX */
    p.pad_after[0] = -INT64_MAX;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_OVERFLOW);
    cr_expect(strstr(convnd_last_error(), "input positions"), "%s", convnd_last_error());
}

/* ---- where the 64-bit index path starts --------------------------------------------------- */

static int index64_of(const char *text, int64_t *numel_out) {
    const convnd_problem p = test_parse(text);
    convnd_conv_params q;
    cr_assert_eq(convnd_params_from_problem(&p, &q), CONVND_OK, "%s: %s", text,
                 convnd_last_error());
    if (numel_out) *numel_out = q.x_numel > q.w_numel ? q.x_numel : q.w_numel;
    if (numel_out && q.y_numel > *numel_out) *numel_out = q.y_numel;
    return q.index64;
}

Test(overflow, index64_starts_at_2_30_elements) {
    cr_assert_null(getenv("CONVND_FORCE_INDEX64"), "run without CONVND_FORCE_INDEX64");
    /* each tensor alone crosses the limit (2^30: the rule's headroom for a sum of two bounded
     * terms, core/conv_params.c); the others and every spatial extent stay small (nothing is
     * allocated) */
    const struct {
        const char *below, *at;
    } pairs[] = {
        /* x: N * C_in * I, y tiny thanks to the stride */
        {"fwd 1d N=1024 Ci=1024 Co=1 I=1023 K=1 S=1024",
         "fwd 1d N=1024 Ci=1024 Co=1 I=1024 K=1 S=1024"},
        /* w: C_out * C_in/g * prod(K) */
        {"fwd 2d Ci=32767 Co=32769 I=1 K=1 f16", "fwd 2d Ci=32768 Co=32768 I=1 K=1 f16"},
        /* y: batch times channels times positions */
        {"fwd 2d N=1024 Ci=1 Co=1024 I=1023,1 K=1", "fwd 2d N=1024 Ci=1 Co=1024 I=1024,1 K=1"},
        /* x and y in 3-D */
        {"fwd 3d N=7 Ci=1 Co=1 I=1024,1024,128 K=1 bf16 x=cl",
         "fwd 3d N=8 Ci=1 Co=1 I=1024,1024,128 K=1 bf16 x=cl"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; ++k) {
        int64_t most;
        cr_expect_eq(index64_of(pairs[k].below, &most), 0, "'%s' (largest tensor %lld)",
                     pairs[k].below, (long long)most);
        cr_expect_lt(most, two30, "'%s' should stay below 2^30", pairs[k].below);
        cr_expect_eq(index64_of(pairs[k].at, &most), 1, "'%s' (largest tensor %lld)", pairs[k].at,
                     (long long)most);
        cr_expect_geq(most, two30);
    }
    /* a spatial coordinate's intermediates: small tensors, a padding near 2^30 */
    cr_expect_eq(index64_of("fwd 1d Ci=1 Co=1 I=8 K=1 P0=-1073741800 P1=1073741800", NULL), 1);
    cr_expect_eq(index64_of("fwd 1d Ci=1 Co=1 I=8 K=1 P0=-1000 P1=1000", NULL), 0);
}

/* Problems past 2^31 elements are planned (nothing runs): schedules that index in 32 bits
 * decline with a reason that says so, and the plan is one that supports the problem. */
Test(overflow, planner_falls_back_for_64_bit_problems) {
    const char *big[] = {
        "fwd 2d N=64 Ci=64 Co=64 I=512,1024 K=3 P0=1 P1=1 bf16 x=cl w=cl", /* x, y: 2^31 */
        "fwd 2d N=1 Ci=65536 Co=65536 I=4 K=1 f16",                        /* w: 2^32 */
        "tr 2d N=64 Ci=64 Co=64 I=256,512 K=2 S=2 f16 x=cl w=cl",          /* y: 2^31 */
    };
    for (size_t k = 0; k < sizeof big / sizeof big[0]; ++k) {
        const convnd_problem p = test_parse(big[k]);
        int64_t most;
        cr_assert_eq(index64_of(big[k], &most), 1, "'%s'", big[k]);
        char name[128], reason[512];
        cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK, "%s: %s", big[k],
                     convnd_last_error());
        cr_expect(convnd_schedule_supports(name, &p, reason, sizeof reason),
                  "'%s' planned to %s, which refuses it: %s", big[k], name, reason);
        for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
            const char *s = convnd_schedule_table[i]->name;
            if (convnd_schedule_supports(s, &p, reason, sizeof reason)) continue;
            cr_expect(reason[0] != '\0', "%s refuses '%s' without a reason", s, big[k]);
        }
        size_t ws;
        cr_expect_eq(convnd_workspace_size(&p, NULL, &ws), CONVND_OK, "%s", convnd_last_error());
    }
}

/* Valid problems whose implicit GEMM is astronomically large (2^30 groups of 2^30 taps) while
 * every tensor fits: every schedule answers supports() and workspace sizes without overflow
 * (a regression test: cublas_im2col once converted a 5e27-byte double to size_t). */
Test(overflow, huge_gemms_are_sized_without_overflow) {
    convnd_problem p = test_parse("fwd 2d N=1 Ci=1073741824 Co=1073741824 g=1073741824 I=1 "
                                  "K=32768 P0=32767 P1=32767");
    cr_assert_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    double flops;
    cr_assert_eq(convnd_flops(&p, &flops), CONVND_OK);
    cr_expect(isfinite(flops) && flops > 1e27, "flops %g", flops);
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            char spec[160], reason[512];
            snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[c]);
            const convnd_options opts = {.schedule = spec};
            size_t ws = 0;
            if (convnd_schedule_supports(spec, &p, reason, sizeof reason))
                cr_expect_eq(convnd_workspace_size(&p, &opts, &ws), CONVND_OK, "%s: %s", spec,
                             convnd_last_error());
            else
                cr_expect_eq(convnd_workspace_size(&p, &opts, &ws), CONVND_ERR_UNSUPPORTED, "%s",
                             spec);
        }
    }
    char name[128];
    cr_expect_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK, "%s",
                 convnd_last_error());
}

/* ---- the 64-bit path gives the same results ---------------------------------------------- */

/* With CONVND_FORCE_INDEX64=1 every kernel that supports a problem runs its 64-bit index
 * variant; random small problems (both modes, 1-3 D, groups, layouts, dtypes, epilogues) must
 * still match the reference on every such schedule. */
Test(overflow, forced_index64_matches_reference) {
    cr_assert_eq(setenv("CONVND_FORCE_INDEX64", "1", 1), 0);
    test_rng r = test_rng_seed(0x64);
    const test_problem_limits lim = {.max_outputs = 600, .max_macs = 40000};
    int runs = 0, declined = 0;
    for (int k = 0; k < 12; ++k) {
        convnd_problem p;
        test_random_problem(&r, &lim, &p);
        char text[512];
        convnd_problem_format(text, sizeof text, &p);
        convnd_conv_params q;
        cr_assert_eq(convnd_params_from_problem(&p, &q), CONVND_OK);
        cr_assert_eq(q.index64, 1, "CONVND_FORCE_INDEX64=1 ignored for %s", text);
        test_conv_case c;
        char err[256];
        cr_assert(test_case_init(&c, &p, k % 3 == 0, 100 + (uint64_t)k, err, sizeof err), "%s",
                  err);
        for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
            const convnd_schedule *s = convnd_schedule_table[i];
            for (int32_t cfg = 0; cfg < s->num_configs; ++cfg) {
                char spec[160], reason[512];
                snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[cfg]);
                if (!convnd_schedule_supports(spec, &c.p, reason, sizeof reason)) {
                    declined += strstr(reason, "64-bit") != NULL;
                    continue;
                }
                cr_expect_eq(test_case_run(&c, spec), CONVND_OK, "%s on %s: %s", spec, text,
                             convnd_last_error());
                char msg[512];
                cr_expect(test_case_check(&c, msg, sizeof msg), "%s (64-bit indices) on %s: %s",
                          spec, text, msg);
                ++runs;
            }
        }
        /* and the planner's choice */
        cr_expect_eq(test_case_run(&c, NULL), CONVND_OK, "planner on %s: %s", text,
                     convnd_last_error());
        char msg[512];
        cr_expect(test_case_check(&c, msg, sizeof msg), "planner (64-bit) on %s: %s", text, msg);
        test_case_free(&c);
    }
    cr_expect_geq(runs, 12);
    cr_log_info("forced 64-bit indices: %d schedule runs, %d declines for 64-bit", runs, declined);
}
