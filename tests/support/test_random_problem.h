/* Seeded random valid problems covering the SPEC's features, kept small for the emulator. */
#ifndef CONVND_TEST_RANDOM_PROBLEM_H
#define CONVND_TEST_RANDOM_PROBLEM_H

#include <stdint.h>
#include "convnd.h"
#include "test_random.h"

typedef struct test_problem_limits {
    int64_t max_outputs; /* elements of y */
    int64_t max_macs;    /* multiply-adds (outputs * C_in/g * prod(K)) */
} test_problem_limits;

/* Draws until a valid problem within the limits comes up: dims 1-3, both modes, N 1-2, groups
 * 1-3 (sometimes depthwise), channels per group 1-5, kernel 1-4, stride 1-3, dilation 1-3,
 * padding -2..3 on each side (so cropping and extension), any dtype/layouts/epilogue/math; one
 * draw in eight is dense channels-last with 8 or 16 channels and no cropping (the TMA domain). */
void test_random_problem(test_rng *r, const test_problem_limits *lim, convnd_problem *p);

/* y's element count and multiply-adds of a valid problem. */
int64_t test_problem_outputs(const convnd_problem *p);
int64_t test_problem_macs(const convnd_problem *p);

#endif
