/* Reduced copies of a problem (bench/reduce.h). */
#include <string.h>

#include "reduce.h"

/* Validation copies: up to 2 images (so batch indexing is checked), about 16 outputs per dim
 * in 2-D, 256 in 1-D and 6 in 3-D, and at most 2e8 multiply-adds (well under a second for
 * the CPU reference, which runs once per problem). */
const bench_reduce_limits bench_validation_limits = {
    .max_n = 2, .max_channels = 0, .max_extent = {256, 16, 6}, .max_macs = 2e8};

/* --small: one image, at most 32 channels, 8x8 (2-D), 4x4x4 (3-D) or 64 (1-D) outputs and
 * at most 3e5 multiply-adds, so that the emulated device runs every candidate in about a
 * second per problem. */
const bench_reduce_limits bench_small_limits = {
    .max_n = 1, .max_channels = 32, .max_extent = {64, 8, 4}, .max_macs = 3e5};

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* Floor division for a possibly negative numerator, positive d. */
static int64_t floor_div(int64_t a, int64_t d) {
    return a >= 0 ? a / d : -((-a + d - 1) / d);
}

double bench_problem_macs(const convnd_problem *p) {
    double flops = 0.0;
    if (convnd_flops(p, &flops) != CONVND_OK) return 0.0;
    return flops / 2.0;
}

/* Input size of dim t (in the original problem p) whose output extent is about `target`,
 * at most the original input size and giving an output of at least 1. */
static int64_t input_for_extent(const convnd_problem *p, int32_t t, int64_t target) {
    const int64_t I = p->input[t], S = p->stride[t], P0 = p->pad_before[t], P1 = p->pad_after[t];
    const int64_t E = p->dilation[t] * (p->kernel[t] - 1) + 1;
    if (p->mode != CONVND_TRANSPOSED) { /* forward and wgrad: the forward geometry */
        /* O = (I + P0 + P1 - E) / S + 1 with remainder r: rebuild I from O and r */
        const int64_t r = (I + P0 + P1 - E) % S;
        const int64_t O_orig = (I + P0 + P1 - E) / S + 1;
        int64_t O = min64(max64(target, 1), O_orig);
        /* the smallest O whose input is at least 1 */
        const int64_t O_min = floor_div(1 - E + P0 + P1 - r + S - 1, S) + 1;
        O = min64(max64(O, O_min), O_orig);
        return (O - 1) * S + E - P0 - P1 + r;
    }
    /* transposed: O = (I - 1) * S + E - P0 - P1 */
    int64_t In = floor_div(max64(target, 1) - E + P0 + P1, S) + 1;
    In = min64(max64(In, 1), I);
    while (In < I && (In - 1) * S + E - P0 - P1 < 1)
        ++In;
    return In;
}

/* Output extents of q (dims entries). */
static int outputs(const convnd_problem *q, int64_t out[CONVND_MAX_DIMS]) {
    return convnd_output_size(q, out) == CONVND_OK;
}

static void reduce_channels(const convnd_problem *p, int64_t max_channels, convnd_problem *q) {
    if (max_channels <= 0 || p->groups <= 0) return;
    int64_t g = p->groups, cig = p->C_in / g, cog = p->C_out / g;
    const int64_t widest = max64(max64(cig, cog), 1);
    const int64_t gmax = max64(1, max_channels / widest);
    /* a grouped problem stays grouped */
    g = min64(g, max64(gmax, p->groups > 1 ? 2 : 1));
    const int64_t cap = max64(1, max_channels / g);
    cig = min64(cig, cap);
    cog = min64(cog, cap);
    q->groups = g;
    q->C_in = g * cig;
    q->C_out = g * cog;
}

convnd_status bench_reduce(const convnd_problem *p, const bench_reduce_limits *lim,
                           convnd_problem *out) {
    convnd_status s = convnd_validate(p);
    if (s != CONVND_OK) return s;
    convnd_problem q = *p;
    q.N = min64(p->N, max64(lim->max_n, 1));
    reduce_channels(p, lim->max_channels, &q);

    int64_t target[CONVND_MAX_DIMS];
    for (int32_t t = 0; t < p->dims; ++t)
        target[t] = lim->max_extent[p->dims - 1];
    for (int iter = 0; iter < 256; ++iter) {
        for (int32_t t = 0; t < p->dims; ++t)
            q.input[t] = input_for_extent(p, t, target[t]);
        if (bench_problem_macs(&q) <= lim->max_macs) break;
        int64_t o[CONVND_MAX_DIMS];
        if (!outputs(&q, o)) break;
        /* halve the widest output extent; then the batch; then give up (channels are kept) */
        int32_t widest = -1;
        for (int32_t t = 0; t < p->dims; ++t)
            if (o[t] > 1 && (widest < 0 || o[t] > o[widest])) widest = t;
        if (widest >= 0 && target[widest] > 1) {
            target[widest] = max64(1, min64(target[widest], o[widest]) / 2);
        } else if (q.N > 1) {
            q.N = 1;
        } else {
            break;
        }
    }
    s = convnd_validate(&q);
    if (s == CONVND_OK) *out = q;
    return s;
}
