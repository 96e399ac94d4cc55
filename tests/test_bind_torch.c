/* PyTorch bindings (SPEC section 7): every row, with numbers checked against PyTorch 2.x on the
 * CPU (output shapes, and "same" == F.pad(floor, ceil) numerically), and ATen's error cases. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "convnd_bind.h"
#include "test_bind_expect.h"

#define SH(...)                                                                                    \
    convnd_shape_of((int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                 \
                    (const int64_t[]){__VA_ARGS__})
#define INTS(...)                                                                                  \
    convnd_ints_of((int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                  \
                   (const int64_t[]){__VA_ARGS__})

static void expect_output(const convnd_problem *p, int dims, const int64_t *want) {
    int64_t O[3];
    expect_ok(convnd_output_size(p, O));
    for (int t = 0; t < dims; ++t)
        cr_assert_eq(O[t], want[t], "O[%d] = %lld, want %lld", t, (long long)O[t],
                     (long long)want[t]);
}
#define expect_out(p, ...)                                                                         \
    expect_output(&(p), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                 \
                  (const int64_t[]){__VA_ARGS__})

/* A problem filled with a pattern, to check that a failing binding leaves it untouched. */
static convnd_problem sentinel(void) {
    convnd_problem p;
    memset(&p, 0xab, sizeof p);
    return p;
}
static void expect_untouched(const convnd_problem *p) {
    const convnd_problem s = sentinel();
    cr_assert(memcmp(p, &s, sizeof s) == 0, "the output problem was written on error");
}

Test(bind_torch, conv2d_int_padding_groups_stride_bias) {
    convnd_problem p;
    const convnd_shape x = SH(2, 4, 9, 9), w = SH(6, 2, 3, 3);
    const convnd_ints s = convnd_ints1(2), pad = convnd_ints2(1, 1);
    expect_ok(convnd_bind_torch_conv(2, &x, &w, 6, &s, &pad, NULL, 2, &p));
    cr_assert_eq(p.mode, CONVND_FORWARD);
    cr_assert(p.N == 2 && p.C_in == 4 && p.C_out == 6 && p.groups == 2 && p.has_bias == 1);
    expect_dims(p, input, 9, 9);
    expect_dims(p, kernel, 3, 3);
    expect_dims(p, stride, 2, 2);
    expect_dims(p, dilation, 1, 1);
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 1, 1);
    expect_out(p, 5, 5); /* torch: [2, 6, 5, 5] */
    /* the rest is convnd_problem_init's defaults */
    cr_assert(p.dtype == CONVND_F32 && p.x_layout == CONVND_CHANNELS_FIRST &&
              p.y_layout == CONVND_LAYOUT_AUTO && p.has_z == 0 && p.alpha == 1.0f);
}

Test(bind_torch, conv1d_unbatched_and_conv3d_per_dim_lists) {
    convnd_problem p;
    const convnd_shape x1 = SH(4, 10), w1 = SH(8, 4, 3);
    const convnd_ints pad1 = INTS(2);
    expect_ok(convnd_bind_torch_conv(1, &x1, &w1, -1, NULL, &pad1, NULL, 1, &p));
    cr_assert(p.N == 1 && p.C_in == 4 && p.C_out == 8 && p.has_bias == 0);
    expect_dims(p, pad_before, 2);
    expect_out(p, 12); /* torch: [8, 12] */

    const convnd_shape x3 = SH(1, 2, 7, 8, 9), w3 = SH(4, 2, 3, 3, 3);
    const convnd_ints s = INTS(1, 2, 3), d = convnd_ints3(2, 1, 1), pad = INTS(0, 1, 2);
    expect_ok(convnd_bind_torch_conv(3, &x3, &w3, -1, &s, &pad, &d, 1, &p));
    expect_dims(p, stride, 1, 2, 3);
    expect_dims(p, dilation, 2, 1, 1);
    expect_dims(p, pad_before, 0, 1, 2);
    expect_dims(p, pad_after, 0, 1, 2);
    expect_out(p, 3, 4, 4); /* torch: [1, 4, 3, 4, 4] */
}

Test(bind_torch, padding_same_even_kernel_and_dilation) {
    convnd_problem p;
    const convnd_shape x = SH(1, 3, 9, 9), w = SH(8, 3, 4, 4);
    expect_ok(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, NULL, CONVND_TORCH_PADDING_SAME,
                                                  NULL, 1, &p));
    /* torch: equals F.pad(x, [1, 2, 1, 2]) then a valid conv */
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 2, 2);
    expect_out(p, 9, 9);

    const convnd_shape x1 = SH(1, 2, 10), w1 = SH(2, 2, 4);
    const convnd_ints d = INTS(3);
    expect_ok(convnd_bind_torch_conv_padding_mode(1, &x1, &w1, -1, NULL, CONVND_TORCH_PADDING_SAME,
                                                  &d, 1, &p));
    expect_dims(p, pad_before, 4); /* D(K-1) = 9: 4 before, 5 after (torch: F.pad [4, 5]) */
    expect_dims(p, pad_after, 5);
    expect_out(p, 10);

    const convnd_ints s1 = INTS(1, 1); /* explicit stride 1 is fine */
    expect_ok(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, &s1, CONVND_TORCH_PADDING_VALID,
                                                  NULL, 1, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 6, 6);
}

Test(bind_torch, padding_same_with_stride_is_an_error) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 2, 3, 3);
    const convnd_ints s = INTS(1, 2);
    expect_status(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, &s, CONVND_TORCH_PADDING_SAME,
                                                      NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "padding='same' is not supported for strided convolutions", "stride=[1, 2]");
    expect_untouched(&p);
    expect_status(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, NULL, (convnd_torch_padding)5,
                                                      NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "padding=5");
}

Test(bind_torch, conv_transpose_output_padding) {
    convnd_problem p;
    const convnd_shape x = SH(1, 4, 5, 5), w = SH(4, 3, 3, 3);
    const convnd_ints s = INTS(2), pad = INTS(1), op = INTS(1);
    expect_ok(convnd_bind_torch_conv_transpose(2, &x, &w, 6, &s, &pad, &op, 2, NULL, &p));
    cr_assert_eq(p.mode, CONVND_TRANSPOSED);
    cr_assert(p.C_in == 4 && p.C_out == 6 && p.groups == 2 && p.has_bias == 1);
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 0, 0); /* padding - output_padding */
    expect_out(p, 10, 10);           /* torch: [1, 6, 10, 10] */

    /* output_padding may reach up to max(stride, dilation) - 1: here dilation 3, stride 1 */
    const convnd_shape x1 = SH(1, 4, 5), w1 = SH(4, 3, 3);
    const convnd_ints op2 = INTS(2), d3 = INTS(3);
    expect_ok(convnd_bind_torch_conv_transpose(1, &x1, &w1, -1, NULL, NULL, &op2, 1, &d3, &p));
    expect_dims(p, pad_before, 0);
    expect_dims(p, pad_after, -2);
    expect_out(p, 13); /* torch: [1, 3, 13] */
}

Test(bind_torch, conv_transpose_output_padding_too_large) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(4, 3, 3, 3);
    const convnd_ints s = INTS(2), op = INTS(2);
    expect_status(convnd_bind_torch_conv_transpose(2, &x, &w, -1, &s, NULL, &op, 2, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "output padding must be smaller than either stride or dilation",
                  "output_padding[0]=2 with stride[0]=2, dilation[0]=1");
    expect_untouched(&p);
    const convnd_ints neg = INTS(-1);
    expect_status(convnd_bind_torch_conv_transpose(2, &x, &w, -1, &s, NULL, &neg, 2, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "negative output_padding is not supported",
                  "output_padding=[-1, -1]");
    expect_untouched(&p);
}

Test(bind_torch, convolution_and__convolution) {
    convnd_problem p;
    /* transposed=False: output_padding is ignored (ATen), here 5 */
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 2, 3, 3);
    const convnd_ints one = INTS(1), zero = INTS(0), five = INTS(5);
    expect_ok(convnd_bind_torch_convolution(&x, &w, -1, &one, &zero, &one, 0, &five, 2, &p));
    cr_assert_eq(p.mode, CONVND_FORWARD);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 6, 6); /* torch: [1, 6, 6, 6] */
    const convnd_ints neg = INTS(-1);
    expect_status(convnd_bind_torch_convolution(&x, &w, -1, &one, &zero, &one, 0, &neg, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "negative output_padding");

    /* transposed 3-D with per-dim lists, groups 3 */
    const convnd_shape x3 = SH(2, 6, 3, 4, 5), w3 = SH(6, 2, 2, 3, 3);
    const convnd_ints s = INTS(2, 1, 3), pad = INTS(1, 0, 2), d = INTS(1, 2, 1), op = INTS(1, 0, 2);
    expect_ok(convnd_bind_torch_convolution(&x3, &w3, 6, &s, &pad, &d, 1, &op, 3, &p));
    cr_assert(p.mode == CONVND_TRANSPOSED && p.C_in == 6 && p.C_out == 6 && p.groups == 3);
    expect_dims(p, pad_before, 1, 0, 2);
    expect_dims(p, pad_after, 0, 0, 0);
    expect_out(p, 5, 8, 13); /* torch: [2, 6, 5, 8, 13] */
    cr_assert_eq(p.math, CONVND_MATH_DEFAULT);

    expect_ok(convnd_bind_torch__convolution(&x3, &w3, 6, &s, &pad, &d, 1, &op, 3, 1, &p));
    cr_assert_eq(p.math, CONVND_MATH_ALLOW_TF32);
    expect_out(p, 5, 8, 13);

    /* convolution takes only batched inputs of the weight's rank */
    const convnd_shape x_unbatched = SH(4, 8, 8);
    expect_status(
        convnd_bind_torch_convolution(&x_unbatched, &w, -1, NULL, NULL, NULL, 0, NULL, 2, &p),
        CONVND_ERR_INVALID_ARGUMENT,
        "Expected 4-dimensional input for 4-dimensional weight [6, 2, 3, 3], but got "
        "3-dimensional input of size [4, 8, 8] instead");
    const convnd_shape w6 = SH(1, 1, 1, 1, 1, 1), x6 = SH(1, 1, 1, 1, 1, 1);
    expect_status(convnd_bind_torch_convolution(&x6, &w6, -1, NULL, NULL, NULL, 0, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "input has rank 6; at most 5");
}

Test(bind_torch, list_broadcasting_and_lengths) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 4, 3, 3);
    const convnd_ints three = INTS(1, 1, 1), empty = {0, {0}};
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, &three, NULL, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "expected stride to be a single integer value or a list of 2 values to match "
                  "the convolution dimensions, but got stride=[1, 1, 1]");
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, &empty, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "dilation=[]");
    const convnd_ints too_long = {9, {1, 1, 1, 1, 1}};
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, &too_long, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "padding has len=9");
    expect_untouched(&p);
}

Test(bind_torch, aten_value_checks) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 2, 3, 3);
    const convnd_ints zero = INTS(0), neg = INTS(-1), s = INTS(1, 0);
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, &neg, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "negative padding is not supported",
                  "padding=[-1, -1]");
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, &s, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "non-positive stride is not supported",
                  "stride=[1, 0]");
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, &zero, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "non-positive dilation", "dilation=[0, 0]");
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, NULL, 0, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "non-positive groups is not supported (groups=0)");
    expect_status(convnd_bind_torch_conv(2, &x, &w, -7, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "bias_len=-7");
    expect_untouched(&p);
}

Test(bind_torch, weight_and_bias_shape_mismatch) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 2, 3, 3);
    expect_status(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, NULL, 3, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "Given groups=3, weight of size [6, 2, 3, 3], expected input[1, 4, 8, 8] to "
                  "have weight[1]*groups = 2*3 channels, but got 4 channels instead");
    const convnd_shape w5 = SH(5, 2, 3, 3);
    expect_status(convnd_bind_torch_conv(2, &x, &w5, -1, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got "
                  "weight of size [5, 2, 3, 3] instead");
    const convnd_shape w1 = SH(1, 4, 3, 3);
    expect_status(convnd_bind_torch_conv(2, &x, &w1, -1, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "expected weight to be at least 2 at dimension 0");
    expect_status(convnd_bind_torch_conv(2, &x, &w, 5, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "Given weight of size [6, 2, 3, 3], expected bias to be 1-dimensional with 6 "
                  "elements, but got bias of size [5] instead");
    /* transposed: input channels must equal weight[0]; the bias has weight[1]*groups */
    const convnd_shape xt = SH(1, 5, 5, 5), wt = SH(4, 3, 3, 3), xt4 = SH(1, 4, 5, 5);
    expect_status(convnd_bind_torch_conv_transpose(2, &xt, &wt, -1, NULL, NULL, NULL, 2, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "Given transposed=1, weight of size [4, 3, 3, 3], expected input[1, 5, 5, 5] to "
                  "have 4 channels, but got 5 channels instead");
    expect_status(convnd_bind_torch_conv_transpose(2, &xt4, &wt, 3, NULL, NULL, NULL, 2, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "expected bias to be 1-dimensional with 6 elements",
                  "bias of size [3]");
    /* a weight of the wrong rank, an input of the wrong rank */
    const convnd_shape w3 = SH(6, 4, 3), x2 = SH(4, 8);
    expect_status(convnd_bind_torch_conv(2, &x, &w3, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "weight of size [6, 4, 3] must have 4 dimensions");
    expect_status(convnd_bind_torch_conv(2, &x2, &w, -1, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                  "size: [4, 8]");
    expect_status(convnd_bind_torch_conv(4, &x, &w, -1, NULL, NULL, NULL, 2, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "dims=4");
    expect_untouched(&p);
}

Test(bind_torch, shapes_null_negative_and_too_small) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 4, 8, 8), w = SH(6, 4, 3, 3);
    expect_status(convnd_bind_torch_conv(2, NULL, &w, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_NULL_POINTER, "input shape is NULL");
    expect_status(convnd_bind_torch_conv(2, &x, NULL, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_NULL_POINTER, "weight shape is NULL");
    const convnd_shape xneg = SH(1, 4, -8, 8);
    expect_status(convnd_bind_torch_conv(2, &xneg, &w, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "input of size [1, 4, -8, 8] has a negative size");
    const convnd_shape rank9 = {9, {1, 1, 1, 1, 1}};
    expect_status(convnd_bind_torch_conv(2, &rank9, &w, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "input has rank 9");
    /* kernel larger than the padded input (torch: "Kernel size can't be greater ...") */
    const convnd_shape small = SH(1, 4, 2, 2);
    expect_status(convnd_bind_torch_conv(2, &small, &w, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "output size O[0]=0 < 1 (input=2, kernel=3");
    /* a spatial size of 0 (torch: "Only zero batch or zero channel inputs are supported") */
    const convnd_shape empty = SH(1, 4, 0, 8);
    const convnd_ints two = INTS(2);
    expect_status(convnd_bind_torch_conv(2, &empty, &w, -1, NULL, &two, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "input[0]=0 must be >= 1");
    cr_assert_eq(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, NULL, 1, NULL),
                 CONVND_ERR_NULL_POINTER);
    expect_untouched(&p);
}

Test(bind_torch, zero_batch_is_valid) {
    convnd_problem p;
    const convnd_shape x = SH(0, 4, 8, 8), w = SH(6, 2, 3, 3);
    expect_ok(convnd_bind_torch_conv(2, &x, &w, -1, NULL, NULL, NULL, 2, &p));
    cr_assert_eq(p.N, 0);
    expect_out(p, 6, 6); /* torch: [0, 6, 6, 6] */
}

Test(bind_torch, overflow_is_rejected) {
    convnd_problem p = sentinel();
    const convnd_shape x = SH(1, 1, 10), w = SH(1, 1, 3);
    const convnd_ints huge = INTS(INT64_MAX / 2);
    expect_status(convnd_bind_torch_conv(1, &x, &w, -1, NULL, &huge, NULL, 1, &p),
                  CONVND_ERR_OVERFLOW, "output size O[0] overflows int64");
    const convnd_ints dmax = INTS(INT64_MAX);
    expect_status(convnd_bind_torch_conv_padding_mode(1, &x, &w, -1, NULL,
                                                      CONVND_TORCH_PADDING_SAME, &dmax, 1, &p),
                  CONVND_ERR_OVERFLOW, "dilation[0]*(kernel[0]-1) overflows",
                  "dilation=9223372036854775807");
    const convnd_shape wt = SH(1, INT64_MAX, 3);
    expect_status(convnd_bind_torch_conv_transpose(1, &x, &wt, -1, NULL, NULL, NULL, 2, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "at least 2 at dimension 0"); /* 1 channel, 2 groups */
    const convnd_shape x2 = SH(1, 2, 10), wt2 = SH(2, INT64_MAX, 3);
    expect_status(convnd_bind_torch_conv_transpose(1, &x2, &wt2, -1, NULL, NULL, NULL, 2, NULL, &p),
                  CONVND_ERR_OVERFLOW, "weight[1]*groups");
    const convnd_shape xbig = SH(INT64_MAX, 2, 10), wbig = SH(2, 2, 3);
    expect_status(convnd_bind_torch_conv(1, &xbig, &wbig, -1, NULL, NULL, NULL, 1, &p),
                  CONVND_ERR_OVERFLOW, "x of shape [9223372036854775807, 2, 10]");
    expect_untouched(&p);
}

Test(bind_torch, causal_conv_1d_and_3d) {
    convnd_problem p;
    /* causal depthwise conv1d, K=4, dilation 2: P0 = 6, P1 = 0 (torch: F.pad [6, 0] -> 100) */
    const convnd_shape x1 = SH(1, 12, 100), w1 = SH(12, 1, 4);
    const convnd_ints d2 = INTS(2);
    expect_ok(convnd_bind_causal_conv(1, &x1, &w1, 12, NULL, NULL, &d2, 12, &p));
    expect_dims(p, pad_before, 6);
    expect_dims(p, pad_after, 0);
    expect_out(p, 100);

    /* Wan-style causal conv3d (suite row wan_conv3d_causal): time 2/0, space 1/1 */
    const convnd_shape x3 = SH(1, 4, 21, 60, 104), w3 = SH(4, 4, 3, 3, 3);
    const convnd_ints one = INTS(1), two = INTS(1, 0);
    expect_ok(convnd_bind_causal_conv(3, &x3, &w3, -1, NULL, &one, NULL, 1, &p));
    expect_dims(p, pad_before, 2, 1, 1);
    expect_dims(p, pad_after, 0, 1, 1);
    expect_out(p, 21, 60, 104); /* torch: F.pad [1, 1, 1, 1, 2, 0] then conv3d */
    expect_ok(convnd_bind_causal_conv(3, &x3, &w3, -1, NULL, &two, NULL, 1, &p));
    expect_dims(p, pad_before, 2, 1, 0);
    expect_dims(p, pad_after, 0, 1, 0);

    const convnd_ints three = INTS(1, 1, 1), neg = INTS(-1);
    expect_status(convnd_bind_causal_conv(3, &x3, &w3, -1, NULL, &three, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "a list of 2 values for the non-time dims",
                  "padding=[1, 1, 1]");
    expect_status(convnd_bind_causal_conv(3, &x3, &w3, -1, NULL, &neg, NULL, 1, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "negative padding");
}

/* The geometry the Python package's front-ends take (convnd_bind_torch_geometry) is the one the
 * whole-call bindings bind, rule by rule. */
static void expect_same_geometry(convnd_torch_padding_rule rule, const convnd_problem *p,
                                 const convnd_shape *w, const convnd_ints *s,
                                 const convnd_ints *pad, const convnd_ints *d,
                                 const convnd_ints *op) {
    convnd_torch_geometry g;
    memset(&g, 0x5a, sizeof g);
    expect_ok(convnd_bind_torch_geometry(rule, w, s, pad, d, op, &g));
    cr_assert_eq(g.dims, p->dims);
    for (int t = 0; t < p->dims; ++t) {
        cr_assert_eq(g.stride[t], p->stride[t], "rule %d stride[%d]", (int)rule, t);
        cr_assert_eq(g.dilation[t], p->dilation[t], "rule %d dilation[%d]", (int)rule, t);
        cr_assert_eq(g.pad_before[t], p->pad_before[t], "rule %d pad_before[%d]", (int)rule, t);
        cr_assert_eq(g.pad_after[t], p->pad_after[t], "rule %d pad_after[%d]", (int)rule, t);
    }
    for (int t = p->dims; t < CONVND_MAX_DIMS; ++t)
        cr_assert(g.stride[t] == 0 && g.pad_before[t] == 0 && g.pad_after[t] == 0);
}

Test(bind_torch, geometry_is_the_bindings_for_every_rule) {
    const convnd_shape x = SH(2, 4, 11, 12), w = SH(6, 4, 4, 3), wt = SH(4, 3, 4, 3);
    const convnd_ints s = INTS(2, 1), s1 = INTS(1), pad = INTS(1, 2), d = INTS(2, 1),
                      op = INTS(1, 0);
    convnd_problem p;
    expect_ok(convnd_bind_torch_conv(2, &x, &w, -1, &s, &pad, &d, 1, &p));
    expect_same_geometry(CONVND_TORCH_RULE_EXPLICIT, &p, &w, &s, &pad, &d, NULL);
    expect_ok(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, &s, CONVND_TORCH_PADDING_VALID, &d,
                                                  1, &p));
    expect_same_geometry(CONVND_TORCH_RULE_VALID, &p, &w, &s, NULL, &d, NULL);
    expect_ok(convnd_bind_torch_conv_padding_mode(2, &x, &w, -1, &s1, CONVND_TORCH_PADDING_SAME, &d,
                                                  1, &p));
    expect_same_geometry(CONVND_TORCH_RULE_SAME, &p, &w, &s1, NULL, &d, NULL);
    cr_assert(p.pad_before[0] == 3 && p.pad_after[0] == 3 && p.pad_before[1] == 1 &&
              p.pad_after[1] == 1);
    expect_ok(convnd_bind_causal_conv(2, &x, &w, -1, &s, &s1, &d, 1, &p));
    expect_same_geometry(CONVND_TORCH_RULE_CAUSAL, &p, &w, &s, &s1, &d, NULL);
    expect_ok(convnd_bind_torch_conv_transpose(2, &x, &wt, -1, &s, &pad, &op, 1, &d, &p));
    expect_same_geometry(CONVND_TORCH_RULE_TRANSPOSED, &p, &wt, &s, &pad, &d, &op);
}

Test(bind_torch, geometry_refuses_by_name_and_writes_nothing) {
    const convnd_shape w = SH(6, 4, 4, 3), w1 = SH(6, 4);
    const convnd_ints s2 = INTS(2), op = INTS(1);
    convnd_torch_geometry g, before;
    memset(&g, 0x5a, sizeof g);
    before = g;
    expect_status(
        convnd_bind_torch_geometry((convnd_torch_padding_rule)9, &w, NULL, NULL, NULL, NULL, &g),
        CONVND_ERR_INVALID_ARGUMENT, "rule=9");
    expect_status(convnd_bind_torch_geometry(CONVND_TORCH_RULE_SAME, &w, &s2, NULL, NULL, NULL, &g),
                  CONVND_ERR_INVALID_ARGUMENT, "padding='same' is not supported for strided");
    expect_status(
        convnd_bind_torch_geometry(CONVND_TORCH_RULE_EXPLICIT, &w, NULL, NULL, NULL, &op, &g),
        CONVND_ERR_INVALID_ARGUMENT, "output_padding is given");
    expect_status(
        convnd_bind_torch_geometry(CONVND_TORCH_RULE_VALID, &w1, NULL, NULL, NULL, NULL, &g),
        CONVND_ERR_INVALID_ARGUMENT, "weight has rank 2");
    cr_assert(memcmp(&g, &before, sizeof g) == 0, "the geometry was written on error");
}
