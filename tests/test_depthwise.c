/* The depthwise, grouped and tiled_direct schedules beyond the forced-schedule suite's feature
 * table: the planner's routing (issue 7's shapes), supports()' reasons, and problems aimed at
 * one code path each (staging weights a few rows at a time, 16-byte vector paths and their
 * misaligned fallback, stream runs and strides, multi-tile planes, several input-channel
 * stages), checked against the CPU reference in every thread order of the active device. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "convnd.h"
#include "emu.h"
#include "test_conv_case.h"
#include "test_orders.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

TestSuite(depthwise, .timeout = 600);

/* ---- routing ---------------------------------------------------------------------------- */

typedef struct route_case {
    const char *problem, *plan; /* plan: "schedule:config", or "schedule:" for a prefix */
} route_case;

static const route_case routes[] = {
    /* bench/suites/suite.csv's depthwise, causal, grouped and stem shapes */
    {"fwd 2d N=32 Ci=96 Co=96 g=96 I=112 K=3 S=2 P0=1 P1=1 bf16 x=cl w=cl", "depthwise:cl_r4"},
    {"fwd 2d N=32 Ci=576 Co=576 g=576 I=14 K=3 P0=1 P1=1 bf16 x=cl w=cl", "depthwise:cl_r4"},
    {"fwd 2d N=32 Ci=96 Co=96 g=96 I=56 K=7 P0=3 P1=3 bf16 x=cl w=cl", "depthwise:cl_r8"},
    {"fwd 2d N=16 Ci=128 Co=128 g=128 I=56 K=31 P0=15 P1=15 bf16 x=cl w=cl", "depthwise:cl_r8"},
    {"fwd 1d Ci=12288 Co=12288 g=12288 I=16384 K=4 P0=3 P1=0 bf16 x=cl w=cl", "depthwise:stream4"},
    {"fwd 1d N=4 Ci=1024 Co=1024 g=1024 I=4096 K=8 P0=7 P1=0 f16 x=cl w=cl", "depthwise:stream8"},
    {"fwd 1d N=4 Ci=1024 Co=1024 g=1024 I=4096 K=3 D=2 P0=4 P1=0 x=cl w=cl", "depthwise:stream8"},
    {"fwd 2d N=8 Ci=64 Co=64 g=64 I=56 K=3 P0=1 P1=1", "depthwise:cf_tile"},
    {"fwd 1d N=4 Ci=1024 Co=1024 g=1024 I=4096 K=4 P0=3 P1=0 bf16", "depthwise:cf_tile"},
    {"fwd 2d N=8 Ci=64 Co=128 g=64 I=28 K=3 P0=1 P1=1 x=cl w=cl", "depthwise:cl_r4"},
    {"fwd 2d N=8 Ci=128 Co=128 g=32 I=28 K=3 P0=1 P1=1 f16 x=cl w=cl", "grouped:r4_co4"},
    {"fwd 2d N=8 Ci=64 Co=512 g=32 I=28 K=3 P0=1 P1=1 bf16 x=cl w=cl", "grouped:r2_co16"},
    {"fwd 2d N=32 Ci=512 Co=512 g=32 I=14 K=3 P0=1 P1=1 x=cl w=cl", "grouped:r2_co16"},
    {"fwd 2d N=32 Ci=256 Co=256 g=32 I=14 K=3 P0=1 P1=1 x=cl w=cl", "grouped:r4_co8"},
    {"fwd 2d N=32 Ci=512 Co=512 g=32 I=14 K=3 P0=1 P1=1 bf16 x=cl w=cl", "igemm_tc:"},
    {"fwd 2d N=32 Ci=3 Co=64 I=224 K=7 S=2 P0=3 P1=3 bf16 x=cl w=cl", "tiled_direct:co16"},
    {"fwd 2d N=8 Ci=8 Co=16 I=64 K=3 P0=1 P1=1 f16 x=cl w=cl", "tiled_direct:co8"},
    {"fwd 3d N=2 Ci=2 Co=4 I=16 K=3 P0=1 P1=1", "tiled_direct:co4"},
    {"fwd 2d N=32 Ci=64 Co=64 I=56 K=3 P0=1 P1=1 bf16 x=cl w=cl", "igemm_tc:"},
};

Test(depthwise, planner_routes_issue7_shapes) {
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; ++i)
        test_expect_plan(routes[i].problem, routes[i].plan);
}

/* ---- supports() and its reasons --------------------------------------------------------- */

typedef struct refusal_case {
    const char *spec, *problem, *reason_part;
} refusal_case;

static const refusal_case refusals[] = {
    {"depthwise", "fwd 2d Ci=3 Co=6 I=8 K=3", "not depthwise: groups=1, C_in=3"},
    {"depthwise", "fwd 2d Ci=8 Co=8 g=4 I=8 K=3", "groups=4, C_in=8"},
    {"depthwise", "tr 2d Ci=4 Co=4 g=4 I=5 K=3 S=2", "forward only"},
    {"depthwise:stream4", "fwd 2d Ci=4 Co=4 g=4 I=8 K=3", "kernel 1x3 in the leading dims"},
    {"depthwise:stream4", "fwd 1d Ci=4 Co=4 g=4 I=30 K=5 P0=4 P1=0",
     "= 5 along W exceeds the "
     "register window of 4"},
    {"depthwise:stream8", "fwd 1d Ci=4 Co=4 g=4 I=30 K=3 D=4 P0=8 P1=0", "= 9 along W"},
    {"depthwise:cf_tile", "fwd 2d Ci=2 Co=2 g=2 I=400 K=31 D=12 P0=180 P1=180",
     "dilation 12x12, kernel 31x31) exceeds 98304 bytes"},
    {"grouped", "fwd 2d Ci=3 Co=6 I=8 K=3", "groups=1: not a grouped convolution"},
    {"grouped", "tr 2d Ci=4 Co=4 g=2 I=5 K=3", "forward only"},
    {"grouped:r2_co16", "fwd 1d Ci=2048 Co=32 g=2 I=3000 K=2000",
     "C_in/groups=1024 with kernel "
     "width 2000"},
    {"tiled_direct", "tr 2d Ci=3 Co=4 I=5 K=3", "forward only"},
    {"tiled_direct", "fwd 1d Ci=1 Co=1 I=3000000 K=2000000", "exceed 98304 bytes"},
};

Test(depthwise, supports_refuses_with_reasons) {
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
        const refusal_case *r = &refusals[i];
        const convnd_problem p = test_parse_valid(r->problem);
        char reason[512] = "";
        cr_expect(!convnd_schedule_supports(r->spec, &p, reason, sizeof reason), "%s supports %s",
                  r->spec, r->problem);
        cr_expect(strstr(reason, r->reason_part) != NULL, "%s on %s: reason '%s' lacks '%s'",
                  r->spec, r->problem, reason, r->reason_part);
    }
}

/* ---- targeted paths ------------------------------------------------------------------------ */

typedef struct path_case {
    const char *spec, *problem, *why;
    int z_in_place;
} path_case;

static const path_case paths[] = {
    /* cl: a 31x31 kernel over many channels, weights staged a few rows at a time */
    {"depthwise:cl_r4", "fwd 2d N=2 Ci=64 Co=64 g=64 I=5,6 K=31 P0=15 P1=15 x=cl w=cl",
     "f32 vectors, 6 of 31 rows per stage", 0},
    {"depthwise:cl_r8", "fwd 2d Ci=256 Co=256 g=256 I=3,4 K=31 P0=15 P1=15 bf16 x=cl w=cl bias",
     "bf16 vectors, one row per stage", 0},
    /* cl: vectors with stride and dilation (no sliding), with an in-place residual */
    {"depthwise:cl_r4",
     "fwd 2d N=2 Ci=24 Co=24 g=24 I=9,12 K=3 S=2 D=2 P0=2 P1=1 f16 x=cl w=cl bias z beta=-0.5",
     "f16 vectors, dilation 2", 1},
    {"depthwise:cl_r8",
     "fwd 2d N=2 Ci=24 Co=24 g=24 I=9,12 K=3 S=2 D=2 P0=2 P1=1 f16 x=cl w=cl bias z beta=-0.5",
     "f16 vectors, dilation 2", 1},
    /* cl: sliding windows over three stride phases, W tail */
    {"depthwise:cl_r8", "fwd 2d Ci=8 Co=8 g=8 I=7,20 K=5 S=3 P0=2 P1=2 x=cl w=cl",
     "stride-3 phases", 0},
    {"depthwise:cl_r4", "fwd 1d N=2 Ci=3 Co=9 g=3 I=30 K=5 P0=2 P1=2 bf16 x=cl w=cl",
     "multiplier 3, scalar lanes", 0},
    {"depthwise:cl_r8", "fwd 1d N=2 Ci=3 Co=9 g=3 I=30 K=5 P0=2 P1=2 bf16 x=cl w=cl",
     "multiplier 3, scalar lanes", 0},
    /* stream: many runs per row, strides and dilation, 2-D with a 1xK kernel, channels-first */
    {"depthwise:stream4", "fwd 1d N=2 Ci=8 Co=8 g=8 I=300 K=4 P0=3 P1=0 x=cl w=cl bias act=silu",
     "75 runs per row", 0},
    {"depthwise:stream8", "fwd 1d N=2 Ci=8 Co=8 g=8 I=300 K=4 P0=3 P1=0 x=cl w=cl bias act=silu",
     "window 8 for a kernel of 4", 0},
    {"depthwise:stream8", "fwd 1d Ci=16 Co=16 g=16 I=100 K=3 S=2 D=3 P0=6 P1=-3 bf16 x=cl w=cl",
     "stride 2, dilation 3", 0},
    {"depthwise:stream8", "fwd 1d Ci=5 Co=15 g=5 I=64 K=8 S=3 P0=0 P1=4 f16 x=cl w=cl z beta=1",
     "multiplier 3, stride 3 > window shift", 1},
    {"depthwise:stream4", "fwd 2d N=2 Ci=8 Co=8 g=8 I=3,40 K=1,4 S=2,1 P0=0,3 P1=1,0 f16 x=cl w=cl",
     "2-D with a 1x4 kernel, padded rows", 0},
    {"depthwise:stream4", "fwd 1d Ci=6 Co=6 g=6 I=50 K=3 P0=2 P1=0", "channels-first", 0},
    /* cf_tile: several tiles per plane, 1-D, 3-D */
    {"depthwise:cf_tile", "fwd 2d Ci=2 Co=4 g=2 I=40,70 K=3 P0=1 P1=1 bias", "2x3 tiles", 0},
    {"depthwise:cf_tile", "fwd 1d N=2 Ci=3 Co=3 g=3 I=600 K=4 P0=3 P1=0", "1-D, 3 tiles of 256", 0},
    {"depthwise:cf_tile", "fwd 3d Ci=2 Co=2 g=2 I=5,9,9 K=3 S=2 P0=1 P1=1 f16", "3-D slabs", 0},
    /* grouped: weights staged row by row, 16-byte input vectors */
    {"grouped:r2_co16", "fwd 2d Ci=64 Co=64 g=4 I=5,6 K=7 P0=3 P1=3 x=cl w=cl", "one row per stage",
     0},
    {"grouped:r4_co8", "fwd 2d Ci=64 Co=64 g=4 I=5,6 K=7 P0=3 P1=3 x=cl w=cl", "one row per stage",
     0},
    {"grouped:r4_co4",
     "fwd 2d N=2 Ci=64 Co=32 g=4 I=6,7 K=3 S=1,2 P0=1 P1=1 bf16 x=cl w=cl bias act=gelu",
     "bf16 input vectors", 0},
    {"grouped:r2_co16",
     "fwd 2d N=2 Ci=64 Co=32 g=4 I=6,7 K=3 S=1,2 P0=1 P1=1 bf16 x=cl w=cl bias act=gelu",
     "bf16 input vectors", 0},
    /* tiled: two input-channel stages, groups in 3-D, several tiles of a stem */
    {"tiled_direct:co4", "fwd 2d Ci=12 Co=10 I=9,10 K=3 P0=1 P1=1 x=cl w=cl", "2 channel stages",
     0},
    {"tiled_direct:co16", "fwd 2d Ci=12 Co=10 I=9,10 K=3 P0=1 P1=1 x=cl w=cl", "2 channel stages",
     0},
    {"tiled_direct:co8", "fwd 3d N=2 Ci=4 Co=6 g=2 I=4,5,6 K=3 S=1,2,1 P0=1 P1=1 bf16",
     "groups, 3-D", 0},
    {"tiled_direct:co16", "fwd 2d Ci=3 Co=64 I=40,36 K=7 S=2 P0=3 P1=3 bf16 x=cl w=cl bias",
     "stem, 4 channel blocks x several tiles", 0},
};

Test(depthwise, targeted_paths_match_reference) {
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i) {
        const path_case *t = &paths[i];
        const convnd_problem p = test_parse_valid(t->problem);
        test_run_supported_case(t->spec, &p, t->why, t->z_in_place, 0x7d00 + i);
    }
}

/* Kernel sizes 1 to 33 along W (1-D, and 2-D square for the tiled paths), on every depthwise
 * configuration that supports them: stream4/stream8 take K up to their window, cl_* stage large
 * kernels through shared memory a few rows at a time, cf_tile holds the input tile plus halo.
 * Odd channel count and multiplier 2 keep the scalar lanes and channel tails in play; padding
 * alternates between "same", causal and a crop (negative P1), layouts between channels-last and
 * channels-first. */
Test(depthwise, kernel_sizes_1_to_33) {
    static const char *const specs[] = {"depthwise:cl_r4", "depthwise:cl_r8", "depthwise:cf_tile",
                                        "depthwise:stream4", "depthwise:stream8"};
    int ran[sizeof specs / sizeof specs[0]] = {0};
    for (int k = 1; k <= 33; ++k)
        for (int dims = 1; dims <= 2; ++dims) {
            char text[256];
            const int same = (k - 1) / 2;
            const char *layout = (k + dims) % 4 < 2 ? "x=cl w=cl" : "x=cf w=cf";
            if (dims == 1)
                snprintf(text, sizeof text,
                         "fwd 1d N=2 Ci=5 Co=10 g=5 I=%d K=%d P0=%d P1=%d %s %s bias", k + 9, k,
                         k % 3 == 1 ? k - 1 : same, k % 3 == 1 ? 0 : same - (k % 3 == 2),
                         k % 2 ? "bf16" : "f16", layout);
            else if (k % 2 == 1 || k == 2)
                snprintf(text, sizeof text, "fwd 2d Ci=3 Co=3 g=3 I=%d,%d K=%d S=%d P0=%d P1=%d %s",
                         k / 3 + 3, k / 2 + 4, k, 1 + k % 2, same, same, layout);
            else
                continue;
            const convnd_problem p = test_parse_valid(text);
            for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
                char reason[512];
                if (!convnd_schedule_supports(specs[i], &p, reason, sizeof reason)) continue;
                test_conv_case c;
                char err[512], why[32];
                cr_assert(
                    test_case_init(&c, &p, 0, 0x6b00 + (uint64_t)(k * 4 + dims), err, sizeof err),
                    "%s", err);
                snprintf(why, sizeof why, "K=%d, %d-D", k, dims);
                test_run_all_orders(&c, specs[i], why);
                test_case_free(&c);
                ++ran[i];
            }
        }
    /* the tiled paths take every size; the streams exactly the ones their window holds */
    static const int expected_min[] = {50, 50, 50, 4, 8};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        cr_log_info("%s: %d kernel-size problems", specs[i], ran[i]);
        cr_expect(ran[i] >= expected_min[i], "%s ran only %d of the kernel sizes", specs[i],
                  ran[i]);
    }
}

/* The fixed-width kernels of depthwise_cl (CONVND_DW_CL_WIDTHS: stride 1, dilation 1, 16-byte
 * vectors): every width x both run lengths x every dtype, with a W that leaves a tail run,
 * padding on both sides of W (causal for the even widths, "same" with a crop for the odd ones)
 * so the ring of inputs reads zeros at either end, and the 64-bit index variant (a stride of
 * 2^30 over a size-1 leading dim forces 64-bit indices on small tensors). */
Test(depthwise, fixed_widths_match_reference) {
    static const int widths[] = {2, 3, 4, 5, 7, 9, 31};
    static const char *const specs[] = {"depthwise:cl_r4", "depthwise:cl_r8"};
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    int ran = 0;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i)
        for (size_t s = 0; s < 2; ++s)
            for (int wide = 0; wide < 2; ++wide)
                for (size_t d = 0; d < 3; ++d) {
                    const int k = widths[i];
                    const int p0 = k % 2 ? k / 2 : k - 1, p1 = k % 2 ? k / 2 - 1 : 0;
                    const char *dtype = dtypes[d];
                    char text[256], why[64];
                    if (wide)
                        snprintf(text, sizeof text,
                                 "fwd 2d N=2 Ci=16 Co=16 g=16 I=1,%d K=1,%d S=1073741824,1 P0=0,%d "
                                 "P1=0,%d %s x=cl w=cl bias z beta=0.5",
                                 k + 13, k, p0, p1, dtype);
                    else
                        snprintf(
                            text, sizeof text,
                            "fwd 2d N=2 Ci=16 Co=16 g=16 I=4,%d K=3,%d P0=1,%d P1=0,%d %s x=cl "
                            "w=cl bias",
                            k + 13, k, p0, p1, dtype);
                    const convnd_problem p = test_parse_valid(text);
                    snprintf(why, sizeof why, "width %d, %s, %s indices", k, dtype,
                             wide ? "64-bit" : "32-bit");
                    test_run_supported_case(specs[s], &p, why, wide, 0x5e00 + (uint64_t)ran);
                    ++ran;
                }
    cr_expect_eq(ran, 84);
}

/* The generic row of depthwise_cl with 16-byte vectors (KW = 0: any stride, dilation or width
 * that has no fixed-width kernel; the 8-output 16-bit configuration runs it in two halves of 4
 * channels): stride phases (stride 2 and 3, dilation 1), dilation 2 (stride 1 and 2), and a
 * 31-wide kernel at stride 2, on every dtype x both run lengths x 32- and 64-bit indices, with a
 * W that leaves a tail run, padding on both sides (a crop on the right for some) and 24 channels
 * (3 whole bf16 vectors, 6 f32 ones: the block's other units have no channels). */
Test(depthwise, generic_vector_rows_match_reference) {
    static const struct {
        int k, s, d, p0, p1, w;
    } rows[] = {{3, 2, 1, 1, 1, 37},
                {5, 3, 1, 2, 0, 41},
                {3, 1, 2, 2, 1, 29},
                {4, 2, 2, 3, -1, 40},
                {31, 2, 1, 15, 14, 70}};
    static const char *const specs[] = {"depthwise:cl_r4", "depthwise:cl_r8"};
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    int ran = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        for (size_t s = 0; s < 2; ++s)
            for (int wide = 0; wide < 2; ++wide)
                for (size_t d = 0; d < 3; ++d) {
                    char text[256], why[96];
                    const int k = rows[i].k, k0 = wide || k == 31 ? 1 : 3;
                    snprintf(text, sizeof text,
                             "fwd 2d N=2 Ci=24 Co=24 g=24 I=%d,%d K=%d,%d S=%d,%d D=1,%d P0=%d,%d "
                             "P1=%d,%d %s x=cl w=cl bias%s",
                             wide ? 1 : 4, rows[i].w, k0, k, wide ? 1073741824 : 1, rows[i].s,
                             rows[i].d, k0 / 2, rows[i].p0, k0 / 2 - (k0 > 1), rows[i].p1,
                             dtypes[d], wide ? " z beta=0.5" : "");
                    const convnd_problem p = test_parse_valid(text);
                    snprintf(why, sizeof why, "width %d stride %d dilation %d, %s, %s indices", k,
                             rows[i].s, rows[i].d, dtypes[d], wide ? "64-bit" : "32-bit");
                    test_run_supported_case(specs[s], &p, why, wide, 0x5f00 + (uint64_t)ran);
                    ++ran;
                }
    cr_expect_eq(ran, 60);
}

/* depthwise_cl's element-wise kernels (no 16-byte vectors: channel counts that are not whole
 * vectors, multipliers, channels-first x, misaligned pointers), which the 8-output 16-bit
 * configuration runs in two halves of 4 channels: the last vector's lanes end inside the first
 * half (11 channels: 3 of 8), inside the second (13: 5 of 8), or after one lane (multiplier 3,
 * 9 channels); stride phases, dilation and a 31-wide row; each with 32- and 64-bit indices, and
 * x one element off 16 bytes. */
Test(depthwise, cl_element_wise_rows_match_reference) {
    static const struct {
        const char *problem, *why;
    } cases[] = {
        {"fwd 2d N=2 Ci=13 Co=13 g=13 I=%d,21 K=%d,5 S=%s,2 P0=%d,2 P1=%d,1 %s x=cl w=cl bias "
         "z beta=0.5",
         "13 channels, stride 2"},
        {"fwd 2d N=2 Ci=11 Co=11 g=11 I=%d,19 K=%d,3 S=%s,1 D=1,2 P0=%d,2 P1=%d,2 %s x=cl w=cl "
         "bias",
         "11 channels, dilation 2"},
        {"fwd 2d N=2 Ci=3 Co=9 g=3 I=%d,40 K=%d,31 S=%s,1 P0=%d,15 P1=%d,14 %s x=cl w=cl bias "
         "act=silu",
         "multiplier 3, width 31"},
        {"fwd 2d N=2 Ci=16 Co=16 g=16 I=%d,17 K=%d,4 S=%s,1 P0=%d,3 P1=%d,0 %s x=cf w=cf bias",
         "16 channels, channels-first"},
        {"fwd 2d N=2 Ci=16 Co=16 g=16 I=%d,23 K=%d,3 S=%s,3 P0=%d,1 P1=%d,1 %s x=cl w=cl bias",
         "16 channels, x one element off"},
    };
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int wide = 0; wide < 2; ++wide)
            for (size_t d = 0; d < 3; ++d) {
                char text[256], err[512], why[128];
                const int k0 = wide ? 1 : 3;
                snprintf(text, sizeof text, cases[i].problem, wide ? 1 : 4, k0,
                         wide ? "1073741824" : "1", k0 / 2, k0 / 2, dtypes[d]);
                const convnd_problem p = test_parse_valid(text);
                snprintf(why, sizeof why, "%s, %s, %s indices", cases[i].why, dtypes[d],
                         wide ? "64-bit" : "32-bit");
                char reason[512];
                cr_assert(convnd_schedule_supports("depthwise:cl_r8", &p, reason, sizeof reason),
                          "%s: %s", why, reason);
                test_conv_case c;
                cr_assert(test_case_init(&c, &p, 0, 0x5c00 + (uint64_t)ran, err, sizeof err),
                          "%s: %s", why, err);
                void *dx = c.dx, *bx = NULL;
                if (strstr(cases[i].why, "one element off")) {
                    c.dx = test_upload_misaligned(c.hx, c.x_span, c.esize, &bx);
                    cr_assert(c.dx, "device upload failed");
                }
                test_run_all_orders(&c, "depthwise:cl_r8", why);
                c.dx = dx;
                convnd_free(bx);
                test_case_free(&c);
                ++ran;
            }
    cr_expect_eq(ran, 30);
}

/* One 16-byte store per output channel vector: depthwise_cl's vector kernels store each output's
 * VEC channels with one 16-byte store, the 8-output 16-bit kernels too (their two halves of 4
 * channels are combined first: in registers, or for width 31 in shared memory), with 32- and
 * 64-bit indices; the element-wise kernels (here a multiplier of 2) make none. On the emulated
 * device the run's 16-byte global stores (convnd_emu_global_vector_stores16) must equal y's
 * channel vectors (W leaves a tail run of 4, whose missing outputs are not stored), and y must
 * match the reference, in every thread order. */
Test(depthwise, cl_vector_kernels_store_16_bytes_per_output) {
    static const struct {
        const char *problem, *why;
        int wide, vectors;
    } cases[] = {
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=2,45 K=1,31 P0=0,15 P1=0,14 %s x=cl w=cl bias", "width 31",
         0, 1},
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=1,45 K=1,31 S=1073741824,1 P0=0,15 P1=0,14 %s x=cl w=cl "
         "bias z beta=0.5",
         "width 31", 1, 1},
        {"fwd 2d Ci=256 Co=256 g=256 I=3,5 K=31 P0=15 P1=15 %s x=cl w=cl bias",
         "31x31, one kernel row per stage", 0, 1},
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=3,13 K=3 P0=1 P1=1 %s x=cl w=cl bias z beta=1", "width 3",
         0, 1},
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=1,13 K=1,3 S=1073741824,1 P0=0,1 P1=0,1 %s x=cl w=cl bias",
         "width 3", 1, 1},
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=3,23 K=3 S=2 P0=1 P1=1 %s x=cl w=cl bias",
         "generic row, stride 2", 0, 1},
        {"fwd 2d N=2 Ci=24 Co=24 g=24 I=1,23 K=1,3 S=1073741824,2 P0=0,1 P1=0,1 %s x=cl w=cl bias",
         "generic row, stride 2", 1, 1},
        {"fwd 2d N=2 Ci=12 Co=24 g=12 I=3,13 K=3,31 P0=1,15 P1=1,15 %s x=cl w=cl bias",
         "multiplier 2, element-wise", 0, 0},
        {"fwd 2d N=2 Ci=12 Co=24 g=12 I=1,13 K=1,3 S=1073741824,1 P0=0,1 P1=0,1 %s x=cl w=cl bias",
         "multiplier 2, element-wise", 1, 0},
    };
    static const char *const specs[] = {"depthwise:cl_r4", "depthwise:cl_r8"};
    static const char *const dtypes[] = {"bf16", "f16", "f32"};
    const int emulated = convnd_active_device() == CONVND_DEVICE_EMULATED;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (size_t s = 0; s < 2; ++s)
            for (size_t d = 0; d < 3; ++d) {
                char text[256], err[512];
                snprintf(text, sizeof text, cases[i].problem, dtypes[d]);
                const convnd_problem p = test_parse_valid(text);
                test_conv_case c;
                cr_assert(test_case_init(&c, &p, 0, 0x5d00 + (uint64_t)(i * 8 + s * 3 + d), err,
                                         sizeof err),
                          "%s", err);
                cr_assert_eq(c.yd.numel % 24, 0);
                const uint64_t vec = d == 2 ? 4 : 8;
                const uint64_t expect = cases[i].vectors ? (uint64_t)c.yd.numel / vec : 0;
                for (int order = 0; order < test_order_count(); ++order) {
                    test_order_apply(order);
                    const uint64_t before = emulated ? convnd_emu_global_vector_stores16() : 0;
                    const convnd_status st = test_case_run(&c, specs[s]);
                    const uint64_t wide =
                        emulated ? convnd_emu_global_vector_stores16() - before : 0;
                    char msg[1024] = "";
                    const int ok = st == CONVND_OK && test_case_check(&c, msg, sizeof msg);
                    cr_expect(ok, "%s, %s, %s indices (order %s): %s%s\n  problem: %s", specs[s],
                              cases[i].why, cases[i].wide ? "64-bit" : "32-bit",
                              test_order_name(order),
                              st == CONVND_OK ? "" : convnd_status_string(st),
                              st == CONVND_OK ? msg : convnd_last_error(), text);
                    if (emulated)
                        cr_expect(wide == expect,
                                  "%s, %s, %s indices (order %s): %llu 16-byte stores, expected "
                                  "%llu\n  problem: %s",
                                  specs[s], cases[i].why, cases[i].wide ? "64-bit" : "32-bit",
                                  test_order_name(order), (unsigned long long)wide,
                                  (unsigned long long)expect, text);
                }
                test_case_free(&c);
            }
}

/* The 16-byte paths must notice pointers that are not 16-byte aligned and go element by
 * element (a vector access there faults on a GPU; the emulated device reports it). Each of x, y
 * and z alone is one element off, then all three: misaligning them together would hide a check
 * that forgot one of them. */
Test(depthwise, misaligned_pointers_take_the_element_path) {
    static const char *const specs[] = {"depthwise:cl_r4", "depthwise:cl_r8", "depthwise:stream4",
                                        "grouped:r4_co8"};
    static const char *const problems[] = {
        "fwd 2d N=2 Ci=16 Co=16 g=16 I=6,7 K=3 P0=1 P1=1 f16 x=cl w=cl bias z beta=1",
        "fwd 2d N=2 Ci=16 Co=16 g=16 I=6,7 K=3 P0=1 P1=1 f16 x=cl w=cl bias z beta=1",
        "fwd 1d N=2 Ci=16 Co=16 g=16 I=40 K=4 P0=3 P1=0 bf16 x=cl w=cl bias z beta=1",
        "fwd 2d N=2 Ci=32 Co=16 g=2 I=6,7 K=3 P0=1 P1=1 bf16 x=cl w=cl bias"};
    static const char *const which[] = {"x one element off 16 bytes", "y one element off",
                                        "z one element off", "x, y and z one element off"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i)
        for (int m = 0; m < 4; ++m) {
            const convnd_problem p = test_parse_valid(problems[i]);
            if (m == 2 && !p.has_z) continue;
            test_conv_case c;
            char err[512];
            cr_assert(test_case_init(&c, &p, 0, 0x3a11 + i, err, sizeof err), "%s", err);
            void *dx = c.dx, *dy = c.dy, *dz = c.dz, *bx = NULL, *by = NULL, *bz = NULL;
            if (m == 0 || m == 3) c.dx = test_upload_misaligned(c.hx, c.xd.numel, c.esize, &bx);
            if (m == 1 || m == 3) c.dy = test_upload_misaligned(NULL, c.yd.numel, c.esize, &by);
            if (p.has_z && (m == 2 || m == 3))
                c.dz = test_upload_misaligned(c.hz, c.yd.numel, c.esize, &bz);
            cr_assert(c.dx && c.dy && (!p.has_z || c.dz), "device upload failed");
            test_run_all_orders(&c, specs[i], which[m]);
            c.dx = dx, c.dy = dy, c.dz = dz;
            convnd_free(bx);
            convnd_free(by);
            convnd_free(bz);
            test_case_free(&c);
        }
}
