/* Reduced copies of a problem: the same parameters (mode, kernel, stride, dilation, padding,
 * group structure, dtype, layouts), with a smaller batch, spatial size and (optionally) channel
 * count. Used for the validation step (a copy the CPU reference computes quickly) and for
 * --small (a suite the emulated device runs in seconds). */
#ifndef CONVND_BENCH_REDUCE_H
#define CONVND_BENCH_REDUCE_H

#include "convnd.h"

typedef struct bench_reduce_limits {
    int64_t max_n;                       /* batch */
    int64_t max_channels;                /* C_in and C_out; 0 keeps them */
    int64_t max_extent[CONVND_MAX_DIMS]; /* target extent per spatial dim, by dims-1 */
    double max_macs;                     /* multiply-adds of the whole problem */
} bench_reduce_limits;

/* Limits of the validation copy (the CPU reference computes it in well under a second; the
 * channel counts are kept, so that a bug in a schedule's reduction over C_in still shows). */
extern const bench_reduce_limits bench_validation_limits;
/* Limits of --small (the emulated device runs every candidate on it in about a second). */
extern const bench_reduce_limits bench_small_limits;

/* out = p reduced under lim. Spatial sizes are chosen so that the output extent is at most
 * the target (forward: the input is rebuilt from the output with the same remainder
 * (I + P0 + P1 - E) mod S, so an unused trailing input row stays unused); channels keep the
 * channels per group and drop groups first. Never grows a dimension. Returns the validation
 * status of the result (OK for any valid p). */
convnd_status bench_reduce(const convnd_problem *p, const bench_reduce_limits *lim,
                           convnd_problem *out);

/* Multiply-adds of p (FLOPs / 2), 0 on an invalid problem. */
double bench_problem_macs(const convnd_problem *p);

#endif
