/* The benchmark's figures: FLOP and byte counts of suite rows against hand-computed values
 * (bench/suites/suite.csv, counting as /work/shared/bench/README.md says: FLOPs = 2 * multiply-
 * adds, bytes = x, w and y once each), and the metrics derived from a row's time. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "report.h"
#include "suite.h"

TestSuite(bench_counts, .timeout = 60);

static bench_problem suite_row(const char *name) {
    bench_problem *list = NULL, found;
    int n = 0;
    char err[1024] = "";
    cr_assert(
        bench_load_suite(CONVND_BENCH_SOURCE_DIR "/suites/suite.csv", &list, &n, err, sizeof err),
        "%s", err);
    int i = 0;
    while (i < n && strcmp(list[i].name, name) != 0)
        ++i;
    cr_assert_lt(i, n, "no suite row named %s", name);
    found = list[i];
    free(list);
    return found;
}

static void expect_counts(const char *name, double flops, double bytes) {
    const bench_problem bp = suite_row(name);
    double f = 0.0, b = 0.0;
    cr_assert_eq(convnd_flops(&bp.p, &f), CONVND_OK, "%s: %s", name, convnd_last_error());
    cr_assert_eq(convnd_min_bytes(&bp.p, &b), CONVND_OK, "%s: %s", name, convnd_last_error());
    cr_assert_eq(f, flops, "%s: FLOPs %.17g, expected %.17g", name, f, flops);
    cr_assert_eq(b, bytes, "%s: bytes %.17g, expected %.17g", name, b, bytes);
}

Test(bench_counts, resnet_3x3_same_padding) {
    /* 32x64x56x56 -> 32x64x56x56, 3x3: 2 * N * C_out * O^2 * C_in * K^2; bf16 */
    expect_counts("resnet50_3x3_56", 2.0 * 32 * 64 * (56 * 56) * 64 * 9,
                  2.0 * (32.0 * 64 * 56 * 56 + 64 * 64 * 9 + 32.0 * 64 * 56 * 56));
}

Test(bench_counts, strided_asymmetric_padding) {
    /* 240x416, 3x3 s2, pads 0 before / 1 after: O = (240+1-3)/2+1 = 120, (416+1-3)/2+1 = 208 */
    expect_counts("wan_down_asym", 2.0 * 4 * 192 * (120 * 208) * 192 * 9,
                  2.0 * (4.0 * 192 * 240 * 416 + 192 * 192 * 9 + 4.0 * 192 * 120 * 208));
}

Test(bench_counts, pointwise_stride_2) {
    /* 56x56 1x1 s2: O = 28x28 */
    expect_counts("resnet50_1x1_s2", 2.0 * 32 * 512 * (28 * 28) * 256,
                  2.0 * (32.0 * 256 * 56 * 56 + 512 * 256 + 32.0 * 512 * 28 * 28));
}

Test(bench_counts, depthwise_causal_1d) {
    /* 12288 channels, groups 12288 (1 per group), K=4, pads 3/0: O = 16384 */
    expect_counts("causal_dw_conv1d", 2.0 * 1 * 12288 * 16384 * 1 * 4,
                  2.0 * (12288.0 * 16384 + 12288 * 4 + 12288.0 * 16384));
}

Test(bench_counts, grouped) {
    /* 32 groups of 16 channels, 14x14 3x3 same */
    expect_counts("resnext_grouped_g32", 2.0 * 32 * 512 * (14 * 14) * 16 * 9,
                  2.0 * (32.0 * 512 * 14 * 14 + 512 * 16 * 9 + 32.0 * 512 * 14 * 14));
}

Test(bench_counts, causal_3d) {
    /* 21x60x104, 3x3x3, pads (2,1,1)/(0,1,1): O = 21x60x104 */
    expect_counts("wan_conv3d_causal", 2.0 * 384 * (21 * 60 * 104) * 384 * 27,
                  2.0 * (384.0 * 21 * 60 * 104 + 384 * 384 * 27 + 384.0 * 21 * 60 * 104));
}

Test(bench_counts, transposed_counts_the_input_side) {
    /* transposed: 2 * N * C_in * prod(I) * (C_out/g) * prod(K); O = (128-1)*2 + 3 - 1 - 0 = 256 */
    expect_counts("vae_convT_k3s2", 2.0 * 1 * 512 * (128 * 128) * 256 * 9,
                  2.0 * (512.0 * 128 * 128 + 512 * 256 * 9 + 256.0 * 256 * 256));
    /* O = (32-1)*2 + 4 - 1 - 1 = 64 */
    expect_counts("convT_k4s2", 2.0 * 32 * 256 * (32 * 32) * 128 * 16,
                  2.0 * (32.0 * 256 * 32 * 32 + 256 * 128 * 16 + 32.0 * 128 * 64 * 64));
}

Test(bench_counts, f32_counts_four_bytes) {
    expect_counts("resnet50_3x3_14_f32", 2.0 * 32 * 256 * (14 * 14) * 256 * 9,
                  4.0 * (32.0 * 256 * 14 * 14 + 256 * 256 * 9 + 32.0 * 256 * 14 * 14));
}

/* ---- derived metrics ------------------------------------------------------------------------ */

static bench_row timed_row(const char *series, int is_peer, double ms) {
    bench_row r;
    bench_row_init(&r);
    snprintf(r.series, sizeof r.series, "%s", series);
    snprintf(r.candidate, sizeof r.candidate, "%s", series);
    r.is_peer = is_peer;
    r.dtype = CONVND_BF16;
    r.flops = 2e12;
    r.bytes = 1e9;
    r.median_ms = ms;
    return r;
}

Test(bench_counts, metrics_and_ratios) {
    bench_row rows[5] = {timed_row("direct", 0, 4.0), timed_row("igemm", 0, 1.0),
                         timed_row("cuDNN", 1, 2.0), timed_row("pad + conv", 1, 8.0),
                         timed_row("failed", 0, NAN)};
    rows[4].status = BENCH_FAILED;
    bench_config cfg = {.baseline = "cuDNN"};
    cfg.ceilings.measured = 1;
    cfg.ceilings.copy_gbps = 4000.0;
    cfg.ceilings.gemm_bf16_tflops = 800.0;
    cfg.ceilings.gemm_f32_tflops = 50.0;
    bench_finish_rows(rows, 5, &cfg);
    /* igemm: 2e12 FLOPs in 1 ms = 2000 TFLOP/s; 1e9 bytes in 1 ms = 1000 GB/s */
    cr_assert_float_eq(rows[1].tflops, 2000.0, 1e-9);
    cr_assert_float_eq(rows[1].gbps, 1000.0, 1e-9);
    cr_assert_float_eq(rows[1].pct_compute, 250.0, 1e-9);
    cr_assert_float_eq(rows[1].pct_bandwidth, 25.0, 1e-9);
    /* the best peer is cuDNN at 2 ms: igemm is 2x faster, direct 2x slower, pad + conv 4x */
    cr_assert_float_eq(rows[1].vs_best_peer, 2.0, 1e-12);
    cr_assert_float_eq(rows[0].vs_best_peer, 0.5, 1e-12);
    cr_assert_float_eq(rows[2].vs_best_peer, 1.0, 1e-12);
    cr_assert_float_eq(rows[3].vs_best_peer, 0.25, 1e-12);
    cr_assert_float_eq(rows[1].vs_baseline, 2.0, 1e-12);
    /* a FAILED row gets no figures */
    cr_assert(isnan(rows[4].tflops) && isnan(rows[4].vs_best_peer));

    /* f32 rows are measured against the f32 GEMM; no ceilings: no percentages */
    bench_row f = timed_row("direct", 0, 1.0);
    f.dtype = CONVND_F32;
    f.flops = 1e10; /* 10 TFLOP/s */
    bench_finish_rows(&f, 1, &cfg);
    cr_assert_float_eq(f.pct_compute, 20.0, 1e-9);
    bench_config none = {.baseline = "cuDNN"};
    bench_row e = timed_row("direct", 0, 1.0);
    bench_finish_rows(&e, 1, &none);
    cr_assert(isnan(e.pct_compute) && isnan(e.pct_bandwidth) && isnan(e.vs_best_peer));
    cr_assert_float_eq(e.tflops, 2000.0, 1e-9);
}
