/* convnd-bench --host-overhead N: the host cost of a call up to the kernel launch. */
#ifndef CONVND_BENCH_HOST_OVERHEAD_H
#define CONVND_BENCH_HOST_OVERHEAD_H

#include <stdio.h>
#include "suite.h"

/* For each problem, ns per call (best of 5 batches of `iterations`) of a bare launch (the
 * schedule's launcher on prebuilt arguments), convnd_plan_execute and conv_nd. On the emulated
 * device launches return right after their configuration check (no block runs), so the figures
 * are host work only. Returns 0 when every call succeeded. */
int bench_host_overhead(const bench_problem *problems, int count, int iterations, FILE *out);

#endif
