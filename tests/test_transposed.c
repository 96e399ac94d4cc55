/* Phase-decomposed transposed convolution (convT_tc, convT_simt), beyond the shared
 * forced-schedule suite:
 *   - every configuration over cases aimed at the phase decomposition (unequal tap counts per
 *     phase, phases without taps, dilation sharing a factor with the stride, negative P0 and
 *     P1, cropping past the kernel, the bias-only extension, stride 1, the 64-phase limit) and
 *     at the load paths (x's 16-byte vector path, its pointwise variant, the gather path), tile
 *     tails, groups, layouts and the epilogue, in every dtype the schedule runs, against the
 *     CPU reference, each case in every thread order;
 *   - seeded random transposed problems over 1/2/3-D, strides 1-4, dilation 1-3, kernels 1-16;
 *   - misaligned x, which must drop to the gather path;
 *   - supports() refusals with their reasons, and the planner's routing. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"
#include "test_random.h"
#include "test_random_problem.h"

/* Cases: the dtype in the text is replaced by each dtype the schedule runs. Channel counts that
 * are multiples of 8 take x's vector path for every dtype when x is channels-last. */

static const test_case_text convT_cases[] = {
    /* decoder upsampling: K=3 S=2 (phases with 4/2/2/1 taps, output_padding 1), K=4 S=2 */
    {"vae_k3s2_op1", "tr 2d N=2 Ci=16 Co=24 I=7,6 K=3 S=2 P0=1 P1=0 x=cl w=cl bias", 0},
    {"k4s2", "tr 2d Ci=16 Co=16 I=6,5 K=4 S=2 P0=1 P1=1 x=cl w=cl act=relu", 0},
    {"k4s2_cf", "tr 2d N=2 Ci=12 Co=10 I=5,6 K=4 S=2 P0=1 P1=1 bias", 0},
    /* K <= S: one tap per phase, x's pointwise vector path */
    {"k2s2_pointwise", "tr 2d N=2 Ci=24 Co=40 I=5,6 K=2 S=2 x=cl w=cl bias act=relu", 0},
    {"k1s4_sparse_extension", "tr 2d Ci=16 Co=8 I=5 K=1 S=4 P0=0 P1=-2 x=cl w=cl bias", 0},
    {"1d_s16_k16", "tr 1d N=2 Ci=8 Co=8 I=5 K=16 S=16 P0=3 P1=-5 x=cl w=cl bias", 0},
    /* stride 1: the forward GEMM with the kernel flipped, padding E-1-P0 possibly negative */
    {"s1_same", "tr 2d Ci=16 Co=8 I=7,8 K=3 P0=1 P1=1 x=cl w=cl", 0},
    {"s1_negative_pad", "tr 2d Ci=8 Co=8 I=6 K=3 P0=-1,3 P1=2,-2", 0},
    {"s1_k16_dil3_crop", "tr 1d Ci=5 Co=6 I=9 K=16 D=3 P0=20 P1=-3 bias", 0},
    /* dilation: coprime with S, and sharing a factor with S (phases without taps) */
    {"s3_dil2", "tr 1d N=2 Ci=8 Co=12 I=11 K=5 S=3 D=2 P0=2 P1=-2 x=cl w=cl", 0},
    {"s4_dil2_gcd", "tr 1d Ci=8 Co=8 I=9 K=5 S=4 D=2 P0=-1 P1=-3", 0},
    {"s3_dil3_gcd", "tr 2d Ci=8 Co=8 I=4,5 K=3 S=3 D=3 P0=1,-2 P1=0,2 x=cl w=cl", 0},
    {"s4_k16", "tr 1d Ci=8 Co=8 I=10 K=16 S=4 P0=6 P1=-1 x=cl w=cl", 0},
    /* the x loader's tap masks (igemm_load.cuh): phases of 32 taps (the masks' width, stride 1)
     * and of 33 (the gather path) */
    {"s1_k32_mask_width", "tr 1d Ci=8 Co=8 I=9 K=32 P0=30 P1=2 x=cl w=cl", 0},
    {"s1_k33_past_masks", "tr 1d Ci=8 Co=8 I=9 K=33 D=1 P0=31 P1=1 x=cl w=cl", 0},
    {"s2_k7_dil3", "tr 2d Ci=9 Co=7 I=4,3 K=7,5 S=2,3 D=3,2 P0=4,-1 P1=-1,5", 0},
    /* cropping past the kernel, and negative P0 (an extension before the first output) */
    {"large_crop", "tr 2d Ci=8 Co=8 I=6 K=3 S=2 P0=4 P1=3 x=cl w=cl", 0},
    {"negative_p0", "tr 2d Ci=8 Co=8 I=4,5 K=3 S=2 P0=-2,-1 P1=-1,-3 x=cl w=cl bias", 0},
    /* groups */
    {"groups_vec_z", "tr 2d N=2 Ci=32 Co=48 g=2 I=5,4 K=3 S=2 P0=1 P1=0 x=cl w=cl z beta=0.5", 0},
    {"groups_cf_tails", "tr 2d Ci=18 Co=15 g=3 I=5 K=4,3 S=2,3 D=1,2 P0=2,0 P1=-1,1", 0},
    /* 3-D, and the 64-phase limit */
    {"3d_s2", "tr 3d Ci=8 Co=8 I=3,4,3 K=3 S=2 P0=1 P1=0 x=cl w=cl bias act=silu", 0},
    {"3d_s4_64_phases", "tr 3d Ci=4 Co=4 I=2,2,3 K=4,5,3 S=4 D=1,1,2 P0=1,-1,0 P1=-2,1,0", 0},
    /* layouts */
    {"x_cf_w_cl_y_cl", "tr 2d Ci=8 Co=8 I=4,5 K=3 S=2 x=cf w=cl y=cl", 0},
    {"x_cl_w_cf_y_cf", "tr 2d Ci=8 Co=8 I=4,5 K=3 S=2 P0=1 P1=0 x=cl w=cf y=cf", 0},
    /* tails: input channels past a k-tile, output channels past a column block, rows past M */
    {"cin_tail", "tr 2d Ci=40 Co=8 I=4 K=3 S=2 P0=1 P1=0 x=cl w=cl", 0},
    {"multi_block", "tr 2d N=2 Ci=16 Co=136 I=9,10 K=3 S=2 P0=1 P1=0 x=cl w=cl bias", 0},
    /* epilogue */
    {"in_place_gelu", "tr 2d Ci=8 Co=8 I=4 K=4 S=2 P0=1 P1=1 x=cl w=cl bias z beta=1 act=gelu", 1},
    {"alpha_beta", "tr 1d Ci=8 Co=5 I=9 K=3 S=2 P0=0 P1=-1 bias z alpha=1.5 beta=-0.5", 0},
    /* no input channels: the epilogue alone */
    {"zero_in_channels_bias", "tr 2d Ci=0 Co=4 I=3 K=3 S=2 bias", 0},
};
#define CONVT_CASES (sizeof convT_cases / sizeof convT_cases[0])

#define MAX_CONVT_CONFIGS 32
static test_schedule_config convT_configs[MAX_CONVT_CONFIGS];

static size_t list_convT_configs(void) {
    return test_list_schedule_configs("convT_", convT_configs, MAX_CONVT_CONFIGS);
}

TestSuite(transposed, .timeout = 900);

ParameterizedTestParameters(transposed, phase_cases) {
    return cr_make_param_array(test_schedule_config, convT_configs, list_convT_configs());
}

ParameterizedTest(test_schedule_config *cc, transposed, phase_cases) {
    test_run_case_table(*cc, convT_cases, CONVT_CASES);
}

/* ---- random transposed problems ------------------------------------------------------------ */

/* A valid transposed problem: dims 1-3, strides 1-4, dilation 1-3, kernels 1-16 (1-D; 2-D up
 * to 6, 3-D up to 3 to stay small), padding from an extension of S+1 outputs past either end to
 * cropping past the kernel, 1-20 channels per group (often multiples of 8: x's vector path),
 * groups 1-3, any layouts, the epilogue, and the schedule's numerics. */
static void random_transposed(test_rng *r, const test_numerics *num, size_t nnum, convnd_problem *p,
                              int *z_in_place) {
    static const int64_t kmax[] = {16, 6, 3}, imax[] = {12, 6, 3};
    for (;;) {
        convnd_problem_init(p, (int32_t)test_rng_int(r, 1, 3));
        p->mode = CONVND_TRANSPOSED;
        p->N = test_rng_int(r, 1, 2);
        p->groups = test_rng_int(r, 1, 3);
        const int vec = test_rng_int(r, 0, 1);
        p->C_in = p->groups * (vec ? 8 * test_rng_int(r, 1, 2) : test_rng_int(r, 1, 20));
        p->C_out = p->groups * test_rng_int(r, 1, 20);
        for (int32_t t = 0; t < p->dims; ++t) {
            p->kernel[t] = test_rng_int(r, 1, kmax[p->dims - 1]);
            p->stride[t] = test_rng_int(r, 1, 4);
            p->dilation[t] = test_rng_int(r, 1, 3);
            const int64_t e = p->dilation[t] * (p->kernel[t] - 1) + 1;
            p->pad_before[t] = test_rng_int(r, -p->stride[t] - 1, e);
            p->pad_after[t] = test_rng_int(r, -p->stride[t] - 1, e);
            p->input[t] = test_rng_int(r, 1, imax[p->dims - 1]);
        }
        const test_numerics *n = &num[test_rng_int(r, 0, (int64_t)nnum - 1)];
        p->dtype = n->dtype;
        p->math = n->math;
        p->x_layout = (convnd_layout)test_rng_int(r, 0, 1);
        p->w_layout = (convnd_layout)test_rng_int(r, 0, 1);
        p->y_layout = (convnd_layout)test_rng_int(r, 0, 2);
        p->has_bias = (int32_t)test_rng_int(r, 0, 1);
        p->has_z = (int32_t)test_rng_int(r, 0, 1);
        p->alpha = test_rng_int(r, 0, 1) ? 1.0f : 0.75f;
        p->beta = p->has_z ? (test_rng_int(r, 0, 1) ? 1.0f : -0.5f) : 0.0f;
        p->activation = (convnd_activation)test_rng_int(r, 0, 3);
        *z_in_place = (int)test_rng_int(r, 0, 1);
        if (convnd_validate(p) != CONVND_OK) continue;
        const int64_t outputs = test_problem_outputs(p);
        if (outputs < 1 || outputs > 6000 || test_problem_macs(p) > 400000) continue;
        return;
    }
}

#define RANDOM_TRANSPOSED 40

ParameterizedTestParameters(transposed, random_problems) {
    return cr_make_param_array(test_schedule_config, convT_configs, list_convT_configs());
}

ParameterizedTest(test_schedule_config *cc, transposed, random_problems) {
    char spec[128];
    test_schedule_spec(*cc, spec, sizeof spec);
    size_t nnum;
    const test_numerics *num = test_numerics_of(*cc, &nnum);
    for (int i = 0; i < RANDOM_TRANSPOSED; ++i) {
        test_rng r = test_rng_seed(0x7a45e000u + (uint64_t)i);
        convnd_problem p;
        int z_in_place;
        random_transposed(&r, num, nnum, &p, &z_in_place);
        char id[32];
        snprintf(id, sizeof id, "random#%d", i);
        test_run_supported_case(spec, &p, id, z_in_place, test_rng_next(&r));
    }
}

/* ---- the table, exhaustively: strides 1-4 x dilation 1-3 x kernels 1-16 ------------ */

/* Every (S, D, K) of the table as a 1-D problem on each schedule's smallest tile (the phase
 * tables do not depend on the tile; the tiles' own tails are the cases above). Padding is the
 * output_padding form (P1 = P0 - op, so negative) or a crop, groups and layouts alternate, and
 * the dtype rotates through the schedule's numerics. */
ParameterizedTestParameters(transposed, stride_dilation_kernel_table) {
    return cr_make_param_array(test_schedule_config, convT_configs, list_convT_configs());
}

ParameterizedTest(test_schedule_config *cc, transposed, stride_dilation_kernel_table) {
    const convnd_schedule *s = convnd_schedule_table[cc->schedule];
    if (cc->config != s->num_configs - 1) return; /* the smallest tile (listed last) */
    char spec[128];
    test_schedule_spec(*cc, spec, sizeof spec);
    size_t nnum;
    const test_numerics *num = test_numerics_of(*cc, &nnum);
    int n = 0;
    for (int64_t st = 1; st <= 4; ++st)
        for (int64_t d = 1; d <= 3; ++d)
            for (int64_t k = 1; k <= 16; ++k, ++n) {
                convnd_problem p;
                convnd_problem_init(&p, 1);
                p.mode = CONVND_TRANSPOSED;
                p.groups = 1 + (n % 2);
                p.C_in = p.groups * ((n % 3) ? 8 : 5);
                p.C_out = p.groups * (3 + n % 7);
                p.kernel[0] = k;
                p.stride[0] = st;
                p.dilation[0] = d;
                p.input[0] = 3 + n % 4;
                /* output (I-1)S + E - P0 - P1 with P1 = P0 - op (output_padding op); every
                 * fifth problem crops as far as that leaves one output (past the kernel when
                 * the input is long enough) */
                const int64_t e = d * (k - 1) + 1, op = n % st;
                const int64_t crop = ((p.input[0] - 1) * st + e + op - 1) / 2;
                p.pad_before[0] = (n % 5 == 4) ? crop : (e - 1) / 2;
                p.pad_after[0] = p.pad_before[0] - op;
                p.x_layout = (convnd_layout)(n % 2);
                p.w_layout = (convnd_layout)((n / 2) % 2);
                p.has_bias = n % 3 == 0;
                p.dtype = num[n % nnum].dtype;
                p.math = num[n % nnum].math;
                cr_assert(convnd_validate(&p) == CONVND_OK, "S=%lld D=%lld K=%lld invalid: %s",
                          (long long)st, (long long)d, (long long)k, convnd_last_error());
                char id[80];
                snprintf(id, sizeof id, "S=%lld D=%lld K=%lld", (long long)st, (long long)d,
                         (long long)k);
                test_run_supported_case(spec, &p, id, 0, test_seed_of(id, 11));
            }
    cr_log_info("%s: %d (stride, dilation, kernel) problems", spec, n);
}

/* ---- misaligned x, then w alone: the vector path's alignment test must send each down the
 * gather path (misaligning both at once would hide a dropped check on w) ----------------------- */

ParameterizedTestParameters(transposed, misaligned_x) {
    return cr_make_param_array(test_schedule_config, convT_configs, list_convT_configs());
}

ParameterizedTest(test_schedule_config *cc, transposed, misaligned_x) {
    char spec[128];
    test_schedule_spec(*cc, spec, sizeof spec);
    size_t nnum;
    const test_numerics *num = test_numerics_of(*cc, &nnum);
    static const char *const problems[] = {
        "tr 2d N=2 Ci=16 Co=24 I=5,4 K=3 S=2 P0=1 P1=0 x=cl w=cl bias",
        "tr 2d N=2 Ci=16 Co=24 I=5,4 K=2 S=2 x=cl w=cl",
    };
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; ++i) {
        convnd_problem p = test_parse(problems[i]);
        char err[512];
        p.dtype = num[0].dtype;
        p.math = num[0].math;
        test_conv_case c;
        cr_assert(test_case_init(&c, &p, 0, test_seed_of(problems[i], 7), err, sizeof err), "%s",
                  err);
        void *xb = NULL, *wb = NULL;
        void *x = test_upload_misaligned(c.hx, c.xd.numel, c.esize, &xb);
        void *w = test_upload_misaligned(c.hw, c.wd.numel, c.esize, &wb);
        cr_assert(x && w, "%s: device upload failed", spec);
        void *const dx = c.dx, *const dw = c.dw;
        c.dx = x;
        test_run_all_orders(&c, spec, "misaligned x");
        c.dx = dx;
        c.dw = w;
        test_run_all_orders(&c, spec, "misaligned w");
        c.dw = dw;
        convnd_free(xb);
        convnd_free(wb);
        test_case_free(&c);
    }
}

/* ---- supports(): refusals name the reason ---------------------------------------------------- */

Test(transposed, refusals_name_the_reason) {
    const char *tr = "tr 2d Ci=16 Co=16 I=8 K=3 S=2";
    test_expect_refusal("convT_tc", "fwd 2d Ci=16 Co=16 I=8 K=3", CONVND_F16, CONVND_MATH_DEFAULT,
                        "transposed");
    test_expect_refusal("convT_simt", "fwd 2d Ci=16 Co=16 I=8 K=3", CONVND_F32, CONVND_MATH_DEFAULT,
                        "transposed");
    test_expect_refusal("convT_tc", tr, CONVND_F32, CONVND_MATH_DEFAULT, "ALLOW_TF32");
    test_expect_refusal("convT_simt", tr, CONVND_F16, CONVND_MATH_DEFAULT, "f16");
    test_expect_refusal("convT_simt", tr, CONVND_BF16, CONVND_MATH_DEFAULT, "bf16");
    test_expect_refusal("convT_tc", "tr 1d Ci=8 Co=8 I=4 K=3 S=17", CONVND_F16, CONVND_MATH_DEFAULT,
                        "stride=17");
    test_expect_refusal("convT_tc", "tr 3d Ci=8 Co=8 I=2 K=3 S=4,4,5", CONVND_F16,
                        CONVND_MATH_DEFAULT, "80 output phases");
    test_expect_refusal("convT_tc", "tr 1d Ci=8 Co=8 I=4 K=1 P0=-1500000000 P1=1500000000",
                        CONVND_F16, CONVND_MATH_DEFAULT, "64-bit");
}

/* A forced convT schedule that does not support the problem is an error with the reason, not a
 * silent fallback, and y stays untouched. */
Test(transposed, forced_unsupported_is_an_error) {
    test_expect_forced_error("convT_simt:32x32x8_s2", "tr 1d Ci=8 Co=8 I=6 K=3 S=20", "stride=20");
    test_expect_forced_error("convT_tc:256x128x64_s4", "tr 2d Ci=64 Co=64 I=8 K=3 S=2 tf32",
                             "bytes of shared memory per block for dtype=f32");
}

/* ---- the planner's table (families/igemm/convT.c) -------------------------------------------- */

Test(transposed, planner_routes_transposed_problems) {
    /* the decoder layers: big tiles on tensor cores */
    test_expect_plan("tr 2d Ci=512 Co=512 I=64 K=3 S=2 P0=1 P1=0 bf16 x=cl w=cl",
                     "convT_tc:128x256x64_s4");
    test_expect_plan("tr 2d N=4 Ci=256 Co=256 I=32 K=4 S=2 P0=1 P1=1 f16 x=cl w=cl",
                     "convT_tc:128x256x64_s4");
    test_expect_plan("tr 3d Ci=128 Co=128 I=4,32,32 K=3 S=1,2,2 P0=1 P1=1,0,0 bf16 x=cl w=cl",
                     "convT_tc:128x128x32_s3");
    /* stride 1 and a 1-D vocoder upsampler */
    test_expect_plan("tr 2d N=8 Ci=256 Co=256 I=32 K=3 P0=1 P1=1 f16 x=cl w=cl",
                     "convT_tc:128x128x32_s3");
    test_expect_plan("tr 1d Ci=64 Co=32 I=100 K=16 S=8 P0=4 P1=4 f16 x=cl w=cl",
                     "convT_tc:32x64x32_s2");
    /* f32: TF32 only when allowed, else exact FMA on CUDA cores */
    test_expect_plan("tr 2d Ci=512 Co=512 I=64 K=3 S=2 P0=1 P1=0 x=cl w=cl tf32",
                     "convT_tc:128x128x32_s3");
    test_expect_plan("tr 2d Ci=512 Co=512 I=64 K=3 S=2 P0=1 P1=0 x=cl w=cl",
                     "convT_simt:128x128x8_s3");
    test_expect_plan("tr 2d Ci=16 Co=16 I=8 K=4 S=2 P0=1 P1=1", "convT_simt:32x32x8_s2");
    /* tiny or not GEMM-shaped: the direct schedule */
    static const char *const others[] = {
        "tr 2d Ci=3 Co=5 I=4,5 K=3 S=2 P0=1 P1=0 f16",
        "tr 2d Ci=64 Co=3 I=32 K=4 S=2 P0=1 P1=1 bf16 x=cl w=cl",
        "tr 2d N=2 Ci=64 Co=64 g=64 I=16 K=4 S=2 P0=1 P1=1 f16 x=cl w=cl",
        "tr 1d Ci=16 Co=16 I=8 K=3 S=20", /* past the phase limits */
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i)
        test_expect_plan(others[i], "direct:");
}
