/* Folding a constant zero pad (PyTorch F.pad list order, last dim first) into the forward conv
 * that follows it (SPEC section 7), crops included; refusals carry a reason. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "convnd_bind.h"
#include "test_bind_expect.h"

#define COUNT(...) ((int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define PADS(...) convnd_pads_of(COUNT(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

/* conv2d over a padded [1, 3, 12, 13] tensor, 3x3 kernel, padding 1. */
static convnd_problem padded_conv2d(void) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    p.C_in = 3;
    p.C_out = 5;
    p.input[0] = 12;
    p.input[1] = 13;
    p.kernel[0] = p.kernel[1] = 3;
    for (int t = 0; t < 2; ++t)
        p.pad_before[t] = p.pad_after[t] = 1;
    return p;
}

static void output_of(const convnd_problem *p, int64_t O[3]) {
    expect_ok(convnd_output_size(p, O));
}

Test(bind_pad, folds_last_dim_first) {
    convnd_problem p = padded_conv2d();
    int64_t before[3], after[3];
    output_of(&p, before);
    /* F.pad(x, [1, 2, 3, 4]): W gets 1 / 2, H gets 3 / 4; x was [1, 3, 5, 10] */
    const convnd_pads pad = PADS(1, 2, 3, 4);
    expect_ok(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 5, 10);
    expect_dims(p, pad_before, 4, 2);
    expect_dims(p, pad_after, 5, 3);
    output_of(&p, after);
    cr_assert(before[0] == after[0] && before[1] == after[1], "the output shape must not change");
    /* only the last dim */
    p = padded_conv2d();
    const convnd_pads last = PADS(0, 3);
    expect_ok(convnd_fold_pad(&p, &last, CONVND_PAD_CONSTANT, -0.0));
    expect_dims(p, input, 12, 10);
    expect_dims(p, pad_before, 1, 1);
    expect_dims(p, pad_after, 1, 4);
    /* zero entries on N and C are fine */
    p = padded_conv2d();
    const convnd_pads full = PADS(1, 1, 0, 0, 0, 0, 0, 0);
    expect_ok(convnd_fold_pad(&p, &full, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 12, 11);
    /* an empty pad list changes nothing */
    p = padded_conv2d();
    const convnd_pads none = {0, {0}};
    expect_ok(convnd_fold_pad(&p, &none, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 12, 13);
}

Test(bind_pad, negative_entries_crop) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = 2;
    p.input[0] = 7; /* F.pad(x, [-1, -2]) of a length-10 x */
    p.kernel[0] = 3;
    const convnd_pads crop = PADS(-1, -2);
    expect_ok(convnd_fold_pad(&p, &crop, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 10);
    expect_dims(p, pad_before, -1);
    expect_dims(p, pad_after, -2);
    int64_t O[3];
    output_of(&p, O);
    cr_assert_eq(O[0], 5); /* 10 - 3 - 3 + 1, as conv1d on the cropped length 7 */
}

Test(bind_pad, crops_fold_where_the_conv_does_not_zero_pad) {
    convnd_problem p = padded_conv2d();
    p.pad_before[0] = 0;
    p.pad_after[0] = -2; /* the conv itself crops the end of dim 0 */
    const convnd_pads crop = PADS(0, 0, -3, -1);
    expect_ok(convnd_fold_pad(&p, &crop, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 16, 13);
    expect_dims(p, pad_before, -3, 1);
    expect_dims(p, pad_after, -3, 1);
    /* a zero pad before a cropping conv folds as well: 2 zeros, then the conv drops 1 */
    p = padded_conv2d();
    p.pad_before[1] = -1;
    const convnd_pads pad = PADS(2, 0);
    expect_ok(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 12, 11);
    expect_dims(p, pad_before, 1, 1);
    /* the crop overflows the input size */
    p = padded_conv2d();
    p.pad_before[0] = p.pad_after[0] = 0;
    const convnd_pads overflow = PADS(0, 0, -5, INT64_MIN + 1);
    expect_status(convnd_fold_pad(&p, &overflow, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_OVERFLOW,
                  "into spatial dim 0", "overflows int64");
}

Test(bind_pad, three_d_video_vae_downsampling_pad) {
    /* asymmetric downsampling pad (0, 1, 0, 1, 0, 0) before a stride-2 3x3x3 conv */
    convnd_problem p;
    convnd_problem_init(&p, 3);
    p.C_in = p.C_out = 4;
    p.input[0] = 5;
    p.input[1] = 9;
    p.input[2] = 9;
    p.kernel[0] = p.kernel[1] = p.kernel[2] = 3;
    p.stride[1] = p.stride[2] = 2;
    const convnd_pads pad = PADS(0, 1, 0, 1, 0, 0);
    expect_ok(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 0.0));
    expect_dims(p, input, 5, 8, 8);
    expect_dims(p, pad_before, 0, 0, 0);
    expect_dims(p, pad_after, 0, 1, 1);
}

Test(bind_pad, refusals_leave_the_problem_untouched) {
    const convnd_problem original = padded_conv2d();
    convnd_problem p = original;
    const convnd_pads pad = PADS(1, 1);
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_REFLECT, 0.0), CONVND_ERR_UNSUPPORTED,
                  "pad mode=reflect cannot be folded");
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_REPLICATE, 0.0), CONVND_ERR_UNSUPPORTED,
                  "mode=replicate");
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_CIRCULAR, 0.0), CONVND_ERR_UNSUPPORTED,
                  "mode=circular");
    expect_status(convnd_fold_pad(&p, &pad, (convnd_pad_mode)9, 0.0), CONVND_ERR_INVALID_ARGUMENT,
                  "pad mode=9");
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 1.5), CONVND_ERR_UNSUPPORTED,
                  "pad value=1.5 cannot be folded");
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, NAN), CONVND_ERR_UNSUPPORTED,
                  "pad value=nan");
    const convnd_pads on_c = PADS(0, 0, 0, 0, 1, 0);
    expect_status(convnd_fold_pad(&p, &on_c, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_UNSUPPORTED,
                  "pad[4]=1, pad[5]=0 pad dim 1 (C)");
    const convnd_pads on_n = PADS(0, 0, 0, 0, 0, 0, 0, 2);
    expect_status(convnd_fold_pad(&p, &on_n, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_UNSUPPORTED,
                  "pad dim 0 (N)");
    const convnd_pads odd = PADS(1, 1, 1), too_long = PADS(0, 0, 0, 0, 0, 0, 0, 0, 1, 1);
    expect_status(convnd_fold_pad(&p, &odd, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_INVALID_ARGUMENT,
                  "pad=[1, 1, 1] has length 3");
    expect_status(convnd_fold_pad(&p, &too_long, CONVND_PAD_CONSTANT, 0.0),
                  CONVND_ERR_INVALID_ARGUMENT,
                  "has length 10; expected an even length of at most 8");
    /* the pad is larger than the conv's input: x would have 12 - 7 - 6 = -1 rows */
    const convnd_pads huge = PADS(0, 0, 7, 6);
    expect_status(convnd_fold_pad(&p, &huge, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_INVALID_ARGUMENT,
                  "pad 7/6 on spatial dim 0", "input[0]=12: x would have size -1 < 1");
    const convnd_pads overflow = PADS(INT64_MAX, 0); /* conv pad 1 + INT64_MAX */
    expect_status(convnd_fold_pad(&p, &overflow, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_OVERFLOW,
                  "folding pad 9223372036854775807/0 into spatial dim 1", "overflows int64");
    /* a crop where the conv zero-pads the same side is not a padding of x */
    const convnd_pads crop = PADS(0, 0, -1, 0);
    expect_status(convnd_fold_pad(&p, &crop, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_UNSUPPORTED,
                  "pad -1/0 crops spatial dim 0 where the conv pads 1/1");
    p.mode = CONVND_TRANSPOSED;
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_UNSUPPORTED,
                  "transposed conv");
    p.mode = CONVND_FORWARD;
    cr_assert(memcmp(&p, &original, sizeof p) == 0, "a refused fold changed the problem");
    expect_status(convnd_fold_pad(NULL, &pad, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_NULL_POINTER,
                  "problem is NULL");
    expect_status(convnd_fold_pad(&p, NULL, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_NULL_POINTER,
                  "pad list is NULL");
    p.groups = 2; /* an invalid problem is reported as such */
    expect_status(convnd_fold_pad(&p, &pad, CONVND_PAD_CONSTANT, 0.0), CONVND_ERR_INVALID_ARGUMENT,
                  "groups=2 does not divide C_in=3");
}
