/* convnd_validate and convnd_output_size: every SPEC section 8 rule a problem alone can break,
 * with checked arithmetic (absurd sizes and paddings are rejected, never wrapped), plus the
 * per-thread error message machinery. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>

#include "problem_internal.h"
#include "test_bind_expect.h"

/* A valid 2-D forward problem: N=2, 8 -> 16 channels, 2 groups, 10x12 input, 3x3 kernel. */
static convnd_problem base2d(void) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.N = 2;
    p.C_in = 8;
    p.C_out = 16;
    p.groups = 2;
    p.input[0] = 10;
    p.input[1] = 12;
    p.kernel[0] = p.kernel[1] = 3;
    return p;
}

static convnd_problem base1d(int64_t I, int64_t K) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = 4;
    p.input[0] = I;
    p.kernel[0] = K;
    return p;
}

Test(validate, init_defaults) {
    convnd_problem p;
    memset(&p, 0x5a, sizeof p);
    convnd_problem_init(&p, 3);
    cr_assert_eq(p.dims, 3);
    cr_assert_eq(p.mode, CONVND_FORWARD);
    cr_assert_eq(p.N, 1);
    cr_assert_eq(p.groups, 1);
    for (int t = 0; t < 3; ++t) {
        cr_assert_eq(p.stride[t], 1);
        cr_assert_eq(p.dilation[t], 1);
        cr_assert_eq(p.pad_before[t], 0);
        cr_assert_eq(p.pad_after[t], 0);
        cr_assert_eq(p.input[t], 0);
        cr_assert_eq(p.kernel[t], 0);
    }
    cr_assert_eq(p.dtype, CONVND_F32);
    cr_assert_eq(p.x_layout, CONVND_CHANNELS_FIRST);
    cr_assert_eq(p.w_layout, CONVND_CHANNELS_FIRST);
    cr_assert_eq(p.y_layout, CONVND_LAYOUT_AUTO);
    cr_assert_eq(p.alpha, 1.0f);
    cr_assert_eq(p.beta, 0.0f);
    cr_assert_eq(p.has_bias, 0);
    cr_assert_eq(p.has_z, 0);
    cr_assert_eq(p.activation, CONVND_ACT_NONE);
    cr_assert_eq(p.math, CONVND_MATH_DEFAULT);
    /* sizes are left 0, so the fresh problem is not valid until they are set */
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "input[0]=0 must be >= 1");
}

Test(validate, valid_problem_passes) {
    convnd_problem p = base2d();
    expect_ok(convnd_validate(&p));
    p.mode = CONVND_TRANSPOSED;
    expect_ok(convnd_validate(&p));
}

Test(validate, null_problem) {
    expect_status(convnd_validate(NULL), CONVND_ERR_NULL_POINTER, "problem is NULL");
}

Test(validate, dims_out_of_range) {
    convnd_problem p = base2d();
    p.dims = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "dims=0 must be 1, 2 or 3");
    p.dims = 4;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "dims=4");
}

Test(validate, enums_out_of_range) {
    convnd_problem p = base2d();
    p.mode = (convnd_mode)3;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "mode=3");
    p = base2d();
    p.dtype = (convnd_dtype)3;
    expect_status(convnd_validate(&p), CONVND_ERR_UNSUPPORTED, "dtype=3 is not supported");
    p = base2d();
    p.x_layout = CONVND_LAYOUT_AUTO;
    expect_status(convnd_validate(&p), CONVND_ERR_UNSUPPORTED, "x_layout=2", "y only");
    p = base2d();
    p.w_layout = (convnd_layout)-1;
    expect_status(convnd_validate(&p), CONVND_ERR_UNSUPPORTED, "w_layout=-1");
    p = base2d();
    p.y_layout = (convnd_layout)7;
    expect_status(convnd_validate(&p), CONVND_ERR_UNSUPPORTED, "y_layout=7");
    p = base2d();
    p.activation = (convnd_activation)9;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "activation=9");
    p = base2d();
    p.math = (convnd_math)3;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "math=3");
}

Test(validate, negative_counts) {
    convnd_problem p = base2d();
    p.N = -1;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "N=-1 must be >= 0");
    p = base2d();
    p.C_in = -8;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "C_in=-8 must be >= 0");
    p = base2d();
    p.C_out = -3;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "C_out=-3 must be >= 0");
}

Test(validate, groups) {
    convnd_problem p = base2d();
    p.groups = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "groups=0 must be >= 1");
    p.groups = -2;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "groups=-2 must be >= 1");
    p = base2d();
    p.C_in = 64;
    p.groups = 3;
    p.C_out = 6;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=3 does not divide C_in=64");
    p.C_in = 12;
    p.groups = 4;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=4 does not divide C_out=6");
    p.mode = CONVND_TRANSPOSED; /* the rule holds in both modes */
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=4 does not divide C_out=6");
}

Test(validate, spatial_params_must_be_positive) {
    convnd_problem p = base2d();
    p.input[1] = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "input[1]=0 must be >= 1");
    p = base2d();
    p.kernel[0] = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "kernel[0]=0 must be >= 1");
    p = base2d();
    p.stride[1] = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "stride[1]=0 must be >= 1");
    p = base2d();
    p.stride[0] = -3;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "stride[0]=-3 must be >= 1");
    p = base2d();
    p.dilation[0] = -2;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "dilation[0]=-2 must be >= 1");
    p = base2d();
    p.dilation[1] = 0;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "dilation[1]=0 must be >= 1");
}

Test(validate, entries_past_dims_are_ignored) {
    convnd_problem p = base1d(10, 3);
    p.input[1] = p.kernel[1] = p.stride[1] = p.dilation[2] = -7;
    p.pad_before[2] = INT64_MIN;
    expect_ok(convnd_validate(&p));
}

Test(validate, forward_output_size_below_one) {
    convnd_problem p = base1d(2, 5);
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "forward output size O[0]=-2 < 1 (input=2, kernel=5, dilation=1, stride=1, "
                  "pad 0/0)");
    /* negative padding crops: 4 - 2 - 3 + 1 = 0 */
    p = base1d(4, 3);
    p.pad_before[0] = -2;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "forward output size O[0]=0 < 1", "pad -2/0");
    /* floor, not truncation: floor(-1 / 2) + 1 = 0 */
    p = base1d(4, 3);
    p.stride[0] = 2;
    p.pad_before[0] = -2;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "forward output size O[0]=0 < 1 (input=4, kernel=3, dilation=1, stride=2, "
                  "pad -2/0)");
    /* dilation makes the kernel too large in dim 1 only */
    p = base2d();
    p.dilation[1] = 6; /* E = 13 > 12 */
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "O[1]=0 < 1", "dilation=6");
    p.pad_after[1] = 1; /* exactly fits now */
    expect_ok(convnd_validate(&p));
}

Test(validate, transposed_output_size_below_one) {
    convnd_problem p = base1d(1, 1);
    p.mode = CONVND_TRANSPOSED;
    p.pad_before[0] = 1;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "transposed output size O[0]=0 < 1 (input=1, kernel=1, dilation=1, stride=1, "
                  "pad 1/0)");
    p.pad_after[0] = -1; /* a negative P1 extends the output */
    expect_ok(convnd_validate(&p));
}

Test(validate, output_size_values) {
    int64_t O[3];
    /* forward: floor((I + P0 + P1 - E) / S) + 1 */
    convnd_problem p = base2d();
    p.stride[0] = 2;
    p.pad_before[0] = 1;
    p.pad_after[0] = 0; /* floor((10 + 1 - 3) / 2) + 1 = 5 */
    p.dilation[1] = 2;
    p.pad_before[1] = -1;
    p.pad_after[1] = 3; /* 12 - 1 + 3 - 5 + 1 = 10 */
    expect_ok(convnd_output_size(&p, O));
    cr_assert_eq(O[0], 5);
    cr_assert_eq(O[1], 10);
    /* transposed: (I - 1) * S + E - P0 - P1 */
    p.mode = CONVND_TRANSPOSED; /* (10-1)*2 + 3 - 1 - 0 = 20; 11 + 5 + 1 - 3 = 14 */
    expect_ok(convnd_output_size(&p, O));
    cr_assert_eq(O[0], 20);
    cr_assert_eq(O[1], 14);
    /* 3-D, the kernel exactly covering the input: O = 1 */
    convnd_problem q;
    convnd_problem_init(&q, 3);
    q.C_in = q.C_out = 1;
    for (int t = 0; t < 3; ++t)
        q.input[t] = q.kernel[t] = 4 + t;
    q.stride[2] = 100;
    expect_ok(convnd_output_size(&q, O));
    cr_assert(O[0] == 1 && O[1] == 1 && O[2] == 1);
    expect_status(convnd_output_size(&q, NULL), CONVND_ERR_NULL_POINTER, "NULL");
}

Test(validate, epilogue_rules) {
    convnd_problem p = base2d();
    p.beta = 0.5f;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT,
                  "beta=0.5 requires a residual z");
    p.has_z = 1;
    expect_ok(convnd_validate(&p));
    p.alpha = NAN;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "alpha=nan must be finite");
    p.alpha = 1.0f;
    p.beta = INFINITY;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "beta=inf must be finite");
    p = base2d();
    p.has_bias = 2;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "has_bias=2 must be 0 or 1");
    p = base2d();
    p.has_z = -1;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "has_z=-1 must be 0 or 1");
}

Test(validate, zero_batch_and_channels_are_valid) {
    convnd_problem p = base2d();
    convnd_problem_sizes s;
    p.N = 0;
    expect_ok(convnd_problem_check(&p, &s));
    cr_assert_eq(s.x_numel, 0);
    cr_assert_eq(s.y_numel, 0);
    cr_assert_eq(s.w_numel, 16 * 4 * 9);
    p = base2d();
    p.C_in = 0;
    p.C_out = 0;
    expect_ok(convnd_problem_check(&p, &s));
    cr_assert_eq(s.x_numel, 0);
    cr_assert_eq(s.w_numel, 0);
    cr_assert_eq(s.bias_numel, 0);
    p.mode = CONVND_TRANSPOSED;
    expect_ok(convnd_validate(&p));
}

Test(validate, overflow_in_tensor_sizes) {
    convnd_problem p = base1d(8, 1);
    p.N = INT64_MAX;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW,
                  "x of shape [9223372036854775807, 4, 8]");
    /* a zero batch does not hide strides that overflow */
    p.N = 0;
    p.C_in = p.C_out = INT64_MAX / 2;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "x of shape [0, 4611686018427387903");
    /* the element count fits, the byte count does not */
    p = base1d((int64_t)1 << 62, 1);
    p.C_in = p.C_out = 1;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW,
                  "x of shape [1, 1, 4611686018427387904]", "bytes");
    /* the weight */
    p = base1d(8, 1);
    p.C_in = p.C_out = (int64_t)1 << 40;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "w of shape [1099511627776");
    /* only y: a huge transposed upsampling */
    p = base1d((int64_t)1 << 31, 1);
    p.mode = CONVND_TRANSPOSED;
    p.stride[0] = (int64_t)1 << 31;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "y of shape [1, 4, ");
}

Test(validate, overflow_in_output_size) {
    convnd_problem p = base1d(INT64_MAX, 1);
    p.pad_before[0] = 1;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW,
                  "forward output size O[0] overflows int64", "pad 1/0");
    p = base1d(5, 3);
    p.pad_before[0] = p.pad_after[0] = INT64_MAX / 2 + 1;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "O[0] overflows int64",
                  "pad 4611686018427387904/4611686018427387904");
    p = base1d(5, 10);
    p.pad_before[0] = INT64_MIN;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "pad -9223372036854775808/0");
    /* huge negative padding that does not overflow is an ordinary O < 1 */
    p = base1d(5, 3);
    p.pad_before[0] = INT64_MIN + 10;
    expect_status(convnd_validate(&p), CONVND_ERR_INVALID_ARGUMENT, "O[0]=", "< 1");
    /* transposed: (I-1)*S, then - P0, then - P1 */
    p = base1d(INT64_MAX, 1);
    p.mode = CONVND_TRANSPOSED;
    p.stride[0] = 2;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW,
                  "transposed output size O[0] overflows");
    p = base1d(5, 3);
    p.mode = CONVND_TRANSPOSED;
    p.pad_before[0] = INT64_MIN;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW,
                  "transposed output size O[0] overflows");
    p.pad_before[0] = 0;
    p.pad_after[0] = INT64_MIN;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "pad 0/-9223372036854775808");
    /* effective kernel D*(K-1)+1 */
    p = base1d(5, 3);
    p.dilation[0] = INT64_MAX;
    expect_status(convnd_validate(&p), CONVND_ERR_OVERFLOW, "effective kernel",
                  "kernel=3, dilation=9223372036854775807");
}

Test(errors, status_strings) {
    for (int s = CONVND_OK; s <= CONVND_ERR_INTERNAL; ++s) {
        const char *text = convnd_status_string((convnd_status)s);
        cr_assert(text && *text && strcmp(text, "unknown status") != 0, "status %d", s);
    }
    cr_assert_str_eq(convnd_status_string(CONVND_ERR_OVERFLOW), "size overflow");
    cr_assert_str_eq(convnd_status_string((convnd_status)99), "unknown status");
}

Test(errors, message_set_and_cleared) {
    convnd_clear_error();
    cr_assert_str_eq(convnd_last_error(), "");
    cr_assert_eq(convnd_error(CONVND_ERR_WORKSPACE, "need %d bytes", 42), CONVND_ERR_WORKSPACE);
    cr_assert_str_eq(convnd_last_error(), "need 42 bytes");
    convnd_clear_error();
    cr_assert_str_eq(convnd_last_error(), "");
    /* an over-long message is truncated, not overrun */
    char big[4000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    convnd_error(CONVND_ERR_INTERNAL, "%s", big);
    cr_assert(strlen(convnd_last_error()) > 100 && strlen(convnd_last_error()) < sizeof big - 1);
}

static void *set_error_in_thread(void *arg) {
    (void)arg;
    convnd_error(CONVND_ERR_DEVICE, "other thread");
    return (void *)(intptr_t)(strcmp(convnd_last_error(), "other thread") == 0);
}

Test(errors, message_is_per_thread) {
    convnd_error(CONVND_ERR_INVALID_ARGUMENT, "this thread");
    pthread_t thread;
    void *seen = NULL;
    cr_assert_eq(pthread_create(&thread, NULL, set_error_in_thread, NULL), 0);
    cr_assert_eq(pthread_join(thread, &seen), 0);
    cr_assert_eq((intptr_t)seen, 1);
    cr_assert_str_eq(convnd_last_error(), "this thread");
}
