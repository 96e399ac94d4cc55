/* Implicit-GEMM schedules (igemm_tc, igemm_simt), beyond the shared forced-schedule suite:
 *   - every configuration over cases aimed at its load paths (channels-last 16-byte vector
 *     path, its pointwise 1x1 variant, the per-element gather path), tile tails, grid tails and
 *     every dtype the schedule runs (tc: f16, bf16, f32 with TF32; simt: f32), against the CPU
 *     reference, each case in every thread order;
 *   - misaligned base pointers, which must drop to the gather path and stay correct;
 *   - supports() refusals with their reasons;
 *   - the planner's choices of the heuristic table (families/igemm/igemm.c). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "convnd_ref.h"
#include "schedule.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

/* Cases: the dtype in the text is replaced by each dtype the schedule runs. Channel counts that
 * are multiples of 8 take the vector path for every dtype (8 halves or 2x4 floats per chunk). */

static const test_case_text igemm_cases[] = {
    /* vector path */
    {"vec_2d_same_bias", "fwd 2d N=2 Ci=16 Co=24 I=9,10 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    {"vec_2d_tails", "fwd 2d N=3 Ci=40 Co=72 I=7,9 K=3 S=2 P0=0 P1=1 x=cl w=cl", 0},
    {"vec_1d_causal_dil", "fwd 1d N=2 Ci=8 Co=16 I=33 K=3 D=2 P0=4 P1=0 x=cl w=cl", 0},
    {"vec_3d_causal_silu", "fwd 3d Ci=8 Co=8 I=3,5,6 K=3 P0=2,1,1 P1=0,1,1 x=cl w=cl bias act=silu",
     0},
    {"vec_2d_negative_pad", "fwd 2d Ci=16 Co=8 I=10,9 K=3 S=2 P0=-1,-2 P1=-2,1 x=cl w=cl", 0},
    {"vec_2d_groups_z", "fwd 2d N=2 Ci=32 Co=48 g=2 I=6,7 K=3 P0=1 P1=1 x=cl w=cl z beta=0.5", 0},
    {"vec_2d_even_kernel_y_cf", "fwd 2d Ci=8 Co=16 I=8,7 K=4,2 P0=1,0 P1=2,1 x=cl w=cl y=cf", 0},
    /* the vector path's incremental tap state (igemm_load.cuh): tap masks up to their width
     * (K = 32, the top bit; dilated), past it (K = 33: the gather path), dilation with negative
     * padding, 3-D wrap deltas with rows past M and channels not a multiple of BK */
    {"vec_1d_k32_mask_width", "fwd 1d N=2 Ci=16 Co=8 I=40 K=32 P0=3 P1=2 x=cl w=cl", 0},
    {"vec_1d_k32_dilated", "fwd 1d Ci=8 Co=8 I=70 K=32 D=2 P0=1 P1=2 x=cl w=cl bias", 0},
    {"vec_1d_k33_past_masks", "fwd 1d Ci=8 Co=8 I=45 K=33 P0=2 P1=1 x=cl w=cl", 0},
    {"vec_2d_dil_negative_pad",
     "fwd 2d N=2 Ci=16 Co=8 I=11,12 K=3,2 S=1,2 D=2,3 P0=-1,2 P1=1,-2 x=cl w=cl", 0},
    {"vec_3d_wraps_channel_tail",
     "fwd 3d N=2 Ci=24 Co=16 I=4,5,6 K=3,2,3 D=1,2,1 P0=1,0,-1 P1=1,1,2 x=cl w=cl", 0},
    /* pointwise variant of the vector path */
    {"pw_2d_relu", "fwd 2d N=2 Ci=24 Co=40 I=6,5 K=1 x=cl w=cl bias act=relu", 0},
    {"pw_2d_stride2_pad", "fwd 2d Ci=16 Co=8 I=9,8 K=1 S=2 P0=1 P1=0 x=cl w=cl", 0},
    {"pw_3d_negative_pad", "fwd 3d Ci=8 Co=16 I=4,5,6 K=1 S=1,2,2 P0=-1,0,1 P1=0,1,-1 x=cl w=cl",
     0},
    {"pw_1d_groups_gelu", "fwd 1d Ci=16 Co=16 g=2 I=37 K=1 x=cl w=cl act=gelu", 0},
    /* gather path */
    {"gather_cf_tails", "fwd 2d N=2 Ci=40 Co=72 I=7,9 K=3 S=2 P0=0 P1=1", 0},
    {"gather_cl_odd_channels", "fwd 2d Ci=7 Co=5 I=9,8 K=3 P0=1 P1=1 x=cl w=cl", 0},
    {"gather_x_cl_w_cf", "fwd 2d Ci=16 Co=8 I=6 K=3 x=cl w=cf y=cl", 0},
    {"gather_3d_dil_groups",
     "fwd 3d N=2 Ci=6 Co=6 g=3 I=5,6,7 K=2,3,3 S=2,1,2 D=1,2,1 P0=0,1,-1 P1=1,1,0", 0},
    /* several k-tiles per tap (C_in over BK, with a tail), across k1 and k0 wraps: the
     * gather loader keeps a tap's row state from its first k-tile on */
    {"gather_3d_cf_ktiles_per_tap", "fwd 3d N=2 Ci=72 Co=10 I=3,4,5 K=2,2,3 P0=1,0,1 P1=0,1,1", 0},
    {"gather_pw_cf_stride3", "fwd 2d N=2 Ci=5 Co=7 I=9 K=1 S=3 P0=1 P1=1 bias", 0},
    /* 12 channels: gather for 16-bit types (not a multiple of 8), vector for f32 (of 4) */
    {"cl_12_channels", "fwd 2d Ci=12 Co=6 I=7 K=3 P0=1 P1=1 x=cl w=cl", 0},
    /* several blocks along M and N for the big tiles, with tails in both */
    {"multi_block", "fwd 2d N=2 Ci=16 Co=136 I=12,13 K=3 P0=1 P1=1 x=cl w=cl bias", 0},
    /* the whole epilogue, in place (z == y) on both paths */
    {"vec_in_place_gelu",
     "fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 x=cl w=cl bias z alpha=0.5 beta=1 act=gelu", 1},
    {"gather_in_place_alpha", "fwd 2d Ci=5 Co=6 I=6 K=3 P0=0 P1=2 z alpha=2 beta=-0.5", 1},
    /* zero sizes: nothing to do, or only the epilogue (no input channels) */
    {"zero_batch", "fwd 2d N=0 Ci=8 Co=8 I=5 K=3 x=cl w=cl", 0},
    {"zero_in_channels_bias", "fwd 2d Ci=0 Co=8 I=5 K=3 bias", 0},
};
#define IGEMM_CASES (sizeof igemm_cases / sizeof igemm_cases[0])

#define MAX_IGEMM_CONFIGS 32
static test_schedule_config igemm_configs[MAX_IGEMM_CONFIGS];

static size_t list_igemm_configs(void) {
    return test_list_schedule_configs("igemm_", igemm_configs, MAX_IGEMM_CONFIGS);
}

TestSuite(igemm, .timeout = 600);

ParameterizedTestParameters(igemm, load_paths) {
    return cr_make_param_array(test_schedule_config, igemm_configs, list_igemm_configs());
}

ParameterizedTest(test_schedule_config *ic, igemm, load_paths) {
    test_run_case_table(*ic, igemm_cases, IGEMM_CASES);
}

/* x, w, or both one element past a 16-byte boundary: the vector path's alignment test of each
 * pointer must send the launch down the gather path, with the same result (the emulated
 * cp.async rejects a misaligned 16-byte source, so a deleted check fails here). */
ParameterizedTestParameters(igemm, misaligned_pointers) {
    return cr_make_param_array(test_schedule_config, igemm_configs, list_igemm_configs());
}

ParameterizedTest(test_schedule_config *ic, igemm, misaligned_pointers) {
    char spec[128];
    test_schedule_spec(*ic, spec, sizeof spec);
    size_t nnum;
    const test_numerics *num = test_numerics_of(*ic, &nnum);
    static const char *const problems[] = {
        "fwd 2d N=2 Ci=16 Co=24 I=7,6 K=3 P0=1 P1=1 x=cl w=cl bias",
        "fwd 2d N=2 Ci=16 Co=24 I=7,6 K=1 S=2 x=cl w=cl",
    };
    static const char *const which[] = {"", "misaligned x", "misaligned w", "misaligned x and w"};
    for (size_t i = 0; i < 2 * 3; ++i) {
        const int mis = 1 + (int)(i % 3); /* bit 0: x, bit 1: w */
        convnd_problem p = test_parse(problems[i / 3]);
        char err[512];
        p.dtype = num[0].dtype;
        p.math = num[0].math;
        test_conv_case c;
        cr_assert(test_case_init(&c, &p, 0, test_seed_of(problems[i / 3], 7), err, sizeof err),
                  "%s", err);
        void *xb = NULL, *wb = NULL;
        void *x = (mis & 1) ? test_upload_misaligned(c.hx, c.xd.numel, c.esize, &xb) : c.dx;
        void *w = (mis & 2) ? test_upload_misaligned(c.hw, c.wd.numel, c.esize, &wb) : c.dw;
        cr_assert(x && w, "%s: device upload failed", spec);
        void *const dx = c.dx, *const dw = c.dw;
        c.dx = x;
        c.dw = w;
        test_run_all_orders(&c, spec, which[mis]);
        c.dx = dx;
        c.dw = dw;
        convnd_free(xb);
        convnd_free(wb);
        test_case_free(&c);
    }
}

/* ---- supports(): refusals name the reason ---------------------------------------------------- */

Test(igemm, refusals_name_the_reason) {
    const char *fwd = "fwd 2d Ci=16 Co=16 I=8 K=3";
    test_expect_refusal("igemm_tc", "tr 2d Ci=16 Co=16 I=8 K=3 S=2", CONVND_F16,
                        CONVND_MATH_DEFAULT, "forward");
    test_expect_refusal("igemm_simt", "tr 2d Ci=16 Co=16 I=8 K=3 S=2", CONVND_F32,
                        CONVND_MATH_DEFAULT, "forward");
    test_expect_refusal("igemm_tc", fwd, CONVND_F32, CONVND_MATH_DEFAULT, "ALLOW_TF32");
    test_expect_refusal("igemm_simt", fwd, CONVND_F16, CONVND_MATH_DEFAULT, "f16");
    test_expect_refusal("igemm_simt", fwd, CONVND_BF16, CONVND_MATH_DEFAULT, "bf16");
    /* padding so large that 32-bit coordinates could overflow (a valid, tiny problem) */
    test_expect_refusal("igemm_tc", "fwd 1d Ci=8 Co=8 I=4 K=1 P0=-1500000000 P1=1500000000",
                        CONVND_F16, CONVND_MATH_DEFAULT, "64-bit");
}

/* A forced igemm schedule that does not support the problem is an error with the reason, not
 * a silent fallback. */
Test(igemm, forced_unsupported_is_an_error) {
    test_expect_forced_error("igemm_tc:64x64x32_s3", "fwd 2d Ci=16 Co=16 I=8 K=3", "ALLOW_TF32");
    /* 4 stages of 64 f32 channels for a 128x256 tile: 384 KiB, past any GPU's 227 KiB */
    test_expect_forced_error("igemm_tc:128x256x64_s4", "fwd 2d Ci=64 Co=64 I=8 K=3 tf32",
                             "bytes of shared memory per block for dtype=f32");
}

/* ---- the planner's table ----------------------------------------------------------------------
 */

Test(igemm, planner_routes_gemm_shaped_problems) {
    /* the suite's big GEMMs: large tiles on tensor cores */
    test_expect_plan("fwd 2d Ci=512 Co=512 I=64 K=3 P0=1 P1=1 bf16 x=cl w=cl",
                     "igemm_tc:128x128x32_s3");
    test_expect_plan("fwd 3d Ci=128 Co=128 I=5,64,64 K=3 P0=2,1,1 P1=0,1,1 bf16 x=cl w=cl",
                     "igemm_tc:128x128x32_s3");
    test_expect_plan("fwd 2d N=16 Ci=256 Co=256 I=28 K=1 f16 x=cl w=cl", "igemm_tc:128x256x64_s4");
    test_expect_plan("fwd 2d N=32 Ci=256 Co=128 I=28 K=1 bf16 x=cl w=cl", "igemm_tc:256x128x64_s4");
    test_expect_plan("fwd 2d N=8 Ci=256 Co=256 I=14 K=1 f16 x=cl w=cl", "igemm_tc:64x64x32_s3");
    /* few output channels or a small image: smaller tiles */
    test_expect_plan("fwd 2d N=4 Ci=64 Co=64 I=56 K=3 P0=1 P1=1 f16 x=cl w=cl",
                     "igemm_tc:64x64x32_s3");
    test_expect_plan("fwd 2d Ci=64 Co=32 I=8 K=3 P0=1 P1=1 f16 x=cl w=cl", "igemm_tc:32x64x32_s2");
    /* f32: TF32 only when allowed, else exact FMA on CUDA cores */
    test_expect_plan("fwd 2d Ci=512 Co=512 I=64 K=3 P0=1 P1=1 x=cl w=cl tf32",
                     "igemm_tc:128x128x32_s3");
    test_expect_plan("fwd 2d Ci=512 Co=512 I=64 K=3 P0=1 P1=1 x=cl w=cl",
                     "igemm_simt:128x128x8_s3");
    test_expect_plan("fwd 2d Ci=16 Co=16 I=8 K=3 P0=1 P1=1", "igemm_simt:32x32x8_s2");
    /* not GEMM-shaped (depthwise, 3-channel stem output) or transposed: not igemm */
    static const char *const others[] = {
        "fwd 2d N=8 Ci=256 Co=256 g=256 I=56 K=3 P0=1 P1=1 f16 x=cl w=cl",
        "fwd 2d Ci=64 Co=3 I=64 K=3 P0=1 P1=1 bf16 x=cl w=cl",
        "tr 2d Ci=256 Co=256 I=32 K=4 S=2 P0=1 P1=1 bf16 x=cl w=cl",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
        char plan[128];
        test_plan_of(others[i], plan, sizeof plan);
        cr_expect(strncmp(plan, "igemm_", 6) != 0, "plan for '%s' is %s", others[i], plan);
    }
}
