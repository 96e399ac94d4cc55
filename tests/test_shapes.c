/* Shapes, strides and byte counts of x, w, bias, y, z for both modes and layouts (SPEC sections
 * 1 and 6), the kernels' padded-to-3-D view, and the FLOP / byte counts of the benchmark. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "convnd_bind.h"
#include "problem_internal.h"
#include "test_bind_expect.h"

static void expect_desc(const convnd_problem *p, convnd_tensor which, int32_t rank,
                        const int64_t *shape, const int64_t *strides, convnd_layout layout) {
    convnd_tensor_desc d;
    memset(&d, 0x77, sizeof d);
    expect_ok(convnd_tensor_describe(p, which, &d));
    cr_assert_eq(d.rank, rank, "tensor %d: rank %d, want %d", (int)which, (int)d.rank, (int)rank);
    int64_t numel = 1;
    for (int32_t i = 0; i < rank; ++i) {
        cr_assert_eq(d.shape[i], shape[i], "tensor %d: shape[%d] = %lld, want %lld", (int)which,
                     (int)i, (long long)d.shape[i], (long long)shape[i]);
        cr_assert_eq(d.strides[i], strides[i], "tensor %d: strides[%d] = %lld, want %lld",
                     (int)which, (int)i, (long long)d.strides[i], (long long)strides[i]);
        numel *= shape[i];
    }
    cr_assert_eq(d.numel, numel, "tensor %d: numel %lld, want %lld", (int)which, (long long)d.numel,
                 (long long)numel);
    cr_assert_eq(d.bytes, numel * convnd_dtype_bytes(p->dtype));
    cr_assert_eq(d.layout, layout, "tensor %d: layout %d, want %d", (int)which, (int)d.layout,
                 (int)layout);
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* N=2, C_in=6 -> C_out=4, groups=2, 5x7 input, 3x2 kernel, stride 2x1, pad 1/0 and 0/1. */
static convnd_problem problem2d(convnd_mode mode) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.mode = mode;
    p.N = 2;
    p.C_in = 6;
    p.C_out = 4;
    p.groups = 2;
    p.input[0] = 5;
    p.input[1] = 7;
    p.kernel[0] = 3;
    p.kernel[1] = 2;
    p.stride[0] = 2;
    p.pad_before[0] = 1;
    p.pad_after[1] = 1;
    return p;
}

Test(shapes, forward_2d_channels_first) {
    convnd_problem p = problem2d(CONVND_FORWARD);
    /* O = floor((5+1-3)/2)+1 = 2, floor((7+1-2)/1)+1 = 7 */
    expect_desc(&p, CONVND_X, 4, SHAPE(2, 6, 5, 7), SHAPE(210, 35, 7, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_W, 4, SHAPE(4, 3, 3, 2), SHAPE(18, 6, 2, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_BIAS, 1, SHAPE(4), SHAPE(1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_Y, 4, SHAPE(2, 4, 2, 7), SHAPE(56, 14, 7, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_Z, 4, SHAPE(2, 4, 2, 7), SHAPE(56, 14, 7, 1), CONVND_CHANNELS_FIRST);
}

Test(shapes, forward_2d_channels_last) {
    convnd_problem p = problem2d(CONVND_FORWARD);
    p.x_layout = p.w_layout = CONVND_CHANNELS_LAST;
    p.dtype = CONVND_BF16;
    /* NHWC: c innermost, then w, h, n */
    expect_desc(&p, CONVND_X, 4, SHAPE(2, 6, 5, 7), SHAPE(210, 1, 42, 6), CONVND_CHANNELS_LAST);
    /* weight [C_out][K...][C_in/g] */
    expect_desc(&p, CONVND_W, 4, SHAPE(4, 3, 3, 2), SHAPE(18, 1, 6, 3), CONVND_CHANNELS_LAST);
    /* y AUTO follows ATen: channels-last when x or w is */
    expect_desc(&p, CONVND_Y, 4, SHAPE(2, 4, 2, 7), SHAPE(56, 1, 28, 4), CONVND_CHANNELS_LAST);
    expect_desc(&p, CONVND_Z, 4, SHAPE(2, 4, 2, 7), SHAPE(56, 1, 28, 4), CONVND_CHANNELS_LAST);
    /* an explicit y layout wins */
    p.y_layout = CONVND_CHANNELS_FIRST;
    expect_desc(&p, CONVND_Y, 4, SHAPE(2, 4, 2, 7), SHAPE(56, 14, 7, 1), CONVND_CHANNELS_FIRST);
}

Test(shapes, transposed_2d_both_layouts) {
    convnd_problem p = problem2d(CONVND_TRANSPOSED);
    /* O = (5-1)*2 + 3 - 1 - 0 = 10, (7-1)*1 + 2 - 0 - 1 = 7; weight [C_in][C_out/g][K...] */
    expect_desc(&p, CONVND_W, 4, SHAPE(6, 2, 3, 2), SHAPE(12, 6, 2, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_Y, 4, SHAPE(2, 4, 10, 7), SHAPE(280, 70, 7, 1), CONVND_CHANNELS_FIRST);
    p.w_layout = CONVND_CHANNELS_LAST; /* [C_in][K...][C_out/g]; y AUTO -> channels-last */
    expect_desc(&p, CONVND_W, 4, SHAPE(6, 2, 3, 2), SHAPE(12, 1, 4, 2), CONVND_CHANNELS_LAST);
    expect_desc(&p, CONVND_X, 4, SHAPE(2, 6, 5, 7), SHAPE(210, 35, 7, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_Y, 4, SHAPE(2, 4, 10, 7), SHAPE(280, 1, 28, 4), CONVND_CHANNELS_LAST);
}

Test(shapes, one_d_and_three_d) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.N = 2;
    p.C_in = 3;
    p.C_out = 5;
    p.input[0] = 7;
    p.kernel[0] = 3;
    p.pad_before[0] = 2;               /* causal: O = 7 */
    p.x_layout = CONVND_CHANNELS_LAST; /* NLC */
    expect_desc(&p, CONVND_X, 3, SHAPE(2, 3, 7), SHAPE(21, 1, 3), CONVND_CHANNELS_LAST);
    expect_desc(&p, CONVND_W, 3, SHAPE(5, 3, 3), SHAPE(9, 3, 1), CONVND_CHANNELS_FIRST);
    expect_desc(&p, CONVND_Y, 3, SHAPE(2, 5, 7), SHAPE(35, 1, 5), CONVND_CHANNELS_LAST);

    convnd_problem q;
    convnd_problem_init(&q, 3);
    q.C_in = 2;
    q.C_out = 2;
    q.groups = 2;
    q.input[0] = 3;
    q.input[1] = 4;
    q.input[2] = 5;
    q.kernel[0] = q.kernel[1] = q.kernel[2] = 1;
    q.x_layout = q.w_layout = CONVND_CHANNELS_LAST;
    q.dtype = CONVND_F16;
    expect_desc(&q, CONVND_X, 5, SHAPE(1, 2, 3, 4, 5), SHAPE(120, 1, 40, 10, 2),
                CONVND_CHANNELS_LAST);
    expect_desc(&q, CONVND_W, 5, SHAPE(2, 1, 1, 1, 1), SHAPE(1, 1, 1, 1, 1), CONVND_CHANNELS_LAST);
    q.x_layout = q.w_layout = CONVND_CHANNELS_FIRST;
    expect_desc(&q, CONVND_Y, 5, SHAPE(1, 2, 3, 4, 5), SHAPE(120, 60, 20, 5, 1),
                CONVND_CHANNELS_FIRST);
}

Test(shapes, negative_and_degenerate_padding) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.C_in = p.C_out = 1;
    p.input[0] = 9;
    p.input[1] = 9;
    p.kernel[0] = p.kernel[1] = 3;
    p.pad_before[0] = -2;
    p.pad_after[0] = -1; /* crop to 6 rows: O = 4 */
    p.pad_before[1] = -3;
    p.pad_after[1] = -3; /* crop to 3 columns: O = 1 */
    expect_desc(&p, CONVND_Y, 4, SHAPE(1, 1, 4, 1), SHAPE(4, 4, 1, 1), CONVND_CHANNELS_FIRST);
    p.mode = CONVND_TRANSPOSED; /* (9-1) + 3 + 3 = 14 and (9-1) + 3 + 6 = 17: extends */
    expect_desc(&p, CONVND_Y, 4, SHAPE(1, 1, 14, 17), SHAPE(238, 238, 17, 1),
                CONVND_CHANNELS_FIRST);
}

Test(shapes, zero_size_tensors_keep_pytorch_strides) {
    convnd_problem p = problem2d(CONVND_FORWARD);
    p.N = 0;
    /* numel 0, strides computed with size-0 dims counted as 1 (as torch.empty) */
    expect_desc(&p, CONVND_X, 4, SHAPE(0, 6, 5, 7), SHAPE(210, 35, 7, 1), CONVND_CHANNELS_FIRST);
    p.N = 2;
    p.C_in = p.C_out = 0;
    p.x_layout = CONVND_CHANNELS_LAST;
    expect_desc(&p, CONVND_X, 4, SHAPE(2, 0, 5, 7), SHAPE(35, 1, 7, 1), CONVND_CHANNELS_LAST);
    expect_desc(&p, CONVND_W, 4, SHAPE(0, 0, 3, 2), SHAPE(6, 6, 2, 1), CONVND_CHANNELS_FIRST);
}

Test(shapes, describe_rejects_bad_input) {
    convnd_problem p = problem2d(CONVND_FORWARD);
    convnd_tensor_desc d;
    expect_status(convnd_tensor_describe(&p, (convnd_tensor)11, &d), CONVND_ERR_INVALID_ARGUMENT,
                  "tensor=11");
    expect_status(convnd_tensor_describe(&p, CONVND_X, NULL), CONVND_ERR_NULL_POINTER, "NULL");
    p.groups = 4;
    expect_status(convnd_tensor_describe(&p, CONVND_X, &d), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=4 does not divide C_in=6");
}

Test(shapes, default_output_layout) {
    const convnd_layout cf = CONVND_CHANNELS_FIRST, cl = CONVND_CHANNELS_LAST;
    cr_assert_eq(convnd_default_output_layout(cf, cf), cf);
    cr_assert_eq(convnd_default_output_layout(cl, cf), cl);
    cr_assert_eq(convnd_default_output_layout(cf, cl), cl);
    cr_assert_eq(convnd_default_output_layout(cl, cl), cl);
}

Test(params, one_d_padded_to_three) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.N = 2;
    p.C_in = 6;
    p.C_out = 9;
    p.groups = 3;
    p.input[0] = 11;
    p.kernel[0] = 4;
    p.stride[0] = 2;
    p.dilation[0] = 3;
    p.pad_before[0] = 9;
    p.pad_after[0] = -1; /* O = floor((11 + 8 - 10) / 2) + 1 = 5 */
    p.x_layout = CONVND_CHANNELS_LAST;
    p.has_bias = 1;
    p.activation = CONVND_ACT_GELU;
    p.math = CONVND_MATH_ALLOW_TF32;
    convnd_conv_params q;
    expect_ok(convnd_params_from_problem(&p, &q));
    cr_assert_eq(q.mode, CONVND_FORWARD);
    cr_assert_eq(q.activation, CONVND_ACT_GELU);
    cr_assert_eq(q.has_bias, 1);
    cr_assert_eq(q.allow_tf32, 1);
    cr_assert(q.N == 2 && q.C_in == 6 && q.C_out == 9 && q.groups == 3);
    cr_assert(q.cin_g == 2 && q.cout_g == 3);
    const int64_t in[3] = {1, 1, 11}, out[3] = {1, 1, 5}, k[3] = {1, 1, 4}, s[3] = {1, 1, 2},
                  d[3] = {1, 1, 3}, p0[3] = {0, 0, 9}, p1[3] = {0, 0, -1};
    for (int j = 0; j < 3; ++j) {
        cr_assert_eq(q.in[j], in[j], "in[%d]", j);
        cr_assert_eq(q.out[j], out[j], "out[%d]", j);
        cr_assert_eq(q.k[j], k[j], "k[%d]", j);
        cr_assert_eq(q.s[j], s[j], "s[%d]", j);
        cr_assert_eq(q.d[j], d[j], "d[%d]", j);
        cr_assert_eq(q.p0[j], p0[j], "p0[%d]", j);
        cr_assert_eq(q.p1[j], p1[j], "p1[%d]", j);
    }
    /* x channels-last [2][11][6]: n 66, c 1, i2 6 (the padded i0, i1 have size 1) */
    cr_assert(q.xs[0] == 66 && q.xs[1] == 1 && q.xs[4] == 6);
    /* w channels-first [9][2][4] */
    cr_assert(q.ws[0] == 8 && q.ws[1] == 4 && q.ws[4] == 1);
    /* y AUTO -> channels-last [2][5][9] */
    cr_assert(q.ys[0] == 45 && q.ys[1] == 1 && q.ys[4] == 9);
    cr_assert(q.x_cl == 1 && q.w_cl == 0 && q.y_cl == 1);
    cr_assert(q.x_numel == 132 && q.w_numel == 72 && q.y_numel == 90);
    cr_assert_eq(q.index64, 0);
}

Test(params, strides_address_every_element_once) {
    /* every layout, both modes: offsets over logical indices form a permutation of 0..numel-1 */
    for (int mode = 0; mode < 2; ++mode)
        for (int layout = 0; layout < 2; ++layout) {
            convnd_problem p;
            convnd_problem_init(&p, 3);
            p.mode = (convnd_mode)mode;
            p.N = 2;
            p.C_in = 4;
            p.C_out = 6;
            p.groups = 2;
            p.input[0] = 2;
            p.input[1] = 3;
            p.input[2] = 4;
            p.kernel[0] = 1;
            p.kernel[1] = 2;
            p.kernel[2] = 3;
            p.pad_before[2] = 1;
            p.x_layout = p.w_layout = (convnd_layout)layout;
            convnd_conv_params q;
            expect_ok(convnd_params_from_problem(&p, &q));
            const int64_t wdims[5] = {mode ? 4 : 6, mode ? 3 : 2, 1, 2, 3};
            unsigned char seen[72] = {0};
            cr_assert_eq(q.w_numel, 72);
            for (int64_t a = 0; a < wdims[0]; ++a)
                for (int64_t b = 0; b < wdims[1]; ++b)
                    for (int64_t c = 0; c < 1; ++c)
                        for (int64_t e = 0; e < 2; ++e)
                            for (int64_t f = 0; f < 3; ++f) {
                                const int64_t off = a * q.ws[0] + b * q.ws[1] + c * q.ws[2] +
                                                    e * q.ws[3] + f * q.ws[4];
                                cr_assert(off >= 0 && off < 72 && !seen[off],
                                          "mode %d layout %d: offset %lld", mode, layout,
                                          (long long)off);
                                seen[off] = 1;
                            }
        }
}

Test(params, transposed_index64_and_tf32_only_for_f32) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.mode = CONVND_TRANSPOSED;
    p.C_in = 4;
    p.C_out = 2;
    p.input[0] = 1 << 16;
    p.input[1] = 1 << 12; /* x: 4 * 2^28 = 2^30 elements: 64-bit indices (core/conv_params.c) */
    p.kernel[0] = p.kernel[1] = 1;
    p.dtype = CONVND_BF16;
    p.math = CONVND_MATH_ALLOW_TF32;
    convnd_conv_params q;
    expect_ok(convnd_params_from_problem(&p, &q));
    cr_assert_eq(q.mode, CONVND_TRANSPOSED);
    cr_assert_eq(q.index64, 1);
    cr_assert_eq(q.allow_tf32, 0);
    cr_assert(q.in[0] == 1 && q.in[1] == 1 << 16 && q.in[2] == 1 << 12);
    cr_assert(q.ws[0] == 2 && q.ws[1] == 1); /* [C_in=4][C_out/g=2][1][1] */
    p.input[1] = (1 << 12) - 1;
    expect_ok(convnd_params_from_problem(&p, &q));
    cr_assert_eq(q.index64, 0);
    p.groups = 3;
    expect_status(convnd_params_from_problem(&p, &q), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=3 does not divide C_in=4");
}

/* Rows of /work/shared/bench/suite.csv; FLOPs and bytes per its README. */
Test(metrics, suite_rows) {
    double flops, bytes;
    convnd_problem p;
    /* resnet50_3x3_56: forward 32x64->64, 56x56, 3x3, pad 1, bf16 */
    convnd_problem_init(&p, 2);
    p.N = 32;
    p.C_in = p.C_out = 64;
    p.input[0] = p.input[1] = 56;
    p.kernel[0] = p.kernel[1] = 3;
    p.pad_before[0] = p.pad_before[1] = p.pad_after[0] = p.pad_after[1] = 1;
    p.dtype = CONVND_BF16;
    expect_ok(convnd_flops(&p, &flops));
    expect_ok(convnd_min_bytes(&p, &bytes));
    cr_assert_eq(flops, 2.0 * 32 * 64 * 56 * 56 * 64 * 9);              /* 14.8 GFLOP */
    cr_assert_eq(bytes, 2.0 * (2.0 * 32 * 64 * 56 * 56 + 64 * 64 * 9)); /* x, y, w */
    p.has_bias = 1;
    p.has_z = 1;
    expect_ok(convnd_min_bytes(&p, &bytes));
    cr_assert_eq(bytes, 2.0 * (3.0 * 32 * 64 * 56 * 56 + 64 * 64 * 9 + 64));

    /* vae_convT_k3s2: transposed 512->256, 128x128, 3x3, stride 2, pad 1/0 -> 256x256 */
    convnd_problem_init(&p, 2);
    p.mode = CONVND_TRANSPOSED;
    p.C_in = 512;
    p.C_out = 256;
    p.input[0] = p.input[1] = 128;
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 2;
    p.pad_before[0] = p.pad_before[1] = 1;
    p.dtype = CONVND_BF16;
    expect_ok(convnd_flops(&p, &flops));
    expect_ok(convnd_min_bytes(&p, &bytes));
    cr_assert_eq(flops, 2.0 * 512 * 128 * 128 * 256 * 9);
    cr_assert_eq(bytes, 2.0 * (512.0 * 128 * 128 + 512 * 256 * 9 + 256.0 * 256 * 256));

    /* causal_dw_conv1d: depthwise 12288 channels, 16384 long, K=4, pad 3/0 */
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = p.groups = 12288;
    p.input[0] = 16384;
    p.kernel[0] = 4;
    p.pad_before[0] = 3;
    p.dtype = CONVND_F32;
    expect_ok(convnd_flops(&p, &flops));
    expect_ok(convnd_min_bytes(&p, &bytes));
    cr_assert_eq(flops, 2.0 * 12288 * 16384 * 1 * 4);
    cr_assert_eq(bytes, 4.0 * (2.0 * 12288 * 16384 + 12288 * 4));
}

Test(metrics, rejects_invalid) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    double v;
    expect_status(convnd_flops(&p, &v), CONVND_ERR_INVALID_ARGUMENT, "input[0]=0");
    expect_status(convnd_min_bytes(&p, &v), CONVND_ERR_INVALID_ARGUMENT, "input[0]=0");
    expect_status(convnd_flops(&p, NULL), CONVND_ERR_NULL_POINTER, "NULL");
}

Test(format, problem_string) {
    convnd_problem p = problem2d(CONVND_TRANSPOSED);
    p.dtype = CONVND_BF16;
    p.x_layout = CONVND_CHANNELS_LAST;
    p.has_bias = 1;
    p.activation = CONVND_ACT_SILU;
    char buf[512];
    const int n = convnd_problem_string(&p, buf, sizeof buf);
    cr_assert_eq((size_t)n, strlen(buf));
    cr_assert_str_eq(buf, "transposed 2-D N=2 C_in=6 C_out=4 groups=2 input=[5x7] kernel=[3x2] "
                          "stride=[2x1] dilation=[1x1] pad_before=[1x0] pad_after=[0x1] bf16 "
                          "x=channels-last w=channels-first y=auto bias=1 z=0 alpha=1 beta=0 "
                          "act=silu");
    /* truncation still reports the full length, like snprintf */
    char small[16];
    cr_assert_eq(convnd_problem_string(&p, small, sizeof small), n);
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert(strncmp(small, buf, sizeof small - 1) == 0);
    cr_assert_eq(convnd_problem_string(&p, NULL, 0), n);
}
