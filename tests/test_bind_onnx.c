/* ONNX bindings (SPEC section 7): Conv with pads / auto_pad, ConvTranspose with pads,
 * output_padding, output_shape and auto_pad, per the ONNX operator specification. Conv output
 * shapes were checked with onnx.reference (onnx 1.23); ConvTranspose numbers follow the spec's
 * equations by hand (its reference implementation fails on groups and output_shape). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "convnd_bind.h"
#include "test_bind_expect.h"

#define COUNT(...) ((int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SH(...) convnd_shape_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})
#define INTS(...) convnd_ints_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})
#define PADS(...) convnd_pads_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

static void expect_output(const convnd_problem *p, int dims, const int64_t *want) {
    int64_t O[3];
    expect_ok(convnd_output_size(p, O));
    for (int t = 0; t < dims; ++t)
        cr_assert_eq(O[t], want[t], "O[%d] = %lld, want %lld", t, (long long)O[t],
                     (long long)want[t]);
}
#define expect_out(p, ...) expect_output(&(p), COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

Test(bind_onnx, conv_explicit_pads) {
    convnd_problem p;
    const convnd_shape X = SH(1, 3, 10, 10), W = SH(8, 3, 3, 3);
    const convnd_pads pads = PADS(1, 2, 3, 4); /* begin H, begin W, end H, end W */
    expect_ok(convnd_bind_onnx_conv(&X, &W, 8, CONVND_ONNX_NOTSET, NULL, 1, NULL, &pads, NULL, &p));
    cr_assert(p.mode == CONVND_FORWARD && p.C_in == 3 && p.C_out == 8 && p.has_bias == 1);
    expect_dims(p, pad_before, 1, 2);
    expect_dims(p, pad_after, 3, 4);
    expect_out(p, 12, 14); /* onnx.reference: [1, 8, 12, 14] */
    /* kernel_shape may repeat W's */
    const convnd_ints k = INTS(3, 3);
    expect_ok(convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, &k, NULL, NULL, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_out(p, 8, 8);
}

Test(bind_onnx, conv_same_upper_lower_valid) {
    convnd_problem p;
    /* H: I=10, K=3, S=2: T = (5-1)*2 + 3 - 10 = 1; W: I=7, K=4, S=3: T = 2*3 + 4 - 7 = 3 */
    const convnd_shape X = SH(1, 3, 10, 7), W = SH(8, 3, 3, 4);
    const convnd_ints s = INTS(2, 3);
    expect_ok(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 0, 1);
    expect_dims(p, pad_after, 1, 2);
    expect_out(p, 5, 3); /* ceil(I/S); onnx.reference: [1, 8, 5, 3] */
    expect_ok(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_SAME_LOWER, NULL, 1, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 1, 2);
    expect_dims(p, pad_after, 0, 1);
    expect_out(p, 5, 3);
    expect_ok(convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_VALID, NULL, 1, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 4, 2);
    /* with dilation: E = 2*(3-1)+1 = 5, I = 10, S = 1: T = 4 -> 2/2 */
    const convnd_ints d = INTS(2, 1);
    expect_ok(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_SAME_UPPER, &d, 1, NULL, NULL, NULL, &p));
    expect_dims(p, pad_before, 2, 1);
    expect_dims(p, pad_after, 2, 2);
    expect_out(p, 10, 7);
    /* T clamps at 0: I=10, K=1, S=4 -> (3-1)*4 + 1 - 10 = -1 -> 0 */
    const convnd_shape X1 = SH(1, 3, 10), W1 = SH(8, 3, 1);
    const convnd_ints s4 = INTS(4);
    expect_ok(
        convnd_bind_onnx_conv(&X1, &W1, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL, NULL, &s4, &p));
    expect_dims(p, pad_before, 0);
    expect_dims(p, pad_after, 0);
    expect_out(p, 3); /* onnx.reference: [1, 8, 3] */
}

Test(bind_onnx, conv_group_3d) {
    convnd_problem p;
    const convnd_shape X = SH(2, 6, 4, 5, 6), W = SH(9, 2, 1, 2, 3);
    const convnd_pads pads = PADS(0, 1, 2, 0, 0, 1);
    expect_ok(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 3, NULL, &pads, NULL, &p));
    cr_assert(p.N == 2 && p.C_in == 6 && p.C_out == 9 && p.groups == 3);
    expect_dims(p, pad_before, 0, 1, 2);
    expect_dims(p, pad_after, 0, 0, 1);
    expect_out(p, 4, 5, 7);
}

Test(bind_onnx, conv_rejections) {
    convnd_problem p;
    const convnd_shape X = SH(1, 4, 8, 8), W = SH(6, 2, 3, 3);
    const convnd_pads pads = PADS(1, 1, 1, 1), three = PADS(1, 1, 1), neg = PADS(0, -1, 0, 0);
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_SAME_UPPER, NULL, 2, NULL, &pads, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "pads=[1, 1, 1, 1] given together with auto_pad=SAME_UPPER");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_VALID, NULL, 2, NULL, &pads, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "auto_pad=VALID");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, &three, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "pads=[1, 1, 1] has 3 entries; expected 4");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, &neg, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "pads[1]=-1 must be >= 0");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 3, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "X of shape [1, 4, 8, 8] has C=4 channels",
        "W[1]*group = 2*3");
    const convnd_shape W7 = SH(7, 2, 3, 3);
    expect_status(
        convnd_bind_onnx_conv(&X, &W7, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "group=2 does not divide M=W[0]=7");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 0, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "group=0 must be >= 1");
    const convnd_ints k = INTS(3, 5);
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, &k, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "kernel_shape=[3, 5] does not match W of shape [6, 2, 3, 3]");
    const convnd_ints s1 = INTS(2), s0 = INTS(1, 0), d0 = INTS(0, 1);
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL, &s1, &p),
        CONVND_ERR_INVALID_ARGUMENT, "strides=[2] has 1 entries; expected 2");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_SAME_LOWER, NULL, 2, NULL, NULL, &s0, &p),
        CONVND_ERR_INVALID_ARGUMENT, "strides[1]=0 must be >= 1");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, CONVND_ONNX_NOTSET, &d0, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "dilations[0]=0 must be >= 1");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, 5, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "B has 5 elements; expected M=W[0]=6");
    expect_status(
        convnd_bind_onnx_conv(&X, &W, -1, (convnd_onnx_auto_pad)7, NULL, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "auto_pad=7");
    const convnd_shape X2 = SH(4, 8), W3 = SH(6, 2, 3);
    expect_status(
        convnd_bind_onnx_conv(&X2, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "X of shape [4, 8] must have rank 3 to 5");
    expect_status(
        convnd_bind_onnx_conv(&X, &W3, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL, NULL, &p),
        CONVND_ERR_INVALID_ARGUMENT, "W of shape [6, 2, 3] must have the rank of X");
    /* a SAME total that overflows */
    const convnd_shape Xb = SH(1, 1, 10), Wb = SH(1, 1, 3);
    const convnd_ints dmax = INTS(INT64_MAX / 2);
    expect_status(
        convnd_bind_onnx_conv(&Xb, &Wb, -1, CONVND_ONNX_SAME_UPPER, &dmax, 1, NULL, NULL, NULL, &p),
        CONVND_ERR_OVERFLOW, "SAME padding of dim 0 overflows int64");
}

Test(bind_onnx, conv_transpose_pads_and_output_padding) {
    convnd_problem p;
    const convnd_shape X = SH(1, 4, 5, 5), W = SH(4, 3, 3, 3);
    const convnd_ints s = INTS(2, 2), op = INTS(1, 1);
    const convnd_pads pads = PADS(1, 1, 1, 1);
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, 6, CONVND_ONNX_NOTSET, NULL, 2, NULL, &op,
                                              NULL, &pads, &s, &p));
    cr_assert(p.mode == CONVND_TRANSPOSED && p.C_in == 4 && p.C_out == 6 && p.groups == 2);
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 0, 0); /* pads_end - output_padding */
    expect_out(p, 10, 10);           /* 2*4 + 1 + 3 - 1 - 1 */
    /* asymmetric pads */
    const convnd_pads asym = PADS(0, 2, 1, 0);
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL, NULL,
                                              NULL, &asym, &s, &p));
    expect_dims(p, pad_before, 0, 2);
    expect_dims(p, pad_after, 1, 0);
    expect_out(p, 10, 9);
    /* VALID: no pads; output_padding still extends the end */
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_VALID, NULL, 2, NULL, &op,
                                              NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_dims(p, pad_after, -1, -1);
    expect_out(p, 12, 12);
}

Test(bind_onnx, conv_transpose_output_shape) {
    convnd_problem p;
    const convnd_shape X = SH(1, 4, 5, 5), W = SH(4, 3, 3, 3);
    const convnd_ints s = INTS(2, 1), out = INTS(10, 11);
    /* H: total = 2*4 + 0 + 3 - 10 = 1: NOTSET puts the odd unit at the beginning; W: 0 */
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL, NULL,
                                              &out, NULL, &s, &p));
    expect_dims(p, pad_before, 1, -2);
    expect_dims(p, pad_after, 0, -2);
    expect_out(p, 10, 11);
    /* W: total = 4 + 3 - 11 = -4 (output larger than the full result): -2 / -2 */
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL,
                                              NULL, &out, NULL, &s, &p));
    expect_dims(p, pad_before, 0, -2);
    expect_dims(p, pad_after, 1, -2);
    expect_out(p, 10, 11);
    /* output_shape ignores pads, as the spec says */
    const convnd_pads pads = PADS(3, 3, 3, 3);
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL, NULL,
                                              &out, &pads, &s, &p));
    expect_out(p, 10, 11);
    /* with output_padding: total = 2*4 + 1 + 3 - 10 = 2 -> 1/1, P1 = 1 - 1 = 0 */
    const convnd_ints op = INTS(1, 0);
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL, &op,
                                              &out, NULL, &s, &p));
    expect_dims(p, pad_before, 1, -2);
    expect_dims(p, pad_after, 0, -2);
    expect_out(p, 10, 11);
    /* odd negative total, 1-D: I=5, S=2, K=3, out=14: total = -3, floor split -2 / -1 */
    const convnd_shape X1 = SH(1, 4, 5), W1 = SH(4, 3, 3);
    const convnd_ints s2 = INTS(2), out14 = INTS(14);
    expect_ok(convnd_bind_onnx_conv_transpose(&X1, &W1, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL,
                                              NULL, &out14, NULL, &s2, &p));
    expect_dims(p, pad_before, -2);
    expect_dims(p, pad_after, -1);
    expect_out(p, 14);
    expect_ok(convnd_bind_onnx_conv_transpose(&X1, &W1, -1, CONVND_ONNX_SAME_LOWER, NULL, 1, NULL,
                                              NULL, &out14, NULL, &s2, &p));
    expect_dims(p, pad_before, -1);
    expect_dims(p, pad_after, -2);
    expect_out(p, 14);
}

Test(bind_onnx, conv_transpose_same_without_output_shape) {
    convnd_problem p;
    /* output_shape defaults to I*S = 10: total = 2*4 + 3 - 10 = 1 */
    const convnd_shape X = SH(1, 4, 5, 5), W = SH(4, 3, 3, 3);
    const convnd_ints s = INTS(2, 2), op = INTS(1, 1);
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL,
                                              NULL, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 0, 0);
    expect_dims(p, pad_after, 1, 1);
    expect_out(p, 10, 10); /* onnx.reference: [1, 3, 10, 10] */
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_SAME_LOWER, NULL, 1, NULL,
                                              NULL, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 10, 10);
    /* output_padding 1: total 2 -> 1/1, P1 = 1 - 1 */
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_SAME_UPPER, NULL, 1, NULL,
                                              &op, NULL, NULL, &s, &p));
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 0, 0);
    expect_out(p, 10, 10); /* onnx.reference: [1, 3, 10, 10] */
}

/* Where onnxruntime and the spec disagree (docs/api.md): SAME_* with the kernel's extent below
 * the stride. The spec (and onnx.reference): output I*S = 12 through a negative total padding;
 * onnxruntime (the _ort binding): the total clamped at 0, output S(I-1) + E = 11. Where the total
 * is not negative the two bindings agree. */
Test(bind_onnx, conv_transpose_same_with_a_kernel_below_the_stride) {
    convnd_problem p, q;
    const convnd_shape X = SH(1, 2, 4, 4), W = SH(2, 3, 2, 2), X1 = SH(1, 2, 4), W1 = SH(2, 3, 3);
    const convnd_ints s = INTS(3, 3), s1 = INTS(2), os = INTS(12, 12);
    for (int lower = 0; lower < 2; ++lower) {
        const convnd_onnx_auto_pad ap = lower ? CONVND_ONNX_SAME_LOWER : CONVND_ONNX_SAME_UPPER;
        expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, ap, NULL, 1, NULL, NULL, NULL, NULL,
                                                  &s, &p));
        expect_out(p, 12, 12);
        expect_ok(convnd_bind_onnx_conv_transpose_ort(&X, &W, -1, ap, NULL, 1, NULL, NULL, NULL,
                                                      NULL, &s, &q));
        expect_dims(q, pad_before, 0, 0);
        expect_dims(q, pad_after, 0, 0);
        expect_out(q, 11, 11);
        /* output_shape given: both follow it */
        expect_ok(convnd_bind_onnx_conv_transpose_ort(&X, &W, -1, ap, NULL, 1, NULL, NULL, &os,
                                                      NULL, &s, &q));
        expect_out(q, 12, 12);
        /* a kernel not below the stride: the same problem from both */
        expect_ok(convnd_bind_onnx_conv_transpose(&X1, &W1, -1, ap, NULL, 1, NULL, NULL, NULL, NULL,
                                                  &s1, &p));
        expect_ok(convnd_bind_onnx_conv_transpose_ort(&X1, &W1, -1, ap, NULL, 1, NULL, NULL, NULL,
                                                      NULL, &s1, &q));
        cr_expect(memcmp(&p, &q, sizeof p) == 0, "SAME_%s, E >= S: the bindings differ",
                  lower ? "LOWER" : "UPPER");
    }
    /* explicit pads: the spec's rule in both */
    const convnd_pads pads = {4, {1, 0, 0, 1}};
    expect_ok(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL, NULL,
                                              NULL, &pads, &s, &p));
    expect_ok(convnd_bind_onnx_conv_transpose_ort(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, NULL, &pads, &s, &q));
    cr_expect(memcmp(&p, &q, sizeof p) == 0);
}

Test(bind_onnx, conv_transpose_rejections) {
    convnd_problem p;
    const convnd_shape X = SH(1, 4, 5, 5), W = SH(4, 3, 3, 3), X5 = SH(1, 5, 5, 5);
    expect_status(convnd_bind_onnx_conv_transpose(&X5, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, NULL, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "X of shape [1, 5, 5, 5] has C=5 channels",
                  "expects W[0]=4");
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 3, NULL,
                                                  NULL, NULL, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "group=3 does not divide C=4");
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, 3, CONVND_ONNX_NOTSET, NULL, 2, NULL,
                                                  NULL, NULL, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "B has 3 elements; expected M=W[1]*group=6");
    const convnd_ints neg = INTS(0, -1), one = INTS(10), zero = INTS(10, 0);
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  &neg, NULL, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "output_padding[1]=-1 must be >= 0");
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, &one, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "output_shape=[10] has 1 entries; expected 2");
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, &zero, NULL, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "output_shape[1]=0 must be >= 1");
    const convnd_pads pads = PADS(1, 1, 1, 1);
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_SAME_LOWER, NULL, 1, NULL,
                                                  NULL, NULL, &pads, NULL, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "given together with auto_pad=SAME_LOWER");
    /* pads that crop everything: 2*4 + 3 - 6 - 6 = -1 */
    const convnd_pads big = PADS(6, 6, 6, 6);
    const convnd_ints s = INTS(2, 2);
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, NULL, &big, &s, &p),
                  CONVND_ERR_INVALID_ARGUMENT, "transposed output size O[0]=-1 < 1");
    /* overflow: I*S for SAME, and W[1]*group */
    const convnd_shape Xh = SH(1, 4, INT64_MAX / 2), Wh = SH(4, 3, 3);
    const convnd_ints s3 = INTS(3);
    expect_status(convnd_bind_onnx_conv_transpose(&Xh, &Wh, -1, CONVND_ONNX_SAME_UPPER, NULL, 1,
                                                  NULL, NULL, NULL, NULL, &s3, &p),
                  CONVND_ERR_OVERFLOW, "output_shape[0] = input*stride");
    const convnd_shape Wm = SH(4, INT64_MAX, 3, 3);
    expect_status(convnd_bind_onnx_conv_transpose(&X, &Wm, -1, CONVND_ONNX_NOTSET, NULL, 2, NULL,
                                                  NULL, NULL, NULL, NULL, &p),
                  CONVND_ERR_OVERFLOW, "M = W[1]*group");
    const convnd_ints huge = INTS(INT64_MAX, 1);
    expect_status(convnd_bind_onnx_conv_transpose(&X, &W, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL,
                                                  NULL, NULL, NULL, &huge, &p),
                  CONVND_ERR_OVERFLOW, "transposed output size O[0] overflows");
}

/* ---- CausalConvWithState (opset 27) --------------------------------------------------------- */

static convnd_shape shape3(int64_t a, int64_t b, int64_t c) {
    const convnd_shape s = {3, {a, b, c, 0, 0}};
    return s;
}

Test(bind_onnx, causal_conv_with_state_binds_the_causal_problem) {
    const convnd_shape x = shape3(2, 6, 9), w = shape3(6, 1, 4), ps = shape3(2, 6, 3);
    convnd_causal_problem p;
    expect_ok(
        convnd_bind_onnx_causal_conv_with_state(&x, &w, 6, &ps, "swish", CONVND_ONNX_FLOAT16, &p));
    cr_expect(p.batch == 2 && p.dim == 6 && p.seqlen == 9 && p.width == 4);
    cr_expect(p.dtype == CONVND_F16 && p.layout == CONVND_CAUSAL_BDL && p.has_bias == 1 &&
              p.silu == 1 && p.num_seqs == 0);
    /* kernel size 1: no state; no bias, default activation, bf16 */
    const convnd_shape w1 = shape3(6, 1, 1), ps0 = shape3(2, 6, 0);
    expect_ok(
        convnd_bind_onnx_causal_conv_with_state(&x, &w1, -1, NULL, NULL, CONVND_ONNX_BFLOAT16, &p));
    cr_expect(p.width == 1 && p.has_bias == 0 && p.silu == 0 && p.dtype == CONVND_BF16);
    expect_ok(
        convnd_bind_onnx_causal_conv_with_state(&x, &w1, -1, &ps0, "none", CONVND_ONNX_FLOAT, &p));
    cr_expect(p.width == 1 && p.dtype == CONVND_F32);
    /* an input shorter than k-1, batch 1 x channel 1 */
    const convnd_shape xs = shape3(1, 1, 2), ws = shape3(1, 1, 5), pss = shape3(1, 1, 4);
    expect_ok(
        convnd_bind_onnx_causal_conv_with_state(&xs, &ws, 1, &pss, "silu", CONVND_ONNX_FLOAT, &p));
    cr_expect(p.seqlen == 2 && p.width == 5 && p.silu == 1);
}

Test(bind_onnx, causal_conv_with_state_rejections_name_the_values) {
    const convnd_shape x = shape3(2, 6, 9), w = shape3(6, 1, 4), ps = shape3(2, 6, 3);
    convnd_causal_problem p, before;
    memset(&p, 0x5a, sizeof p);
    before = p;
#define BIND(X, W, BL, PS, ACT, T) convnd_bind_onnx_causal_conv_with_state(X, W, BL, PS, ACT, T, &p)
    const convnd_shape x2 = {2, {2, 6}}, x4 = {4, {2, 6, 9, 1}};
    expect_status(BIND(&x2, &w, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "input of shape [2, 6]", "rank 3");
    expect_status(BIND(&x4, &w, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "[2, 6, 9, 1]", "rank 3");
    const convnd_shape wm = shape3(6, 2, 4), wc = shape3(5, 1, 4), w0 = shape3(6, 1, 0),
                       wbig = shape3(6, 1, 257), w2 = {2, {6, 4}};
    expect_status(BIND(&x, &wm, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "weight of shape [6, 2, 4]", "middle dim", "got 2");
    expect_status(BIND(&x, &wc, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "[5, 1, 4]", "channels=6");
    expect_status(BIND(&x, &w0, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "k=0", "1..256");
    expect_status(BIND(&x, &wbig, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "k=257");
    expect_status(BIND(&x, &w2, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "weight of shape [6, 4]", "rank 3");
    expect_status(BIND(&x, &w, 5, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "bias has 5 elements", "channels=6");
    const convnd_shape pk = shape3(2, 6, 4), pb = shape3(1, 6, 3), pc = shape3(2, 5, 3),
                       p2 = {2, {2, 6}};
    expect_status(BIND(&x, &w, -1, &pk, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "past_state of shape [2, 6, 4]", "[2, 6, 3]");
    expect_status(BIND(&x, &w, -1, &pb, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "[1, 6, 3]");
    expect_status(BIND(&x, &w, -1, &pc, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "[2, 5, 3]");
    expect_status(BIND(&x, &w, -1, &p2, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "past_state of shape [2, 6]");
    expect_status(BIND(&x, &w, -1, &ps, "relu", CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "activation='relu'", "'none', 'silu' or 'swish'");
    expect_status(BIND(&x, &w, -1, &ps, "SiLU", CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "activation='SiLU'");
    expect_status(BIND(&x, &w, -1, &ps, NULL, CONVND_ONNX_DOUBLE), CONVND_ERR_UNSUPPORTED,
                  "T=DOUBLE is not supported");
    expect_status(BIND(&x, &w, -1, &ps, NULL, 7), CONVND_ERR_UNSUPPORTED, "T=7");
    const convnd_shape neg = shape3(-1, 6, 9);
    expect_status(BIND(&neg, &w, -1, NULL, NULL, CONVND_ONNX_FLOAT), CONVND_ERR_INVALID_ARGUMENT,
                  "input");
    expect_status(
        convnd_bind_onnx_causal_conv_with_state(&x, &w, -1, NULL, NULL, CONVND_ONNX_FLOAT, NULL),
        CONVND_ERR_NULL_POINTER, "out is NULL");
#undef BIND
    cr_expect(memcmp(&p, &before, sizeof p) == 0, "a refused call wrote its problem");
}
