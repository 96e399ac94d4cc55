/* Timing a prepared candidate on the full problem.
 *
 * GPU: CUDA events around each run, warm-up first, the median of the repeats; the inputs
 * rotate among as many (x, w) sets as it takes to exceed twice the L2, so that a run never
 * finds its inputs in the cache left by the previous one; random data, never zeros.
 * Emulated device: the host clock around run + synchronize, no warm-up, 1 to 3 repeats
 * (until 300 ms): a slow emulated candidate runs once. */
#ifndef CONVND_BENCH_TIMING_H
#define CONVND_BENCH_TIMING_H

#include <stddef.h>
#include <stdint.h>
#include "candidate.h"

#define BENCH_MAX_SETS 64
#define BENCH_MAX_REPS 200

typedef struct bench_timing_config {
    int32_t warmup;   /* runs before timing */
    int32_t min_reps; /* timed runs: enough for target_ms, within [min_reps, max_reps] */
    int32_t max_reps;
    double target_ms;
} bench_timing_config;

extern const bench_timing_config bench_timing_gpu, bench_timing_emulated;

/* Rotating device inputs of one problem, and its output. */
typedef struct bench_buffers {
    int32_t sets;
    void *x[BENCH_MAX_SETS], *w[BENCH_MAX_SETS];
    void *y;
    size_t x_bytes, w_bytes, y_bytes;
} bench_buffers;

/* Allocates and fills the sets: enough to exceed 2 * l2_bytes (1 when l2_bytes is 0), at most
 * max_sets. */
convnd_status bench_buffers_make(const convnd_problem *p, size_t l2_bytes, int32_t max_sets,
                                 uint64_t seed, bench_buffers *b, char *err, size_t err_len);
void bench_buffers_free(bench_buffers *b);

typedef struct bench_timing {
    double median_ms, min_ms, max_ms;
    int32_t reps;
} bench_timing;

/* Times in (prepared on the buffers' problem) on the active device. */
convnd_status bench_time(bench_instance *in, const bench_buffers *b, const bench_timing_config *cfg,
                         bench_timing *out);

/* The host's monotonic clock in milliseconds. */
double bench_now_ms(void);

/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int32_t n);

#endif
