/* Timing (bench/timing.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "operands.h"
#include "gpu_runtime.h"
#include "random_fill.h"

const bench_timing_config bench_timing_gpu = {
    .warmup = 3, .min_reps = 10, .max_reps = 100, .target_ms = 200.0};
/* Emulated: no warm-up (no module load or cache to warm), repeats while under 300 ms: a
 * candidate that takes seconds on the CPU runs once. */
const bench_timing_config bench_timing_emulated = {
    .warmup = 0, .min_reps = 1, .max_reps = 3, .target_ms = 300.0};

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int32_t n) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_buffers_free(bench_buffers *b) {
    for (int32_t i = 0; i < BENCH_MAX_SETS; ++i) {
        bench_free(&b->x[i]);
        bench_free(&b->w[i]);
    }
    bench_free(&b->y);
    memset(b, 0, sizeof *b);
}

convnd_status bench_buffers_make(const convnd_problem *p, size_t l2_bytes, int32_t max_sets,
                                 uint64_t seed, bench_buffers *b, char *err, size_t err_len) {
    memset(b, 0, sizeof *b);
    convnd_tensor_desc xd, wd, yd;
    convnd_status s = convnd_tensor_describe(p, CONVND_X, &xd);
    if (s == CONVND_OK) s = convnd_tensor_describe(p, bench_operand_tensor(p), &wd);
    if (s == CONVND_OK) s = convnd_tensor_describe(p, bench_output_tensor(p), &yd);
    if (s != CONVND_OK) {
        snprintf(err, err_len, "%s", convnd_last_error());
        return s;
    }
    b->x_bytes = (size_t)xd.bytes, b->w_bytes = (size_t)wd.bytes, b->y_bytes = (size_t)yd.bytes;
    const double set_bytes = (double)(b->x_bytes + b->w_bytes);
    int32_t sets = 1;
    if (l2_bytes && set_bytes > 0.0) {
        const double need = 2.0 * (double)l2_bytes / set_bytes + 1.0;
        sets = need > (double)max_sets ? max_sets : (int32_t)need;
    }
    if (sets < 1) sets = 1;
    if (sets > BENCH_MAX_SETS) sets = BENCH_MAX_SETS;
    /* one random host image per tensor, copied into every set */
    const size_t host_bytes = b->x_bytes > b->w_bytes ? b->x_bytes : b->w_bytes;
    void *host = malloc(host_bytes + 1);
    if (!host) {
        snprintf(err, err_len, "out of host memory (%zu bytes)", host_bytes);
        return CONVND_ERR_OUT_OF_MEMORY;
    }
    bench_rng rng = bench_rng_seed(seed);
    const int64_t block = (int64_t)1 << 22;
    for (int pass = 0; pass < 2 && s == CONVND_OK; ++pass) {
        const convnd_tensor_desc *d = pass == 0 ? &xd : &wd;
        void **dst = pass == 0 ? b->x : b->w;
        bench_fill_random_tiled(p->dtype, host, d->numel, block, &rng);
        for (int32_t i = 0; i < sets && s == CONVND_OK; ++i) {
            s = bench_alloc(&dst[i], (size_t)d->bytes);
            if (s == CONVND_OK && d->bytes) s = convnd_memcpy_h2d(dst[i], host, (size_t)d->bytes);
        }
    }
    free(host);
    if (s == CONVND_OK) s = bench_alloc(&b->y, b->y_bytes);
    if (s == CONVND_OK && b->y_bytes) s = convnd_memset(b->y, 0xFF, b->y_bytes);
    if (s != CONVND_OK) {
        snprintf(err, err_len, "device buffers (%d sets of %zu bytes): %s", (int)sets,
                 b->x_bytes + b->w_bytes, convnd_last_error());
        bench_buffers_free(b);
        return s;
    }
    b->sets = sets;
    return CONVND_OK;
}

double bench_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int32_t reps_for(const bench_timing_config *cfg, double one_ms) {
    double r = one_ms > 0.0 ? cfg->target_ms / one_ms : (double)cfg->max_reps;
    if (r < cfg->min_reps) r = cfg->min_reps;
    if (r > cfg->max_reps) r = cfg->max_reps;
    if (r > BENCH_MAX_REPS) r = BENCH_MAX_REPS;
    return (int32_t)r;
}

/* One run on set i, synchronized, in host milliseconds. */
static convnd_status host_timed_run(bench_instance *in, const bench_buffers *b, int32_t i,
                                    double *ms) {
    const int32_t set = i % b->sets;
    const double t0 = bench_now_ms();
    convnd_status s = bench_instance_run(in, b->x[set], b->w[set], b->y, NULL);
    if (s == CONVND_OK) s = convnd_synchronize(NULL);
    *ms = bench_now_ms() - t0;
    return s;
}

convnd_status bench_time(bench_instance *in, const bench_buffers *b, const bench_timing_config *cfg,
                         bench_timing *out) {
    memset(out, 0, sizeof *out);
    double first = 0.0, ms[BENCH_MAX_REPS];
    convnd_status s = CONVND_OK;
    /* warm-up: module load, handle creation and caches stay out of the numbers; the last one
     * also sizes the repeat count */
    for (int32_t i = 0; i < cfg->warmup && s == CONVND_OK; ++i)
        s = host_timed_run(in, b, i, &first);
    if (s != CONVND_OK) return s;
    int32_t reps = 0;
    if (convnd_active_device() == CONVND_DEVICE_GPU) {
        reps = reps_for(cfg, first);
        bench_gpu_timer *t = NULL;
        s = bench_gpu_timer_create(&t, reps);
        for (int32_t i = 0; i < reps && s == CONVND_OK; ++i) {
            const int32_t set = i % b->sets;
            s = bench_gpu_timer_start(t, i, NULL);
            if (s == CONVND_OK) s = bench_instance_run(in, b->x[set], b->w[set], b->y, NULL);
            if (s == CONVND_OK) s = bench_gpu_timer_stop(t, i, NULL);
        }
        for (int32_t i = 0; i < reps && s == CONVND_OK; ++i)
            s = bench_gpu_timer_read(t, i, &ms[i]);
        bench_gpu_timer_destroy(t);
    } else {
        /* the host clock: repeat until min_reps and target_ms are both reached */
        const int32_t cap = cfg->max_reps < BENCH_MAX_REPS ? cfg->max_reps : BENCH_MAX_REPS;
        double total = 0.0;
        while (s == CONVND_OK && reps < cap && (reps < cfg->min_reps || total < cfg->target_ms)) {
            s = host_timed_run(in, b, reps, &ms[reps]);
            total += ms[reps++];
        }
    }
    if (s != CONVND_OK) return s;
    out->reps = reps;
    out->median_ms = bench_median(ms, reps);
    out->min_ms = ms[0];
    out->max_ms = ms[reps - 1];
    return CONVND_OK;
}
