/* How far a kernel's output may be from the exact (f64) result, derived from the dtype and the
 * accumulation, per output element.
 *
 *   |y - ref| <= u_out*|ref| + slope * mag * (2*u_in + C_SAFETY*(K_red + E_OPS)*u_acc) + tiny
 *
 * - ref, mag: the reference's exact output and magnitude |alpha|*sum|x*w| + |bias| + |beta*z|
 *   (convnd_ref_conv_f64).
 * - u_out: unit roundoff of the single final store: 2^-24 f32, 2^-11 f16, 2^-8 bf16.
 * - u_in: input rounding inside the kernel. 0 by default: f32 products are exact in FMA, and
 *   f16/bf16 products (11x11 or 8x8 significand bits) are exact in f32. With
 *   CONVND_MATH_ALLOW_TF32 on f32, x and w may be rounded to TF32 (10 stored bits); 2^-10
 *   also covers truncation instead of rounding, and a product of two rounded inputs is off by
 *   at most about 2*u_in relative.
 * - u_acc: f32 accumulation. A sum of K_red terms in any order is within (K_red-1)*u*sum|terms|
 *   (the classic a-priori bound); u = 2^-23 rather than 2^-24 so that tensor cores whose adders
 *   truncate instead of rounding stay inside the bound.
 * - K_red = (C_in/g) * prod(K): the terms per output (forward; transposed outputs receive at
 *   most that many); wgrad: N * prod(O), the terms of a dw element. E_OPS = 8 covers the epilogue's
 * roundings (alpha*, +bias, fma beta*z) and the f32 activation's error (expf/erff a few ulps,
 * absolute error at most ~u*|v| <= u*mag).
 * - slope: CONVND_REF_ACT_MAX_SLOPE with an activation (an error before it grows at most that
 *   much), else 1. C_SAFETY = 2: the bound is a worst case already; the margin only absorbs
 *   double-counting subtleties and costs nothing in detection, since a wrong index or a missing
 *   tap errs by O(mag), orders of magnitude above K_red*u_acc*mag for our sizes.
 * - tiny: half the dtype's smallest subnormal spacing, where the relative bound on the store
 *   does not hold (f16 outputs below 2^-14). */
#ifndef CONVND_TEST_TOLERANCE_H
#define CONVND_TEST_TOLERANCE_H

#include "convnd.h"

#define TEST_TOL_C_SAFETY 2.0
#define TEST_TOL_E_OPS 8.0

typedef struct test_tolerance {
    double u_out, u_in, u_acc, k_red, slope, tiny;
} test_tolerance;

/* The constants for problem p. */
test_tolerance test_tolerance_for(const convnd_problem *p);

/* The bound for one element. */
double test_tolerance_bound(const test_tolerance *t, double ref, double mag);

/* Unit roundoff of a dtype's store. */
double test_unit_roundoff(convnd_dtype dt);

#endif
