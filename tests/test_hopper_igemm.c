/* The Hopper tier (hopper_igemm: warp-specialized wgmma + TMA implicit GEMM) on the emulated
 * device, beyond the shared forced-schedule suite:
 *   - both configurations over its whole domain (1/2/3-D, stride, dilation, asymmetric padding,
 *     tails in M, N and K, several tiles per persistent block, every epilogue variant, z == y)
 *     in f16, bf16 and f32 with TF32, against the CPU reference in every thread order;
 *   - the transposed mode (one launch per output phase, families/igemm/convT_phase.h) over its domain:
 *     stride 1, 2 and 3, dilation (also sharing a factor with the stride), asymmetric and
 *     negative padding (output_padding), phases no tap reaches (epilogue only), tails in M, N
 *     and K, several tiles per phase, every epilogue variant, z == y, in f16 and bf16 (TF32 is
 *     refused: the transposed weight reaches wgmma MN-major);
 *   - misaligned pointers (fall back to igemm_tc / convT_tc, same result);
 *   - supports() refusals naming the limit. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "test_conv_case.h"
#include "test_duality.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

static const test_case_text hopper_cases[] = {
    {"2d_same_bias", "fwd 2d N=2 Ci=16 Co=24 I=9,10 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    /* K tail: 72 channels = a full and a partial 64-channel block; M and N tails */
    {"2d_stride_tails", "fwd 2d N=3 Ci=72 Co=40 I=7,9 K=3 S=2 P0=0 P1=1 x=cl w=cl", 0},
    {"1d_causal_dilated", "fwd 1d N=2 Ci=8 Co=16 I=33 K=3 D=2 P0=4 P1=0 x=cl w=cl", 0},
    {"3d_causal_silu", "fwd 3d Ci=8 Co=8 I=3,5,6 K=3 P0=2,1,1 P1=0,1,1 x=cl w=cl bias act=silu", 0},
    {"3d_stride_dilation",
     "fwd 3d Ci=8 Co=8 I=5,6,7 K=2,3,3 S=2,1,3 D=1,2,1 P0=0,1,1 P1=1,1,0 x=cl w=cl", 0},
    {"2d_even_kernel_asym", "fwd 2d Ci=8 Co=16 I=8,7 K=4,2 P0=1,0 P1=2,1 x=cl w=cl act=relu", 0},
    {"2d_pointwise_stride", "fwd 2d Ci=16 Co=8 I=9,8 K=1 S=2 P0=1 P1=0 x=cl w=cl", 0},
    /* several 128-row tiles and column tiles: the persistent blocks walk more than one, the
     * ring's phases carry over */
    {"2d_many_tiles", "fwd 2d N=2 Ci=16 Co=264 I=12,13 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    {"2d_in_place_gelu",
     "fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 x=cl w=cl bias z alpha=0.5 beta=1 act=gelu", 1},
    {"2d_residual_alpha", "fwd 2d Ci=24 Co=32 I=5 K=3 P0=0 P1=2 x=cl w=cl z alpha=2 beta=-0.5", 0},
};
#define HOPPER_CASES (sizeof hopper_cases / sizeof hopper_cases[0])

static const test_case_text hopper_transposed_cases[] = {
    /* the 2x upsampling of decoders: K=4, S=2, P=1 */
    {"tr_2d_k4_s2_bias", "tr 2d N=2 Ci=16 Co=24 I=5,6 K=4 S=2 P0=1 P1=1 x=cl w=cl bias", 0},
    /* output_padding 1 (P1 = P0 - 1): the last row and column come from the phase's tail */
    {"tr_2d_output_padding_relu", "tr 2d Ci=16 Co=16 I=5,4 K=3 S=2 P0=1 P1=0 x=cl w=cl act=relu",
     0},
    /* K tail (72 = 64 + 8 channels), N tail (40 of 128), stride 3 with dilation 2 */
    {"tr_1d_s3_dil2_tails", "tr 1d N=2 Ci=72 Co=40 I=9 K=4 S=3 D=2 P0=2 P1=-1 x=cl w=cl", 0},
    {"tr_3d_s2_silu", "tr 3d Ci=8 Co=16 I=3,4,3 K=3 S=2 P0=1 P1=0,1,0 x=cl w=cl bias act=silu", 0},
    /* K < S: phases no tap reaches get bias + beta * z alone */
    {"tr_2d_empty_phases",
     "tr 2d Ci=8 Co=8 I=4,5 K=1,2 S=2,3 P0=0 P1=-1,-2 x=cl w=cl bias z alpha=2 beta=0.5", 0},
    /* gcd(S, D) = 2: every other phase has no taps; alpha and gelu */
    {"tr_2d_dil_shares_stride",
     "tr 2d Ci=16 Co=8 I=5 K=3 S=2 D=2 P0=1 P1=0 x=cl w=cl alpha=0.5 "
     "act=gelu",
     0},
    /* negative P0: phases cropped at the start (a positive lower corner) */
    {"tr_1d_negative_p0", "tr 1d Ci=8 Co=8 I=6 K=3 S=2 P0=-1 P1=2 x=cl w=cl bias", 0},
    /* stride 1: one phase, the flipped kernel */
    {"tr_2d_stride1", "tr 2d Ci=8 Co=16 I=6,5 K=3,2 P0=0 P1=1 x=cl w=cl", 0},
    /* several row and column tiles per phase: the persistent blocks walk more than one */
    {"tr_2d_many_tiles", "tr 2d N=2 Ci=16 Co=264 I=9,8 K=4 S=2 P0=1 P1=1 x=cl w=cl bias", 0},
    {"tr_2d_in_place_gelu",
     "tr 2d N=2 Ci=16 Co=16 I=4,5 K=3 S=2 P0=1 P1=0 x=cl w=cl bias z alpha=0.5 beta=1 act=gelu", 1},
};
#define HOPPER_TRANSPOSED_CASES (sizeof hopper_transposed_cases / sizeof hopper_transposed_cases[0])

#define MAX_HOPPER_CONFIGS 8
static test_schedule_config hopper_configs[MAX_HOPPER_CONFIGS];

static size_t list_hopper_configs(void) {
    return test_list_schedule_configs("hopper_", hopper_configs, MAX_HOPPER_CONFIGS);
}

TestSuite(hopper_igemm, .timeout = 1200);

ParameterizedTestParameters(hopper_igemm, domain) {
    return cr_make_param_array(test_schedule_config, hopper_configs, list_hopper_configs());
}

ParameterizedTest(test_schedule_config *hc, hopper_igemm, domain) {
    test_run_case_table(*hc, hopper_cases, HOPPER_CASES);
}

/* The transposed cases in f16 and bf16 (the dtypes of the transposed mode). */
ParameterizedTestParameters(hopper_igemm, transposed) {
    return cr_make_param_array(test_schedule_config, hopper_configs, list_hopper_configs());
}

ParameterizedTest(test_schedule_config *hc, hopper_igemm, transposed) {
    char spec[128];
    test_schedule_spec(*hc, spec, sizeof spec);
    static const convnd_dtype dtypes[] = {CONVND_F16, CONVND_BF16};
    for (size_t i = 0; i < HOPPER_TRANSPOSED_CASES; ++i)
        for (size_t k = 0; k < 2; ++k) {
            convnd_problem p = test_parse_valid(hopper_transposed_cases[i].problem);
            p.dtype = dtypes[k];
            test_run_supported_case(spec, &p, hopper_transposed_cases[i].id,
                                    hopper_transposed_cases[i].z_in_place,
                                    test_seed_of(hopper_transposed_cases[i].id, k));
        }
}

/* SPEC §4 on the transposed mode: F (forward, run by direct) and its dual T (run by each Hopper
 * configuration) satisfy <F(x), y> = <x, T(y)> within the outputs' bounds, in f16 and bf16. */
static const char *const hopper_duality_forward[] = {
    "fwd 2d N=2 Ci=16 Co=24 I=9,8 K=3 S=2 P0=1 P1=1 x=cl w=cl",
    "fwd 1d Ci=8 Co=16 I=20 K=4 S=3 D=2 P0=2 P1=1 x=cl w=cl",
    "fwd 3d Ci=8 Co=8 I=5,4,6 K=3,2,3 S=2,1,2 P0=1,0,1 P1=0,1,1 x=cl w=cl",
};

ParameterizedTestParameters(hopper_igemm, transposed_duality) {
    return cr_make_param_array(test_schedule_config, hopper_configs, list_hopper_configs());
}

ParameterizedTest(test_schedule_config *hc, hopper_igemm, transposed_duality) {
    char spec[128], label[192], reason[512];
    test_schedule_spec(*hc, spec, sizeof spec);
    const size_t n = sizeof hopper_duality_forward / sizeof hopper_duality_forward[0];
    for (size_t i = 0; i < n; ++i) {
        convnd_problem f = test_parse_valid(hopper_duality_forward[i]);
        f.dtype = i % 2 ? CONVND_BF16 : CONVND_F16;
        const convnd_problem t = test_dual_problem(&f);
        cr_assert(convnd_schedule_supports(spec, &t, reason, sizeof reason),
                  "%s refuses the dual of %s: %s", spec, hopper_duality_forward[i], reason);
        snprintf(label, sizeof label, "%s duality of %s", spec, hopper_duality_forward[i]);
        test_check_duality(&f, "direct", spec, test_seed_of(hopper_duality_forward[i], 5), label);
    }
}

/* x and w one element past a 16-byte boundary: TMA cannot take them; the launch runs igemm_tc
 * (forward) or convT_tc (transposed) instead, with the same result. */
static void run_misaligned(const char *problem, const char *spec) {
    convnd_problem p = test_parse(problem);
    char err[512];
    test_conv_case c;
    cr_assert(test_case_init(&c, &p, 0, test_seed_of(problem, 3), err, sizeof err), "%s", err);
    void *xb = NULL, *wb = NULL;
    void *x = test_upload_misaligned(c.hx, c.xd.numel, c.esize, &xb);
    void *w = test_upload_misaligned(c.hw, c.wd.numel, c.esize, &wb);
    cr_assert(x && w, "device upload failed");
    void *const dx = c.dx, *const dw = c.dw;
    c.dx = x;
    c.dw = w;
    test_run_all_orders(&c, spec, "misaligned x and w");
    c.dx = dx;
    c.dw = dw;
    convnd_free(xb);
    convnd_free(wb);
    test_case_free(&c);
}

Test(hopper_igemm, misaligned_pointers_fall_back) {
    run_misaligned("fwd 2d N=2 Ci=16 Co=24 I=7,6 K=3 P0=1 P1=1 x=cl w=cl bias bf16",
                   "hopper_igemm:128x128x64_s6");
    run_misaligned("tr 2d N=2 Ci=16 Co=24 I=5,4 K=4 S=2 P0=1 P1=1 x=cl w=cl bias f16",
                   "hopper_igemm:128x256x64_s4");
}

Test(hopper_igemm, refusals_name_the_limit) {
    const char *s = "hopper_igemm";
    test_expect_refusal(s, "wg 2d Ci=16 Co=16 I=8 K=3 x=cl w=cl", CONVND_BF16, CONVND_MATH_DEFAULT,
                        "forward and transposed");
    test_expect_refusal(s, "tr 2d Ci=16 Co=16 I=8 K=3 S=2 x=cl w=cl", CONVND_F32,
                        CONVND_MATH_ALLOW_TF32, "K-major operands only");
    test_expect_refusal(s, "tr 1d Ci=16 Co=16 I=8 K=3 S=17 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "stride[0]=17");
    test_expect_refusal(s, "tr 3d Ci=16 Co=16 I=4 K=2 S=5 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "125 output phases");
    /* phase 0 of K=3, S=2, P0=300: P0' = (2 - 300) / 2 = -149, a lower corner past 127 */
    test_expect_refusal(s, "tr 2d Ci=16 Co=16 I=8 K=3 S=2 P0=300 P1=-300 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "output phase");
    test_expect_refusal(s, "tr 3d Ci=16 Co=16 I=4 K=20 S=2 D=4 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "dilated filter extent");
    test_expect_refusal(s, "tr 2d Ci=12 Co=16 I=8 K=3 S=2 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "C_in=12");
    test_expect_refusal(s, "tr 2d Ci=16 Co=16 g=2 I=8 K=3 S=2 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "groups=2");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 I=8 K=3 x=cl w=cl", CONVND_F32, CONVND_MATH_DEFAULT,
                        "allow_tf32");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 g=2 I=8 K=3 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "groups=2");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 I=8 K=3", CONVND_BF16, CONVND_MATH_DEFAULT,
                        "channels-last");
    test_expect_refusal(s, "fwd 2d Ci=12 Co=16 I=8 K=3 x=cl w=cl", CONVND_BF16, CONVND_MATH_DEFAULT,
                        "C_in=12");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 I=8 K=3 P0=-1 P1=1 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "negative padding");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 I=40 K=3 S=9 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "stride[0]=9");
    test_expect_refusal(s, "fwd 2d Ci=16 Co=16 I=300 K=3 P0=130 P1=1 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "im2col corners");
    test_expect_refusal(s, "fwd 3d Ci=16 Co=16 I=50 K=3 D=20 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "dilated filter extent 40");
    test_expect_refusal(s, "fwd 2d N=0 Ci=16 Co=16 I=8 K=3 x=cl w=cl", CONVND_BF16,
                        CONVND_MATH_DEFAULT, "zero size");
}

Test(hopper_igemm, forced_unsupported_is_an_error) {
    test_expect_forced_error("hopper_igemm:128x256x64_s4", "fwd 2d Ci=16 Co=16 I=8 K=3 bf16",
                             "channels-last");
}
