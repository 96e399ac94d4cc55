#include "test_random_problem.h"

int64_t test_problem_outputs(const convnd_problem *p) {
    int64_t out[CONVND_MAX_DIMS];
    if (convnd_output_size(p, out) != CONVND_OK) return -1;
    int64_t n = p->N * p->C_out;
    for (int32_t t = 0; t < p->dims; ++t)
        n *= out[t];
    return n;
}

int64_t test_problem_macs(const convnd_problem *p) {
    int64_t k = p->C_in / p->groups;
    for (int32_t t = 0; t < p->dims; ++t)
        k *= p->kernel[t];
    return test_problem_outputs(p) * k;
}

static int64_t pick(test_rng *r, int64_t lo, int64_t hi) {
    return test_rng_int(r, lo, hi);
}

static void draw(test_rng *r, convnd_problem *p) {
    convnd_problem_init(p, (int32_t)pick(r, 1, 3));
    p->mode = pick(r, 0, 1) ? CONVND_TRANSPOSED : CONVND_FORWARD;
    p->N = pick(r, 1, 2);
    p->groups = pick(r, 1, 3);
    const int64_t cin_g = pick(r, 0, 3) == 0 ? 1 : pick(r, 1, 5); /* often depthwise-like */
    p->C_in = p->groups * cin_g;
    p->C_out = p->groups * pick(r, 1, 5);
    for (int32_t t = 0; t < p->dims; ++t) {
        /* higher dims get smaller sizes so a 3-D problem stays small */
        p->kernel[t] = pick(r, 1, p->dims == 3 ? 3 : 4);
        p->stride[t] = pick(r, 1, 3);
        p->dilation[t] = pick(r, 1, 3);
        p->pad_before[t] = pick(r, -2, 3);
        p->pad_after[t] = pick(r, -2, 3);
        p->input[t] = pick(r, 1, p->dims == 1 ? 24 : p->dims == 2 ? 10 : 6);
    }
    p->dtype = (convnd_dtype)pick(r, 0, 2);
    p->x_layout = (convnd_layout)pick(r, 0, 1);
    p->w_layout = (convnd_layout)pick(r, 0, 1);
    p->y_layout = (convnd_layout)pick(r, 0, 2);
    p->has_bias = (int32_t)pick(r, 0, 1);
    p->has_z = (int32_t)pick(r, 0, 1);
    p->alpha = pick(r, 0, 1) ? 1.0f : 0.75f;
    p->beta = p->has_z ? (pick(r, 0, 1) ? 1.0f : -0.5f) : 0.0f;
    p->activation = (convnd_activation)pick(r, 0, 3);
    p->math =
        p->dtype == CONVND_F32 && pick(r, 0, 1) ? CONVND_MATH_ALLOW_TF32 : CONVND_MATH_DEFAULT;
    /* one draw in eight: a dense channels-last forward problem with channels in whole 16-byte
     * rows and no cropping (what TMA-fed schedules such as hopper_igemm accept) */
    if (pick(r, 0, 7) == 0) {
        p->mode = CONVND_FORWARD;
        p->groups = 1;
        p->C_in = 8 * pick(r, 1, 2);
        p->C_out = 8 * pick(r, 1, 2);
        p->x_layout = p->w_layout = CONVND_CHANNELS_LAST;
        p->y_layout = CONVND_LAYOUT_AUTO;
        for (int32_t t = 0; t < p->dims; ++t) {
            if (p->pad_before[t] < 0) p->pad_before[t] = 0;
            if (p->pad_after[t] < 0) p->pad_after[t] = 0;
        }
        if (p->dtype == CONVND_F32) p->math = CONVND_MATH_ALLOW_TF32;
    }
}

void test_random_problem(test_rng *r, const test_problem_limits *lim, convnd_problem *p) {
    for (;;) {
        draw(r, p);
        if (convnd_validate(p) != CONVND_OK) continue;
        const int64_t outputs = test_problem_outputs(p);
        if (outputs < 1 || outputs > lim->max_outputs) continue;
        if (test_problem_macs(p) > lim->max_macs) continue;
        return;
    }
}
