/* TensorFlow / Keras binding (SPEC section 7): SAME (ONNX SAME_UPPER's formula, strides > 1
 * allowed), VALID, Keras causal (1-D), shapes in TensorFlow's order, grouped filters. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "convnd_bind.h"
#include "test_bind_expect.h"

#define COUNT(...) ((int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SH(...) convnd_shape_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})
#define INTS(...) convnd_ints_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

static void expect_output(const convnd_problem *p, int dims, const int64_t *want) {
    int64_t O[3];
    expect_ok(convnd_output_size(p, O));
    for (int t = 0; t < dims; ++t)
        cr_assert_eq(O[t], want[t], "O[%d] = %lld, want %lld", t, (long long)O[t],
                     (long long)want[t]);
}
#define expect_out(p, ...) expect_output(&(p), COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

Test(bind_tf, same_strided_nhwc_grouped) {
    convnd_problem p;
    /* NHWC [2, 9, 9, 4], filter HWIO [3, 3, 2, 6]: groups = 4 / 2 = 2 */
    const convnd_shape x = SH(2, 9, 9, 4), f = SH(3, 3, 2, 6);
    const convnd_ints s = INTS(2);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, 6, &s, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p));
    cr_assert(p.N == 2 && p.C_in == 4 && p.C_out == 6 && p.groups == 2 && p.has_bias == 1);
    cr_assert(p.x_layout == CONVND_CHANNELS_LAST && p.y_layout == CONVND_CHANNELS_LAST);
    cr_assert_eq(p.w_layout, CONVND_CHANNELS_FIRST); /* the caller transposes HWIO */
    expect_dims(p, input, 9, 9);
    expect_dims(p, kernel, 3, 3);
    /* T = (ceil(9/2) - 1)*2 + 3 - 9 = 2 -> 1 / 1; TF: ceil(9/2) = 5 */
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 1, 1);
    expect_out(p, 5, 5);
}

Test(bind_tf, same_even_kernel_puts_extra_after) {
    convnd_problem p;
    /* I = 9, K = 4, S = 1: T = 3 -> 1 / 2 (TF pads the larger half at the end) */
    const convnd_shape x = SH(1, 3, 9, 10), f = SH(4, 1, 3, 8);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, -1, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_FIRST, &p));
    cr_assert(p.x_layout == CONVND_CHANNELS_FIRST && p.y_layout == CONVND_CHANNELS_FIRST);
    cr_assert(p.C_in == 3 && p.C_out == 8 && p.groups == 1);
    expect_dims(p, pad_before, 1, 0);
    expect_dims(p, pad_after, 2, 0);
    expect_out(p, 9, 10);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, -1, NULL, CONVND_TF_VALID, NULL, CONVND_TF_CHANNELS_FIRST, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 6, 10);
}

Test(bind_tf, stride_and_dilation_list_forms) {
    convnd_problem p;
    const convnd_shape x = SH(1, 9, 9, 4), f = SH(3, 3, 4, 4);
    /* tf.nn.conv2d's 4-entry form: [1, s_h, s_w, 1] in NHWC */
    const convnd_ints s4 = INTS(1, 2, 3, 1);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, -1, &s4, CONVND_TF_VALID, NULL, CONVND_TF_CHANNELS_LAST, &p));
    expect_dims(p, stride, 2, 3);
    expect_out(p, 4, 3);
    /* NCHW: [1, 1, s_h, s_w] */
    const convnd_shape xc = SH(1, 4, 9, 9);
    const convnd_ints s4c = INTS(1, 1, 3, 2);
    expect_ok(convnd_bind_tf_conv(&xc, &f, -1, &s4c, CONVND_TF_VALID, NULL,
                                  CONVND_TF_CHANNELS_FIRST, &p));
    expect_dims(p, stride, 3, 2);
    const convnd_ints d2 = INTS(2, 1);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, -1, NULL, CONVND_TF_SAME, &d2, CONVND_TF_CHANNELS_LAST, &p));
    expect_dims(p, dilation, 2, 1);
    expect_dims(p, pad_before, 2, 1); /* E = 5: T = 4 */
    expect_dims(p, pad_after, 2, 1);
    expect_out(p, 9, 9);

    const convnd_ints bad = INTS(2, 2, 2, 1);
    expect_status(
        convnd_bind_tf_conv(&x, &f, -1, &bad, CONVND_TF_VALID, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT,
        "strides=[2, 2, 2, 1] must be 1 on the batch and channel dims");
    const convnd_ints three = INTS(1, 1, 1);
    expect_status(
        convnd_bind_tf_conv(&x, &f, -1, &three, CONVND_TF_VALID, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "strides=[1, 1, 1]");
    const convnd_ints s2 = INTS(2), zero = INTS(0);
    expect_status(
        convnd_bind_tf_conv(&x, &f, -1, &s2, CONVND_TF_SAME, &d2, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT,
        "strides > 1 not supported in conjunction with dilation rate > 1",
        "strides=[2, 2], dilations=[2, 1]");
    expect_status(
        convnd_bind_tf_conv(&x, &f, -1, &zero, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "strides=[0, 0]", "must all be >= 1");
}

Test(bind_tf, keras_causal_1d) {
    convnd_problem p;
    /* Keras Conv1D(padding="causal"), NWC [1, 100, 12], depthwise K=4, dilation 2: 6 / 0 */
    const convnd_shape x = SH(1, 100, 12), f = SH(4, 1, 12);
    const convnd_ints d = INTS(2);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, 12, NULL, CONVND_TF_CAUSAL, &d, CONVND_TF_CHANNELS_LAST, &p));
    cr_assert(p.C_in == 12 && p.C_out == 12 && p.groups == 12);
    expect_dims(p, pad_before, 6);
    expect_dims(p, pad_after, 0);
    expect_out(p, 100);
    /* with stride 3: ceil-like output (100 + 6 - 7) / 3 + 1 = 34 */
    const convnd_ints s = INTS(3);
    expect_ok(
        convnd_bind_tf_conv(&x, &f, -1, &s, CONVND_TF_CAUSAL, NULL, CONVND_TF_CHANNELS_LAST, &p));
    expect_dims(p, pad_before, 3);
    expect_out(p, 34);

    const convnd_shape x2 = SH(1, 8, 8, 3), f2 = SH(3, 3, 3, 4);
    expect_status(convnd_bind_tf_conv(&x2, &f2, -1, NULL, CONVND_TF_CAUSAL, NULL,
                                      CONVND_TF_CHANNELS_LAST, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "\"causal\" is only supported for 1-D",
                  "has 2 spatial dims");
}

Test(bind_tf, rejections) {
    convnd_problem p;
    const convnd_shape x = SH(1, 8, 8, 6), f = SH(3, 3, 4, 8);
    expect_status(
        convnd_bind_tf_conv(&x, &f, -1, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "input depth C_in=6", "multiple of the filter depth 4");
    const convnd_shape x4 = SH(1, 8, 8, 4), f5 = SH(3, 3, 2, 5);
    expect_status(
        convnd_bind_tf_conv(&x4, &f5, -1, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "output depth C_out=5", "multiple of the number of groups 2");
    const convnd_shape f0 = SH(3, 3, 0, 5);
    expect_status(
        convnd_bind_tf_conv(&x4, &f0, -1, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "filter depth 0");
    const convnd_shape f4 = SH(3, 3, 4, 8);
    expect_status(
        convnd_bind_tf_conv(&x4, &f4, 7, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "bias has 7 elements; expected C_out=8");
    expect_status(convnd_bind_tf_conv(&x4, &f4, -1, NULL, (convnd_tf_padding)3, NULL,
                                      CONVND_TF_CHANNELS_LAST, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "padding=3");
    expect_status(
        convnd_bind_tf_conv(&x4, &f4, -1, NULL, CONVND_TF_SAME, NULL, (convnd_tf_data_format)2, &p),
        CONVND_ERR_INVALID_ARGUMENT, "data_format=2");
    const convnd_shape f3 = SH(3, 4, 8);
    expect_status(
        convnd_bind_tf_conv(&x4, &f3, -1, NULL, CONVND_TF_SAME, NULL, CONVND_TF_CHANNELS_LAST, &p),
        CONVND_ERR_INVALID_ARGUMENT, "filter of shape [3, 4, 8] must have the rank");
    /* VALID with a kernel larger than the input */
    const convnd_shape small = SH(1, 2, 2, 4);
    expect_status(convnd_bind_tf_conv(&small, &f4, -1, NULL, CONVND_TF_VALID, NULL,
                                      CONVND_TF_CHANNELS_LAST, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "output size O[0]=0 < 1");
    /* SAME cannot make a kernel too large: it pads as needed */
    expect_ok(convnd_bind_tf_conv(&small, &f4, -1, NULL, CONVND_TF_SAME, NULL,
                                  CONVND_TF_CHANNELS_LAST, &p));
    expect_out(p, 2, 2);
}
