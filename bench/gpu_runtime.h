/* The CUDA runtime pieces the harness needs on a GPU: the L2 size (to rotate inputs past it)
 * and event timers. Without CUDA in the build these report "no GPU". */
#ifndef CONVND_BENCH_GPU_RUNTIME_H
#define CONVND_BENCH_GPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

/* L2 cache bytes of the current GPU (0 when none). */
size_t bench_gpu_l2_bytes(void);

/* `pairs` start/stop event pairs, recorded around each timed run and read after the last one,
 * so that the host never waits between runs. */
typedef struct bench_gpu_timer bench_gpu_timer;
convnd_status bench_gpu_timer_create(bench_gpu_timer **t, int32_t pairs);
convnd_status bench_gpu_timer_start(bench_gpu_timer *t, int32_t i, void *stream);
convnd_status bench_gpu_timer_stop(bench_gpu_timer *t, int32_t i, void *stream);
/* Milliseconds between start and stop of pair i (waits for the stop event). */
convnd_status bench_gpu_timer_read(bench_gpu_timer *t, int32_t i, double *ms);
void bench_gpu_timer_destroy(bench_gpu_timer *t);

/* rows rows of width bytes from src (rows spitch apart) to dst (dpitch apart), device memory of
 * the active device: cudaMemcpy2DAsync on stream on a GPU, memcpy on the emulated device. The
 * copy-based peers' cat and slice copies. */
convnd_status bench_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t rows, void *stream);

#endif
