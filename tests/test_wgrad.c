/* Weight-gradient mode through conv_nd (SPEC §10): every wgrad schedule forced on a table of
 * problems in f32/f16/bf16, both thread orders, against the CPU reference, with dw poisoned
 * first; accumulation into dw (z == dw, beta); bit-for-bit determinism of split-K across runs
 * and thread orders; validation and call errors with nothing written; the data gradient run
 * through conv_nd with accumulation into an existing dx. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "convnd_bind.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"
#include "test_wgrad_case.h"

#define MAX_WGRAD_CONFIGS 64
static test_schedule_config wgrad_configs[MAX_WGRAD_CONFIGS];

static size_t list_wgrad_configs(void) {
    const size_t n = test_list_schedule_configs("wgrad_", wgrad_configs, MAX_WGRAD_CONFIGS);
    if (n >= MAX_WGRAD_CONFIGS) { /* a full list may have dropped configurations */
        fprintf(stderr, "test_wgrad: more than %d wgrad configurations\n", MAX_WGRAD_CONFIGS - 1);
        abort();
    }
    return n;
}

/* Geometry of every family: dense 1/2/3-D, stride, dilation, asymmetric and negative padding,
 * groups, depthwise (incl. causal 1-D), channels-last, tiny and empty reductions. */
static const test_case_text dense_cases[] = {
    {"dense_1d", "wg 1d N=2 Ci=3 Co=4 I=11 K=3 P0=1 P1=1", 0},
    {"dense_2d_stride", "wg 2d N=2 Ci=4 Co=5 I=9,8 K=3,2 S=2,3 P0=1,0 P1=1,2", 0},
    {"dense_3d_dilated", "wg 3d N=1 Ci=2 Co=3 I=5,6,7 K=2,3,2 D=2,1,3 P0=1 P1=0", 0},
    {"negative_pad", "wg 2d N=1 Ci=3 Co=2 I=10,9 K=3 S=1,2 P0=-2,1 P1=2,-1", 0},
    {"grouped_cl", "wg 2d N=2 Ci=6 Co=9 g=3 I=7,6 K=3 P0=1 P1=1 x=cl w=cl y=cl", 0},
    {"mixed_layouts", "wg 2d N=2 Ci=4 Co=4 I=6,7 K=2,3 S=2 x=cl w=cf y=cf", 0},
    {"depthwise_2d", "wg 2d N=2 Ci=8 Co=8 g=8 I=9,9 K=5 P0=2 P1=2", 0},
    {"depthwise_causal_1d", "wg 1d N=1 Ci=6 Co=6 g=6 I=200 K=4 P0=3 P1=0 x=cl y=cl w=cl", 0},
    {"depthwise_multiplier", "wg 1d N=2 Ci=3 Co=6 g=3 I=30 K=3 D=2 P0=2 P1=2", 0},
    {"long_reduction", "wg 1d N=3 Ci=2 Co=2 I=700 K=2 S=1", 0},
    {"kernel_beyond_input", "wg 1d N=1 Ci=2 Co=3 I=3 K=5 P0=3 P1=3", 0},
    {"accumulate", "wg 2d N=2 Ci=3 Co=4 I=6,5 K=3 P0=1 P1=1 z alpha=0.5 beta=1", 1},
    {"accumulate_out_of_place", "wg 1d N=2 Ci=2 Co=2 I=9 K=3 z alpha=2 beta=-0.5", 0},
    {"empty_batch", "wg 1d N=0 Ci=2 Co=3 I=9 K=3 z beta=1", 1},
};
/* Depthwise (one input channel per group): what wgrad_depthwise runs. Channels-last with a
 * channel count off its 32-channel tile, multiplier, 3-D, stride, negative padding. */
static const test_case_text depthwise_cases[] = {
    {"depthwise_2d", "wg 2d N=2 Ci=8 Co=8 g=8 I=9,9 K=5 P0=2 P1=2", 0},
    {"depthwise_causal_1d", "wg 1d N=1 Ci=6 Co=6 g=6 I=200 K=4 P0=3 P1=0 x=cl y=cl w=cl", 0},
    {"depthwise_causal_1d_cl40", "wg 1d N=2 Ci=40 Co=40 g=40 I=300 K=4 P0=3 P1=0 x=cl y=cl w=cl",
     0},
    {"depthwise_multiplier", "wg 1d N=2 Ci=3 Co=6 g=3 I=30 K=3 D=2 P0=2 P1=2", 0},
    {"depthwise_multiplier_cl", "wg 2d N=2 Ci=4 Co=12 g=4 I=7,9 K=3 S=2 P0=1 P1=1 x=cl y=cl", 0},
    {"depthwise_3d", "wg 3d N=1 Ci=5 Co=5 g=5 I=4,6,7 K=3,3,3 D=1,2,1 P0=1 P1=1", 0},
    {"depthwise_negative_pad", "wg 2d N=1 Ci=4 Co=4 g=4 I=10,9 K=3 S=1,2 P0=-1,1 P1=2,-1", 0},
    {"depthwise_many_taps", "wg 2d N=1 Ci=3 Co=3 g=3 I=12,12 K=7 P0=3 P1=3 x=cl y=cl w=cl", 0},
    {"depthwise_accumulate", "wg 2d N=2 Ci=6 Co=6 g=6 I=6,5 K=3 P0=1 P1=1 z alpha=0.5 beta=1", 1},
    {"depthwise_empty_batch", "wg 1d N=0 Ci=4 Co=4 g=4 I=9 K=3 z beta=1", 1},
};

/* What wgrad_vec_tc runs (channels-last x and dy, channels per group multiples of 8): partial
 * M and N tiles, 1/2/3-D, stride, dilation, negative padding, groups, both dw layouts, more than
 * one M tile, a long reduction (split-K chunks of many k-tiles, a last partial k-tile),
 * accumulation, an empty batch. */
static const test_case_text vec_cases[] = {
    {"vec_2d", "wg 2d N=2 Ci=16 Co=24 I=9,8 K=3 P0=1 P1=1 x=cl y=cl w=cl", 0},
    {"vec_1d_strided_dilated", "wg 1d N=3 Ci=8 Co=16 I=40 K=5 S=2 D=2 P0=3 P1=1 x=cl y=cl w=cf", 0},
    {"vec_3d", "wg 3d N=1 Ci=8 Co=8 I=5,6,7 K=3,2,3 D=1,2,1 P0=1 P1=0 x=cl y=cl w=cl", 0},
    {"vec_grouped", "wg 2d N=2 Ci=32 Co=16 g=2 I=7,6 K=3 P0=1 P1=1 x=cl y=cl w=cl", 0},
    {"vec_negative_pad", "wg 2d N=1 Ci=8 Co=8 I=10,9 K=3 S=1,2 P0=-2,1 P1=2,-1 x=cl y=cl w=cf", 0},
    {"vec_wide", "wg 2d N=1 Ci=24 Co=136 I=5,6 K=3 P0=1 P1=1 x=cl y=cl w=cl", 0},
    {"vec_long_reduction", "wg 1d N=2 Ci=8 Co=8 I=701 K=2 x=cl y=cl w=cl", 0},
    {"vec_accumulate", "wg 2d N=2 Ci=8 Co=16 I=6,5 K=3 P0=1 P1=1 x=cl y=cl w=cl z alpha=0.5 beta=1",
     1},
    {"vec_empty_batch", "wg 1d N=0 Ci=8 Co=8 I=9 K=3 x=cl y=cl z beta=1", 1},
};
static const test_numerics vec_numerics[] = {{CONVND_F16, CONVND_MATH_DEFAULT},
                                             {CONVND_BF16, CONVND_MATH_DEFAULT}};

/* Every dtype in default math; a tensor-core schedule ("*_tc") f16, bf16 and f32 with TF32. */
static const test_numerics wgrad_numerics[] = {
    {CONVND_F32, CONVND_MATH_DEFAULT},
    {CONVND_F16, CONVND_MATH_DEFAULT},
    {CONVND_BF16, CONVND_MATH_DEFAULT},
};

static const test_numerics *wgrad_numerics_of(test_schedule_config sc, size_t *count) {
    const char *name = convnd_schedule_table[sc.schedule]->name;
    const size_t n = strlen(name);
    if (strcmp(name, "wgrad_vec_tc") == 0) {
        *count = sizeof vec_numerics / sizeof vec_numerics[0];
        return vec_numerics;
    }
    if (n >= 3 && strcmp(name + n - 3, "_tc") == 0) return test_numerics_of(sc, count);
    *count = sizeof wgrad_numerics / sizeof wgrad_numerics[0];
    return wgrad_numerics;
}

static void run_wgrad_case(const char *spec, const convnd_problem *p, const char *id,
                           int z_in_place) {
    char err[512], text[512];
    cr_assert(convnd_schedule_supports(spec, p, err, sizeof err), "%s refuses %s: %s", spec, id,
              err);
    test_wgrad_case c;
    cr_assert(
        test_wgrad_init(&c, p, z_in_place, test_seed_of(id, (uint64_t)p->dtype), err, sizeof err),
        "%s: %s", id, err);
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        const convnd_status st = test_wgrad_run(&c, spec);
        cr_expect_eq(st, CONVND_OK, "%s %s (order %s): %s", spec, id, test_order_name(o),
                     convnd_last_error());
        cr_expect(test_wgrad_check(&c, err, sizeof err), "%s %s (order %s): %s\n  %s", spec, id,
                  test_order_name(o), err, convnd_problem_format(text, sizeof text, &c.p));
    }
    test_order_apply(0);
    test_wgrad_free(&c);
}

ParameterizedTestParameters(wgrad, forced_schedule_table) {
    return cr_make_param_array(test_schedule_config, wgrad_configs, list_wgrad_configs());
}

ParameterizedTest(test_schedule_config *sc, wgrad, forced_schedule_table) {
    char spec[128];
    test_schedule_spec(*sc, spec, sizeof spec);
    cr_log_info("%s", spec);
    size_t nnum = 0;
    const test_numerics *num = wgrad_numerics_of(*sc, &nnum);
    /* wgrad_depthwise runs depthwise problems only, wgrad_vec_tc channels-last chunks (refusing
     * others is asserted below) */
    const char *name = convnd_schedule_table[sc->schedule]->name;
    const int depthwise = strcmp(name, "wgrad_depthwise") == 0;
    const int vec = strcmp(name, "wgrad_vec_tc") == 0;
    const test_case_text *cases = depthwise ? depthwise_cases : vec ? vec_cases : dense_cases;
    const size_t count = depthwise ? sizeof depthwise_cases / sizeof depthwise_cases[0]
                         : vec     ? sizeof vec_cases / sizeof vec_cases[0]
                                   : sizeof dense_cases / sizeof dense_cases[0];
    for (size_t i = 0; i < count; ++i)
        for (size_t d = 0; d < nnum; ++d) {
            convnd_problem p = test_parse_valid(cases[i].problem);
            p.dtype = num[d].dtype;
            p.math = num[d].math;
            run_wgrad_case(spec, &p, cases[i].id, cases[i].z_in_place);
        }
}

/* Split-K's partials are summed in a fixed order: the same bits every run and every order (the
 * check that catches families/wgrad/planted/planted_wgrad_arrival_order.cpp). */
Test(wgrad, splitk_bit_identical_across_runs_and_orders) {
    const char *specs[] = {"wgrad_splitk:k8",
                           "wgrad_splitk:k32",
                           "wgrad_splitk:k128",
                           "wgrad_direct",
                           "wgrad_igemm_simt:64x64x8_k1",
                           "wgrad_igemm_simt:32x32x8_k8",
                           "wgrad_igemm_simt:32x32x8_k32",
                           "wgrad_igemm_tc:64x64x32_k8"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; ++s)
        for (size_t q = 0; q < TEST_WGRAD_DETERMINISM_PROBLEMS; ++q) {
            convnd_problem p = test_parse_valid(test_wgrad_determinism_problems[q]);
            if (strstr(specs[s], "_tc:")) p.dtype = CONVND_F16;
            char err[512];
            test_wgrad_case c;
            cr_assert(test_wgrad_init(&c, &p, 0, 99 + q, err, sizeof err), "%s", err);
            cr_expect(test_wgrad_bit_identical(&c, specs[s], NULL, err, sizeof err), "%s on %s",
                      err, test_wgrad_determinism_problems[q]);
            test_wgrad_free(&c);
        }
    /* the vector path's split-K, on a problem it runs (channels-last chunks) */
    const char *vec_specs[] = {"wgrad_vec_tc:64x64x32_k8", "wgrad_vec_tc:128x128x32_k32",
                               "wgrad_vec_tc:128x64x32_k8"};
    for (size_t s = 0; s < sizeof vec_specs / sizeof vec_specs[0]; ++s) {
        convnd_problem p =
            test_parse_valid("wg 2d N=3 Ci=16 Co=24 I=15,13 K=3 S=2 P0=1 P1=1 bf16 x=cl y=cl");
        char err[512];
        test_wgrad_case c;
        cr_assert(test_wgrad_init(&c, &p, 0, 7 + s, err, sizeof err), "%s", err);
        cr_expect(test_wgrad_bit_identical(&c, vec_specs[s], NULL, err, sizeof err), "%s: %s",
                  vec_specs[s], err);
        test_wgrad_free(&c);
    }
}

Test(wgrad, planner_routes_wgrad_to_wgrad_schedules) {
    const char *cases[][2] = {
        {"wg 1d N=4 Ci=64 Co=64 g=64 I=4096 K=4 P0=3 P1=0 x=cl w=cl y=cl", "wgrad_depthwise:s64"},
        {"wg 2d N=8 Ci=512 Co=512 g=512 I=56,56 K=3 P0=1 P1=1", "wgrad_depthwise:s1"},
        {"wg 1d N=1 Ci=2 Co=3 I=40000 K=3 P0=1 P1=1", "wgrad_splitk"},
        {"wg 2d N=2 Ci=256 Co=256 I=14,14 K=3 P0=1 P1=1", "wgrad_igemm_simt:64x64x8_k8"},
        {"wg 2d N=2 Ci=256 Co=256 I=14,14 K=3 P0=1 P1=1 f16", "wgrad_igemm_tc:64x64x32_k1"},
        {"wg 3d N=1 Ci=32 Co=32 I=16,16,16 K=3 P0=1 P1=1 bf16", "wgrad_igemm_tc:32x32x32_k32"},
        /* channels-last in 16-byte chunks: the vector path, its tile by the GEMM's sides */
        {"wg 2d N=2 Ci=256 Co=256 I=14,14 K=3 P0=1 P1=1 f16 x=cl y=cl", "wgrad_vec_tc:128x128x32_"},
        {"wg 2d N=4 Ci=8 Co=128 I=32,32 K=3 P0=1 P1=1 bf16 x=cl y=cl w=cl",
         "wgrad_vec_tc:128x64x32_"},
        {"wg 2d N=8 Ci=64 Co=64 I=56,56 K=3 P0=1 P1=1 bf16 x=cl y=cl w=cl",
         "wgrad_vec_tc:64x64x32_"},
        /* the same off the chunks, or f32: the gather path */
        {"wg 2d N=2 Ci=252 Co=256 I=14,14 K=3 P0=1 P1=1 f16 x=cl y=cl", "wgrad_igemm_tc:64x64x32_"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        convnd_problem p = test_parse_valid(cases[i][0]);
        char name[128];
        cr_assert_eq(convnd_plan_name(&p, NULL, name, sizeof name), CONVND_OK, "%s",
                     convnd_last_error());
        cr_expect(strncmp(name, cases[i][1], strlen(cases[i][1])) == 0, "%s planned as %s",
                  cases[i][0], name);
    }
}

/* wgrad_vec_tc on x and dy one element off 16 bytes (valid in the API: element-aligned): the
 * gather path's configuration of the same split count runs it, correct in every order. */
Test(wgrad, vec_misaligned_pointers_take_the_gather_path) {
    const char *specs[] = {"wgrad_vec_tc:128x128x32_k1", "wgrad_vec_tc:64x64x32_k8"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; ++s) {
        convnd_problem p =
            test_parse_valid("wg 2d N=2 Ci=16 Co=16 I=8,8 K=3 P0=1 P1=1 f16 x=cl y=cl w=cl");
        char err[512];
        test_wgrad_case c;
        cr_assert(test_wgrad_init(&c, &p, 0, 21 + s, err, sizeof err), "%s", err);
        void *aligned[2] = {c.dx, c.ddy};
        const int64_t spans[2] = {c.xd.bytes / (int64_t)c.esize, c.dyd.bytes / (int64_t)c.esize};
        const void *host[2] = {c.hx, c.hdy};
        void *shifted[2];
        for (int t = 0; t < 2; ++t) {
            shifted[t] = test_device_upload(p.dtype, NULL, spans[t] + 1);
            cr_assert(shifted[t] != NULL);
            convnd_memcpy_h2d((char *)shifted[t] + c.esize, host[t], (size_t)spans[t] * c.esize);
        }
        c.dx = (char *)shifted[0] + c.esize;
        c.ddy = (char *)shifted[1] + c.esize;
        for (int o = 0; o < test_order_count(); ++o) {
            test_order_apply(o);
            cr_expect_eq(test_wgrad_run(&c, specs[s]), CONVND_OK, "%s: %s", specs[s],
                         convnd_last_error());
            cr_expect(test_wgrad_check(&c, err, sizeof err), "%s misaligned (order %s): %s",
                      specs[s], test_order_name(o), err);
        }
        test_order_apply(0);
        c.dx = aligned[0];
        c.ddy = aligned[1];
        convnd_free(shifted[0]);
        convnd_free(shifted[1]);
        test_wgrad_free(&c);
    }
}

/* The new schedules' refusals name the reason. */
Test(wgrad, schedules_refuse_with_reasons) {
    test_expect_refusal("wgrad_depthwise:s1", "wg 2d N=1 Ci=4 Co=4 I=5,5 K=3", CONVND_F32,
                        CONVND_MATH_DEFAULT, "depthwise only");
    test_expect_refusal("wgrad_depthwise:s16", "fwd 1d N=1 Ci=4 Co=4 g=4 I=9 K=3", CONVND_F32,
                        CONVND_MATH_DEFAULT, "wgrad only");
    test_expect_refusal("wgrad_igemm_tc:64x64x32_k1", "wg 2d N=1 Ci=16 Co=16 I=5,5 K=3", CONVND_F32,
                        CONVND_MATH_DEFAULT, "math=allow_tf32");
    test_expect_refusal("wgrad_vec_tc:64x64x32_k1", "wg 2d N=1 Ci=16 Co=16 I=5,5 K=3 x=cl y=cl",
                        CONVND_F32, CONVND_MATH_ALLOW_TF32, "f16/bf16 only");
    test_expect_refusal("wgrad_vec_tc:64x64x32_k1", "wg 2d N=1 Ci=16 Co=16 I=5,5 K=3 x=cf y=cl",
                        CONVND_F16, CONVND_MATH_DEFAULT, "must be channels-last");
    test_expect_refusal("wgrad_vec_tc:64x64x32_k1", "wg 2d N=1 Ci=12 Co=16 I=5,5 K=3 x=cl y=cl",
                        CONVND_BF16, CONVND_MATH_DEFAULT, "C_in/groups=12");
    test_expect_refusal("wgrad_vec_tc:128x64x32_k8", "fwd 2d N=1 Ci=16 Co=16 I=5,5 K=3 x=cl w=cl",
                        CONVND_F16, CONVND_MATH_DEFAULT, "wgrad only");
    test_expect_refusal("wgrad_igemm_simt:64x64x8_k8", "tr 2d N=1 Ci=16 Co=16 I=5,5 K=3",
                        CONVND_F32, CONVND_MATH_DEFAULT, "wgrad only");
    /* 4096 groups x 32 chunks along the grid's z */
    test_expect_refusal("wgrad_igemm_simt:32x32x8_k32",
                        "wg 1d N=1 Ci=4096 Co=4096 g=4096 I=4096 K=1", CONVND_F32,
                        CONVND_MATH_DEFAULT, "exceeds the launch limits");
    /* empty groups: groups x chunks would overflow int64 (a fuzz finding); the grid saturates */
    test_expect_refusal("wgrad_igemm_simt:32x32x8_k8",
                        "wg 1d N=2 Ci=0 Co=0 g=1230066612246872063 I=100 K=1", CONVND_F32,
                        CONVND_MATH_DEFAULT, "exceeds the launch limits");
}

Test(wgrad, validation_names_the_parameter) {
    convnd_problem p = test_parse_valid("wg 1d Ci=2 Co=2 I=5 K=3");
    p.has_bias = 1;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "has_bias=1"), "%s", convnd_last_error());
    p.has_bias = 0;
    p.activation = CONVND_ACT_SILU;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "activation=silu"), "%s", convnd_last_error());
    p.activation = CONVND_ACT_NONE;
    p.mode = (convnd_mode)3;
    cr_expect_eq(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "2 wgrad"), "%s", convnd_last_error());
}

Test(wgrad, describe_shapes) {
    convnd_problem p = test_parse_valid("wg 2d N=2 Ci=6 Co=4 g=2 I=9,8 K=3,2 S=2 x=cl w=cl y=cf");
    convnd_tensor_desc x, w, y, z;
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_X, &x), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_W, &w), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_Y, &y), CONVND_OK);
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_Z, &z), CONVND_OK);
    const int64_t xs[] = {2, 6, 9, 8}, ws[] = {4, 3, 3, 2}, ys[] = {2, 4, 4, 4};
    for (int i = 0; i < 4; ++i) {
        cr_expect_eq(x.shape[i], xs[i]);
        cr_expect_eq(w.shape[i], ws[i], "dw dim %d", i);
        cr_expect_eq(y.shape[i], ys[i], "dy dim %d", i);
        cr_expect_eq(z.shape[i], ws[i], "z (dw_prev) dim %d", i);
    }
    cr_expect_eq(w.layout, CONVND_CHANNELS_LAST);
    cr_expect_eq(z.layout, CONVND_CHANNELS_LAST, "z shares dw's layout");
    cr_expect_eq(y.layout, CONVND_CHANNELS_FIRST);
}

/* Call errors: each a clear status and message, dw untouched. */
Test(wgrad, call_errors_write_nothing) {
    convnd_problem p = test_parse_valid("wg 1d N=2 Ci=2 Co=2 I=300 K=3 P0=1 P1=1");
    char err[256];
    test_wgrad_case c;
    cr_assert(test_wgrad_init(&c, &p, 0, 5, err, sizeof err), "%s", err);
    const size_t bytes = c.esize * (size_t)c.dwd.numel;
    convnd_memcpy_h2d(c.ddw, c.hz, bytes); /* a known value to stay untouched */
    convnd_options split = {.schedule = "wgrad_splitk:k32"};
    size_t need = 0;
    cr_assert_eq(convnd_workspace_size(&p, &split, &need), CONVND_OK);
    cr_assert(need >= 32 * (size_t)c.dwd.numel * 4, "workspace %zu", need);
    void *ws = test_device_upload(CONVND_F32, NULL, (int64_t)(need / 4));
    struct {
        const char *what;
        convnd_status st;
        const char *needle;
        const void *dy;
        void *dw;
        size_t ws_bytes;
        const convnd_options *opts;
    } calls[] = {
        {"workspace one byte short", CONVND_ERR_WORKSPACE, "needs", c.ddy, c.ddw, need - 1, &split},
        {"NULL dw", CONVND_ERR_NULL_POINTER, "dw is NULL", c.ddy, NULL, need, &split},
        {"NULL dy", CONVND_ERR_NULL_POINTER, "dy is NULL", NULL, c.ddw, need, &split},
        {"dy overlapping dw", CONVND_ERR_ALIASING, "overlaps dw", c.ddw, c.ddw, need, &split},
        {"forward schedule forced", CONVND_ERR_UNSUPPORTED, "mode=wgrad", c.ddy, c.ddw, need,
         &(convnd_options){.schedule = "direct"}},
    };
    void *host = malloc(bytes);
    cr_assert(host);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
        const convnd_status st = conv_nd(&p, c.dx, calls[i].dy, NULL, NULL, calls[i].dw, ws,
                                         calls[i].ws_bytes, NULL, calls[i].opts);
        cr_expect_eq(st, calls[i].st, "%s: status %d (%s)", calls[i].what, (int)st,
                     convnd_last_error());
        cr_expect(strstr(convnd_last_error(), calls[i].needle), "%s: message '%s' lacks '%s'",
                  calls[i].what, convnd_last_error(), calls[i].needle);
        convnd_memcpy_d2h(host, c.ddw, bytes);
        cr_expect_eq(memcmp(host, c.hz, bytes), 0, "%s: dw was written", calls[i].what);
    }
    /* a wgrad schedule forced on a forward problem */
    convnd_problem f = p;
    f.mode = CONVND_FORWARD;
    char reason[256];
    cr_expect(!convnd_schedule_supports("wgrad_direct", &f, reason, sizeof reason));
    cr_expect(strstr(reason, "wgrad only"), "%s", reason);
    free(host);
    convnd_free(ws);
    test_wgrad_free(&c);
}

/* The data gradient through conv_nd: the bound transposed problem with z == dx, beta = 1 adds
 * to an existing gradient (checked against the reference with the same z). */
Test(wgrad, dgrad_accumulates_into_existing_dx) {
    const char *forward[] = {"fwd 2d N=2 Ci=3 Co=4 I=8,7 K=3 S=2,3 P0=1 P1=1",
                             "fwd 1d N=2 Ci=4 Co=6 g=2 I=17 K=4 S=3 D=2 P0=2 P1=-1 x=cl",
                             "tr 2d N=1 Ci=4 Co=2 I=5,4 K=3 S=2 P0=1 P1=0"};
    const char *specs[] = {"direct:t128", "direct:t256"};
    for (size_t i = 0; i < sizeof forward / sizeof forward[0]; ++i)
        for (size_t s = 0; s < sizeof specs / sizeof specs[0]; ++s) {
            convnd_problem f = test_parse_valid(forward[i]), d;
            cr_assert_eq(convnd_bind_dgrad(&f, &d), CONVND_OK, "%s", convnd_last_error());
            d.has_z = 1;
            d.beta = 1.0f;
            test_run_supported_case(specs[s], &d, forward[i], 1, 11 + i);
        }
}

/* The plan object runs wgrad too: create once, size the workspace, execute, same result. */
Test(wgrad, plan_object_executes_wgrad) {
    convnd_problem p =
        test_parse_valid("wg 1d N=2 Ci=4 Co=4 g=4 I=3000 K=4 P0=3 P1=0 x=cl w=cl y=cl");
    char err[256];
    test_wgrad_case c;
    cr_assert(test_wgrad_init(&c, &p, 0, 21, err, sizeof err), "%s", err);
    convnd_plan_t *plan = NULL;
    cr_assert_eq(convnd_plan_create(&plan, &c.p, NULL), CONVND_OK, "%s", convnd_last_error());
    size_t ws_bytes = 0;
    cr_assert_eq(convnd_plan_workspace_size(plan, &ws_bytes), CONVND_OK);
    void *ws = ws_bytes ? test_device_upload(CONVND_F32, NULL, (int64_t)(ws_bytes / 4 + 1)) : NULL;
    cr_assert_eq(convnd_plan_execute(plan, c.dx, c.ddy, NULL, NULL, c.ddw, ws, ws_bytes, NULL),
                 CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_synchronize(NULL), CONVND_OK);
    convnd_memcpy_d2h(c.hdw, c.ddw, c.esize * (size_t)c.dwd.numel);
    cr_expect(test_wgrad_check(&c, err, sizeof err), "plan: %s", err);
    convnd_plan_destroy(plan);
    if (ws) convnd_free(ws);
    test_wgrad_free(&c);
}
