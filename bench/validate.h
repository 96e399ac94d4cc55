/* The validation step: before a candidate is timed, it runs a reduced copy of the problem
 * (bench/reduce.h) on fresh random data, with its output poisoned (NaN), and must match the
 * CPU reference (tests/ref) within the dtype's tolerance in every element. A candidate that
 * fails is reported FAILED and never timed (llm.c's habit). */
#ifndef CONVND_BENCH_VALIDATE_H
#define CONVND_BENCH_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include "candidate.h"

/* The reduced problem's inputs and exact result, computed once and shared by every candidate. */
typedef struct bench_reference {
    convnd_problem p;
    convnd_tensor_desc xd, wd, yd;
    void *x_host, *w_host, *y_host; /* y_host: a candidate's result */
    double *exact, *mag;            /* f64 result and |terms| (convnd_ref_conv_f64) */
    void *x_dev, *w_dev, *y_dev;    /* on the active device */
} bench_reference;

convnd_status bench_reference_make(const convnd_problem *reduced, uint64_t seed,
                                   bench_reference *ref, char *err, size_t err_len);
void bench_reference_free(bench_reference *ref);

typedef struct bench_validation {
    int32_t passed;
    int32_t unsupported; /* the candidate cannot run the reduced problem (not a failure) */
    double rel_l2;       /* ||y - ref|| / ||ref|| over the written elements */
    double worst;        /* max |y - ref| / tolerance bound (<= 1 passes) */
    int64_t unwritten;   /* elements left NaN/inf (the poison) */
    int64_t outside;     /* finite elements outside the bound */
    char message[256];
} bench_validation;

/* Prepares c on the reduced problem, poisons y, runs it once and compares. Returns CONVND_OK
 * when the comparison ran (passed or not: see out); another status when the candidate itself
 * errored (out->message says how; the row is an error, never timed). */
convnd_status bench_validate(const bench_candidate *c, bench_reference *ref, bench_validation *out);

/* The tolerance of one output: |y - ref| <= u_out*|ref| + mag*(2*u_in + 2*(K_red + 8)*2^-23)
 * + tiny, the bound derived in tests/support/test_tolerance.h (rounding of the store, TF32
 * inputs, worst-case f32 accumulation over K_red = C_in/g * prod(K) terms). */
double bench_tolerance(const convnd_problem *p, double ref, double mag);

#endif
