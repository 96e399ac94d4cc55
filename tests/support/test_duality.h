/* The duality identity of SPEC §4 for tests: <F(x), y> = <x, T(y)> between a forward conv F and
 * its transposed dual T, checked on kernel outputs within the outputs' own error bounds. */
#ifndef CONVND_TEST_DUALITY_H
#define CONVND_TEST_DUALITY_H

#include <stdint.h>
#include "convnd.h"
#include "test_conv_case.h"

/* The transposed problem T that maps F's output size back to F's input size: same S, D, P0,
 * weight tensor read as [C_in_T = C_out_F, C_out_T/g = C_in_F/g, K...], and P1 - r with
 * r = (I + P0 + P1 - E) mod S. T's x has F's y layout and T's y has F's x layout, so inner
 * products run over matching memory offsets. f must be valid. */
convnd_problem test_dual_problem(const convnd_problem *f);

/* sum a[i] * b[i] over n elements of dtype dt, in f64 */
double test_dot(convnd_dtype dt, const void *a, const void *b, int64_t n);

/* Sum over c's outputs of |weight| * (that output's error bound): how far a computed inner
 * product <c's y, weight> may be from the exact one. */
double test_dot_error_bound(const test_conv_case *c, const void *weight);

/* Sets up F = f and T = its dual with T's weight = F's weight and fresh random inputs from seed,
 * runs F by f_spec and T by t_spec in every thread order, and checks <F(x), y> = <x, T(y)>
 * (y = T's input) within the two outputs' bounds (cr_expect; messages start with label). */
void test_check_duality(const convnd_problem *f, const char *f_spec, const char *t_spec,
                        uint64_t seed, const char *label);

#endif
