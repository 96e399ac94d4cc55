/* CUDA events and device properties for the harness (bench/gpu_runtime.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_runtime.h"

/* The emulated device's memory is host memory. */
static void host_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t rows) {
    for (size_t r = 0; r < rows; ++r)
        memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

#ifdef CONVND_HAVE_CUDA
#include <cuda_runtime_api.h>

struct bench_gpu_timer {
    int32_t pairs;
    cudaEvent_t *start, *stop;
};

static convnd_status cuda_fail(const char *what, cudaError_t e) {
    fprintf(stderr, "convnd-bench: %s: %s\n", what, cudaGetErrorString(e));
    return CONVND_ERR_DEVICE;
}

size_t bench_gpu_l2_bytes(void) {
    int dev = 0, l2 = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess) return 0;
    return (size_t)l2;
}

void bench_gpu_timer_destroy(bench_gpu_timer *t) {
    if (!t) return;
    for (int32_t i = 0; i < t->pairs; ++i) {
        if (t->start[i]) cudaEventDestroy(t->start[i]);
        if (t->stop[i]) cudaEventDestroy(t->stop[i]);
    }
    free(t->start);
    free(t->stop);
    free(t);
}

convnd_status bench_gpu_timer_create(bench_gpu_timer **out, int32_t pairs) {
    bench_gpu_timer *t = calloc(1, sizeof *t);
    if (!t) return CONVND_ERR_OUT_OF_MEMORY;
    t->start = calloc((size_t)pairs, sizeof *t->start);
    t->stop = calloc((size_t)pairs, sizeof *t->stop);
    if (!t->start || !t->stop) {
        bench_gpu_timer_destroy(t);
        return CONVND_ERR_OUT_OF_MEMORY;
    }
    t->pairs = pairs;
    for (int32_t i = 0; i < pairs; ++i) {
        cudaError_t e = cudaEventCreate(&t->start[i]);
        if (e == cudaSuccess) e = cudaEventCreate(&t->stop[i]);
        if (e != cudaSuccess) {
            bench_gpu_timer_destroy(t);
            return cuda_fail("cudaEventCreate", e);
        }
    }
    *out = t;
    return CONVND_OK;
}

convnd_status bench_gpu_timer_start(bench_gpu_timer *t, int32_t i, void *stream) {
    const cudaError_t e = cudaEventRecord(t->start[i], (cudaStream_t)stream);
    return e == cudaSuccess ? CONVND_OK : cuda_fail("cudaEventRecord", e);
}

convnd_status bench_gpu_timer_stop(bench_gpu_timer *t, int32_t i, void *stream) {
    const cudaError_t e = cudaEventRecord(t->stop[i], (cudaStream_t)stream);
    return e == cudaSuccess ? CONVND_OK : cuda_fail("cudaEventRecord", e);
}

convnd_status bench_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t rows, void *stream) {
    if (convnd_active_device() != CONVND_DEVICE_GPU) {
        host_copy_2d(dst, dpitch, src, spitch, width, rows);
        return CONVND_OK;
    }
    const cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows,
                                            cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
    return e == cudaSuccess ? CONVND_OK : cuda_fail("cudaMemcpy2DAsync", e);
}

convnd_status bench_gpu_timer_read(bench_gpu_timer *t, int32_t i, double *ms) {
    cudaError_t e = cudaEventSynchronize(t->stop[i]);
    float f = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&f, t->start[i], t->stop[i]);
    if (e != cudaSuccess) return cuda_fail("cudaEventElapsedTime", e);
    *ms = (double)f;
    return CONVND_OK;
}

#else

struct bench_gpu_timer {
    int32_t unused;
};

size_t bench_gpu_l2_bytes(void) {
    return 0;
}

convnd_status bench_gpu_timer_create(bench_gpu_timer **t, int32_t pairs) {
    (void)pairs;
    *t = NULL;
    return CONVND_ERR_DEVICE;
}
convnd_status bench_gpu_timer_start(bench_gpu_timer *t, int32_t i, void *stream) {
    (void)t, (void)i, (void)stream;
    return CONVND_ERR_DEVICE;
}
convnd_status bench_gpu_timer_stop(bench_gpu_timer *t, int32_t i, void *stream) {
    (void)t, (void)i, (void)stream;
    return CONVND_ERR_DEVICE;
}
convnd_status bench_gpu_timer_read(bench_gpu_timer *t, int32_t i, double *ms) {
    (void)t, (void)i;
    *ms = 0.0;
    return CONVND_ERR_DEVICE;
}
void bench_gpu_timer_destroy(bench_gpu_timer *t) {
    (void)t;
}

convnd_status bench_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                            size_t rows, void *stream) {
    (void)stream;
    if (convnd_active_device() == CONVND_DEVICE_GPU) return CONVND_ERR_DEVICE;
    host_copy_2d(dst, dpitch, src, spitch, width, rows);
    return CONVND_OK;
}

#endif
