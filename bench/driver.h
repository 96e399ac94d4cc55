/* One problem through every candidate: validate each on a reduced copy (FAILED rows are never
 * timed), time the rest on the full problem, then the metrics and ratios. */
#ifndef CONVND_BENCH_DRIVER_H
#define CONVND_BENCH_DRIVER_H

#include <stdio.h>
#include "candidate.h"
#include "ceilings.h"
#include "report.h"
#include "suite.h"
#include "timing.h"

typedef struct bench_config {
    int32_t small; /* run the --small reduction of each problem */
    uint64_t seed; /* data seed (a fresh one per run unless --seed) */
    bench_timing_config timing;
    int32_t max_sets; /* input sets rotated through while timing */
    size_t l2_bytes;  /* rotate past this (0: no rotation) */
    bench_ceilings ceilings;
    const char *device_label; /* "GPU" or "EMULATED" */
    const char *baseline;     /* the plot's reference series ("cuDNN", "direct") */
    FILE *log;                /* progress lines, or NULL */
} bench_config;

/* The problem actually timed: bp->p, or its --small reduction. */
convnd_status bench_timed_problem(const bench_problem *bp, const bench_config *cfg,
                                  convnd_problem *out);

/* Writes rows[0..n) (one per candidate) for problem bp. */
void bench_run_problem(const bench_problem *bp, const bench_candidate *cands, int32_t n,
                       const bench_config *cfg, bench_row *rows);

/* Fills vs_best_peer and vs_baseline of the n rows of one problem, and the derived metrics
 * (TFLOP/s, GB/s, % of ceilings) of every timed row. */
void bench_finish_rows(bench_row *rows, int32_t n, const bench_config *cfg);

#endif
