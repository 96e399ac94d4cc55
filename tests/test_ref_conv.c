/* The reference on cases small enough to work out by hand: each mode's index rule, negative
 * padding, the transposed extension, groups, the epilogue, z aliasing y, the magnitude, the
 * single final rounding, and layout invariance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "convnd.h"
#include "convnd_ref.h"
#include "test_random.h"

/* A 1-D f32 problem with N = 1, C_in = C_out = 1. */
static convnd_problem conv1d(convnd_mode mode, int64_t I, int64_t K, int64_t S, int64_t D,
                             int64_t P0, int64_t P1) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.mode = mode;
    p.C_in = p.C_out = 1;
    p.input[0] = I;
    p.kernel[0] = K;
    p.stride[0] = S;
    p.dilation[0] = D;
    p.pad_before[0] = P0;
    p.pad_after[0] = P1;
    return p;
}

/* Runs the reference and compares y with want[n] exactly (small integers are exact in f32). */
static void expect_y(const convnd_problem *p, const float *x, const float *w, const float *bias,
                     const float *z, const float *want, int64_t n, const char *what) {
    convnd_tensor_desc yd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_Y, &yd), CONVND_OK, "%s: %s", what,
                 convnd_last_error());
    cr_assert_eq(yd.numel, n, "%s: %lld outputs, expected %lld", what, (long long)yd.numel,
                 (long long)n);
    float y[64];
    memset(y, 0xff, sizeof y);
    cr_assert_eq(convnd_ref_conv(p, x, w, bias, z, y), CONVND_OK, "%s", what);
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(y[i], want[i], "%s: y[%lld] = %g, expected %g", what, (long long)i, y[i],
                     want[i]);
}

Test(ref_conv, forward_index_rule) {
    const float x[4] = {1, 2, 3, 4}, w[2] = {1, 10};
    convnd_problem p = conv1d(CONVND_FORWARD, 4, 2, 1, 1, 0, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){21, 32, 43}, 3, "plain");
    p = conv1d(CONVND_FORWARD, 4, 2, 1, 1, 1, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){10, 21, 32, 43}, 4, "P0=1");
    p = conv1d(CONVND_FORWARD, 4, 2, 1, 1, -1, 0); /* crops x[0] */
    expect_y(&p, x, w, NULL, NULL, (const float[]){32, 43}, 2, "P0=-1");
    p = conv1d(CONVND_FORWARD, 4, 2, 1, 1, -1, 1); /* crops x[0], one zero after */
    expect_y(&p, x, w, NULL, NULL, (const float[]){32, 43, 4}, 3, "P0=-1 P1=1");
    p = conv1d(CONVND_FORWARD, 4, 2, 2, 2, 0, 0); /* E=3: floor(1/2)+1 = 1 output */
    expect_y(&p, x, w, NULL, NULL, (const float[]){31}, 1, "S=2 D=2");
    p = conv1d(CONVND_FORWARD, 4, 2, 2, 1, 1, 1); /* taps at -1..0, 1..2, 3..4 */
    expect_y(&p, x, w, NULL, NULL, (const float[]){10, 32, 4}, 3, "S=2 P=1");
}

Test(ref_conv, transposed_index_rule) {
    const float x[2] = {1, 2}, w[2] = {1, 10};
    /* full result, o = 2i + k: [x0w0, x0w1, x1w0, x1w1] */
    convnd_problem p = conv1d(CONVND_TRANSPOSED, 2, 2, 2, 1, 0, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){1, 10, 2, 20}, 4, "S=2");
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 2, 1, 1, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){10, 2, 20}, 3, "P0=1 crops");
    /* P1 = -1 extends past the full result: that position gets only the epilogue */
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 2, 1, 1, -1);
    p.has_bias = 1;
    expect_y(&p, x, w, (const float[]){0.5f}, NULL, (const float[]){10.5f, 2.5f, 20.5f, 0.5f}, 4,
             "P1=-1 extends");
    /* overlapping taps add: S=1, o = i + 2k */
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 1, 2, 0, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){1, 2, 10, 20}, 4, "S=1 D=2");
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 1, 1, 0, 0);
    expect_y(&p, x, w, NULL, NULL, (const float[]){1, 12, 20}, 3, "S=1 overlap");
    /* stride gaps: S=3 leaves o=2 and o=5 untouched */
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 3, 1, 0, -1);
    expect_y(&p, x, w, NULL, NULL, (const float[]){1, 10, 0, 2, 20, 0}, 6, "S=3 gaps");
    p = conv1d(CONVND_TRANSPOSED, 2, 2, 1, 1, -1, -2); /* extension on both sides */
    expect_y(&p, x, w, NULL, NULL, (const float[]){0, 1, 12, 20, 0, 0}, 6, "P0=-1 P1=-2");
}

Test(ref_conv, groups_both_modes) {
    /* C_in = C_out = 4, groups 2, K=1: forward w [4][2]; transposed w [4][2] as [ci][co mod 2] */
    convnd_problem p = conv1d(CONVND_FORWARD, 1, 1, 1, 1, 0, 0);
    p.C_in = p.C_out = 4;
    p.groups = 2;
    const float x[4] = {1, 2, 3, 4};
    const float w[8] = {1, 10, 100, 1000, 2, 20, 200, 2000};
    /* co 0,1 read ci 0,1; co 2,3 read ci 2,3 */
    expect_y(&p, x, w, NULL, NULL, (const float[]){21, 2100, 86, 8600}, 4, "forward groups");
    p.mode = CONVND_TRANSPOSED;
    /* y[co] = sum over ci in group(co) of x[ci] * w[ci][co mod 2] */
    expect_y(&p, x, w, NULL, NULL, (const float[]){201, 2010, 6 + 800, 60 + 8000}, 4,
             "transposed groups");
}

Test(ref_conv, epilogue_and_activations) {
    const float x[2] = {1, 2}, w[1] = {1};
    convnd_problem p = conv1d(CONVND_FORWARD, 2, 1, 1, 1, 0, 0);
    p.has_bias = p.has_z = 1;
    p.alpha = 2;
    p.beta = -1;
    const float bias[1] = {1}, z[2] = {10, 1};
    /* 2*acc + 1 - z = [-7, 4] */
    expect_y(&p, x, w, bias, z, (const float[]){-7, 4}, 2, "alpha bias beta z");
    p.activation = CONVND_ACT_RELU;
    expect_y(&p, x, w, bias, z, (const float[]){0, 4}, 2, "relu");
    cr_expect_eq(convnd_ref_activate(CONVND_ACT_SILU, 1.0), 1.0 / (1.0 + exp(-1.0)));
    cr_expect_float_eq(convnd_ref_activate(CONVND_ACT_GELU, 1.0), 0.8413447460685429, 1e-15);
    cr_expect_float_eq(convnd_ref_activate(CONVND_ACT_GELU, -3.0), -0.00404969409489031, 1e-15);
    cr_expect_eq(convnd_ref_activate(CONVND_ACT_RELU, -0.5), 0.0);
}

Test(ref_conv, z_may_alias_y) {
    const float x[3] = {1, 2, 3}, w[1] = {2};
    convnd_problem p = conv1d(CONVND_FORWARD, 3, 1, 1, 1, 0, 0);
    p.has_z = 1;
    p.beta = 0.5f;
    float y[3] = {4, 8, 16};
    cr_assert_eq(convnd_ref_conv(&p, x, w, NULL, y, y), CONVND_OK);
    cr_expect(y[0] == 4 && y[1] == 8 && y[2] == 14, "in place: %g %g %g", y[0], y[1], y[2]);
}

Test(ref_conv, magnitude) {
    const float x[2] = {1, -2}, w[2] = {1, 1}, bias[1] = {-0.5f}, z[1] = {3};
    convnd_problem p = conv1d(CONVND_FORWARD, 2, 2, 1, 1, 0, 0);
    p.has_bias = p.has_z = 1;
    p.alpha = -2;
    p.beta = 0.25f;
    double exact, mag;
    cr_assert_eq(convnd_ref_conv_f64(&p, x, w, bias, z, &exact, &mag), CONVND_OK);
    cr_expect_eq(exact, -2.0 * -1.0 - 0.5 + 0.75);
    cr_expect_eq(mag, 2.0 * 3.0 + 0.5 + 0.75);
}

/* 1 + 2^-8 + 2^-30 is just above a bf16 midpoint: rounded once it goes up; rounded through f32
 * first (which drops 2^-30) it would tie to even and go down. */
Test(ref_conv, output_rounded_once) {
    convnd_problem p = conv1d(CONVND_FORWARD, 3, 3, 1, 1, 0, 0);
    p.dtype = CONVND_BF16;
    uint16_t x[3] = {convnd_ref_f64_to_bf16(1.0), convnd_ref_f64_to_bf16(0x1p-8),
                     convnd_ref_f64_to_bf16(0x1p-30)};
    uint16_t w[3], y[1] = {0xffff};
    for (int i = 0; i < 3; i++)
        w[i] = convnd_ref_f64_to_bf16(1.0);
    cr_assert_eq(convnd_ref_conv(&p, x, w, NULL, NULL, y), CONVND_OK);
    cr_expect_eq(convnd_ref_bf16_to_f64(y[0]), 1.0 + 0x1p-7, "got %a",
                 convnd_ref_bf16_to_f64(y[0]));
}

Test(ref_conv, invalid_problem_is_refused_without_writing) {
    convnd_problem p = conv1d(CONVND_FORWARD, 2, 4, 1, 1, 0, 0); /* O < 1 */
    float x[2] = {1, 2}, w[4] = {1, 1, 1, 1}, y[4] = {7, 7, 7, 7};
    cr_expect_neq(convnd_ref_conv(&p, x, w, NULL, NULL, y), CONVND_OK);
    cr_expect(y[0] == 7 && y[1] == 7);
    p = conv1d(CONVND_FORWARD, 2, 1, 1, 1, 0, 0);
    p.has_bias = 1;
    cr_expect_eq(convnd_ref_conv(&p, x, w, NULL, NULL, y), CONVND_ERR_NULL_POINTER);
}

/* Copies a tensor between two layouts of the same problem tensor, element by element over its
 * logical indices (rank up to 5, unused dims of size 1). */
static void relayout(const convnd_tensor_desc *from, const float *src, const convnd_tensor_desc *to,
                     float *dst) {
    int64_t shape[5] = {1, 1, 1, 1, 1}, fs[5] = {0}, ts[5] = {0};
    for (int r = 0; r < from->rank; r++) {
        shape[r] = from->shape[r];
        fs[r] = from->strides[r];
        ts[r] = to->strides[r];
    }
    for (int64_t a = 0; a < shape[0]; a++)
        for (int64_t b = 0; b < shape[1]; b++)
            for (int64_t c = 0; c < shape[2]; c++)
                for (int64_t d = 0; d < shape[3]; d++)
                    for (int64_t e = 0; e < shape[4]; e++)
                        dst[a * ts[0] + b * ts[1] + c * ts[2] + d * ts[3] + e * ts[4]] =
                            src[a * fs[0] + b * fs[1] + c * fs[2] + d * fs[3] + e * fs[4]];
}

/* The same logical problem in channels-first and channels-last gives the same logical y. */
Test(ref_conv, layout_invariance) {
    test_rng r = test_rng_seed(7);
    for (int iter = 0; iter < 60; iter++) {
        convnd_problem cf;
        const int32_t dims = (int32_t)(1 + iter % 3);
        convnd_problem_init(&cf, dims);
        cf.mode = (iter / 3) % 2 ? CONVND_TRANSPOSED : CONVND_FORWARD;
        cf.N = 2;
        cf.groups = test_rng_int(&r, 1, 2);
        cf.C_in = cf.groups * test_rng_int(&r, 1, 3);
        cf.C_out = cf.groups * test_rng_int(&r, 1, 3);
        for (int t = 0; t < dims; t++) {
            cf.input[t] = test_rng_int(&r, 3, 5);
            cf.kernel[t] = test_rng_int(&r, 1, 3);
            cf.stride[t] = test_rng_int(&r, 1, 2);
            cf.pad_before[t] = test_rng_int(&r, 0, 1);
        }
        cf.y_layout = CONVND_CHANNELS_FIRST;
        convnd_problem cl = cf;
        cl.x_layout = cl.w_layout = cl.y_layout = CONVND_CHANNELS_LAST;
        convnd_tensor_desc xf, wf, yf, xc, wc, yc;
        cr_assert_eq(convnd_tensor_describe(&cf, CONVND_X, &xf), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&cf, CONVND_W, &wf), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&cf, CONVND_Y, &yf), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&cl, CONVND_X, &xc), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&cl, CONVND_W, &wc), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&cl, CONVND_Y, &yc), CONVND_OK);
        float *x = malloc(sizeof(float) * (size_t)xf.numel * 2);
        float *w = malloc(sizeof(float) * (size_t)wf.numel * 2);
        float *y = malloc(sizeof(float) * (size_t)yf.numel * 3);
        cr_assert(x && w && y);
        test_fill_random(CONVND_F32, x, xf.numel, &r);
        test_fill_random(CONVND_F32, w, wf.numel, &r);
        relayout(&xf, x, &xc, x + xf.numel);
        relayout(&wf, w, &wc, w + wf.numel);
        cr_assert_eq(convnd_ref_conv(&cf, x, w, NULL, NULL, y), CONVND_OK);
        cr_assert_eq(convnd_ref_conv(&cl, x + xf.numel, w + wf.numel, NULL, NULL, y + yf.numel),
                     CONVND_OK);
        relayout(&yc, y + yf.numel, &yf, y + 2 * yf.numel);
        cr_expect_arr_eq(y, y + 2 * yf.numel, sizeof(float) * (size_t)yf.numel,
                         "iteration %d (%d-D %s): channels-last differs", iter, dims,
                         cf.mode == CONVND_FORWARD ? "forward" : "transposed");
        free(x);
        free(w);
        free(y);
    }
}
