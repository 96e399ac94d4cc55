/* One conv case for tests: seeded inputs on the host and the device, the exact reference, and
 * a run of conv_nd (forced schedule) with y poisoned first, checked element by element.
 *
 *   test_conv_case c;
 *   if (!test_case_init(&c, &p, 0, seed, err, sizeof err)) ...;
 *   test_case_run(&c, "direct:t128");      conv_nd's status
 *   test_case_check(&c, msg, sizeof msg);  1 when every element is written and within tolerance
 *   test_case_free(&c);
 */
#ifndef CONVND_TEST_CONV_CASE_H
#define CONVND_TEST_CONV_CASE_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

typedef struct test_conv_case {
    convnd_problem p; /* y_layout resolved */
    int z_in_place;   /* z is y: y starts out holding z */
    convnd_tensor_desc xd, wd, yd, zd;
    /* elements from each base pointer to the end of its last element: numel when packed, more
     * for a view (SPEC §11), whose gaps hold random values (x, z) or poison (y) */
    int64_t x_span, y_span, z_span;
    int64_t bias_n;
    size_t esize;
    void *hx, *hw, *hb, *hz;      /* host inputs (hz: also the in-place start value of y) */
    void *dx, *dw, *db, *dz, *dy; /* device */
    void *hy;                     /* y of the last run */
    double *ref, *mag;            /* exact result and magnitudes, indexed like y (y_span) */
    /* input rounding of the kernel's x beyond the case's (0 by default): SPEC §15's chains
     * that end unrounded multiply f32 values, the case's x holds them rounded to the dtype */
    double u_in;
} test_conv_case;

/* Valid p only. Fills x, w, bias and z with seeded random values and computes the reference.
 * Returns 1, or 0 with a message. */
int test_case_init(test_conv_case *c, const convnd_problem *p, int z_in_place, uint64_t seed,
                   char *err, size_t err_len);
void test_case_free(test_conv_case *c);

/* Replaces x and w (host data of the case's dtype, x_span / wd.numel; NULL keeps one), uploads
 * them and recomputes the reference. Returns 1, or 0 with a message. */
int test_case_set_inputs(test_conv_case *c, const void *hx, const void *hw, char *err,
                         size_t err_len);

/* Poisons y (NaN bit pattern; or writes z into it when in place) and the workspace, runs conv_nd
 * with `spec` forced (NULL: the planner), downloads y. Returns conv_nd's status. */
convnd_status test_case_run(test_conv_case *c, const char *spec);

/* SPEC §12: runs p, a problem with a prefix and/or a state whose conv over X = cat(x_prefix, x)
 * is the case's problem (convnd_ref_io_input's q, with X as the case's x), through a plan with
 * spec forced and convnd_plan_execute_io on the given device x_prefix, x, x_suffix and state and
 * the case's w, bias, z and y (y poisoned first, as test_case_run). Returns the status. */
convnd_status test_case_run_io(test_conv_case *c, const convnd_problem *p, const char *spec,
                               const void *x_prefix, const void *x, const void *x_suffix,
                               void *state);

/* SPEC §15: test_case_run_io for a p with an input prologue, its f32 operands given (device
 * pointers, NULL for those no step reads); the case's x is then p's x through the prologue. */
convnd_status test_case_run_prologue(test_conv_case *c, const convnd_problem *p, const char *spec,
                                     const void *x_prefix, const void *x, const void *x_suffix,
                                     void *state, const float *pro_r, const float *pro_a,
                                     const float *pro_b);

/* y of the last run against the reference: 1 when every element was written, is finite and
 * within test_tolerance, and a view's gaps were left alone; else 0 and msg names the first bad
 * element and how many are bad. */
int test_case_check(const test_conv_case *c, char *msg, size_t msg_len);

/* The largest |y - ref| / tolerance over y's elements (<= 1: within tolerance), y being the last
 * run's result; with other (a host copy of another run's y, y_span elements) the largest
 * |y - other| / (the sum of both tolerances, 2x the bound). INFINITY when an element is
 * unwritten or not finite. */
double test_case_worst(const test_conv_case *c, const void *other);

/* The poison pattern's bits for dtype dt (a NaN), and a buffer of n such elements. */
uint32_t test_poison_bits(convnd_dtype dt);
void test_poison_fill(convnd_dtype dt, void *host, int64_t n);
/* 1 when element i of host holds the poison pattern. */
int test_is_poison(convnd_dtype dt, const void *host, int64_t i);

/* Device buffer of n elements of dt holding host's values (NULL host: poison). NULL on failure.
 * At least one element is allocated, so a zero-size tensor still has a distinct pointer. */
void *test_device_upload(convnd_dtype dt, const void *host, int64_t n);

#endif
