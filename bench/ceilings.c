/* Ceiling measurements (bench/ceilings.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ceilings.h"
#include "gpu_runtime.h"
#include "random_fill.h"
#include "candidate.h"

double bench_compute_ceiling(const bench_ceilings *c, convnd_dtype dtype) {
    return dtype == CONVND_F32 ? c->gemm_f32_tflops : c->gemm_bf16_tflops;
}

#ifdef CONVND_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms of `reps` runs of op(ctx) after `warmup` runs, with events. */
typedef convnd_status (*timed_op)(void *ctx);
static convnd_status median_ms(timed_op op, void *ctx, int warmup, int reps, double *out) {
    for (int i = 0; i < warmup; ++i) {
        const convnd_status s = op(ctx);
        if (s != CONVND_OK) return s;
    }
    bench_gpu_timer *t = NULL;
    convnd_status s = bench_gpu_timer_create(&t, reps);
    double ms[64];
    for (int i = 0; i < reps && s == CONVND_OK; ++i) {
        s = bench_gpu_timer_start(t, i, NULL);
        if (s == CONVND_OK) s = op(ctx);
        if (s == CONVND_OK) s = bench_gpu_timer_stop(t, i, NULL);
    }
    for (int i = 0; i < reps && s == CONVND_OK; ++i)
        s = bench_gpu_timer_read(t, i, &ms[i]);
    bench_gpu_timer_destroy(t);
    if (s != CONVND_OK) return s;
    qsort(ms, (size_t)reps, sizeof ms[0], cmp_double);
    *out = ms[reps / 2];
    return CONVND_OK;
}

typedef struct copy_ctx {
    void *dst, *src;
    size_t bytes;
} copy_ctx;

static convnd_status copy_op(void *p) {
    copy_ctx *c = p;
    return cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, NULL) == cudaSuccess
               ? CONVND_OK
               : CONVND_ERR_DEVICE;
}

typedef struct gemm_ctx {
    cublasHandle_t h;
    int n;
    cudaDataType_t type;
    const void *a, *b;
    void *c;
} gemm_ctx;

static convnd_status gemm_op(void *p) {
    gemm_ctx *g = p;
    const float one = 1.0f, zero = 0.0f;
    return cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a, g->type, g->n,
                        g->b, g->type, g->n, &zero, g->c, g->type, g->n, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS
               ? CONVND_OK
               : CONVND_ERR_DEVICE;
}

/* TFLOP/s of an n^3 GEMM of dtype dt on random data. */
static convnd_status measure_gemm(cublasHandle_t h, convnd_dtype dt, int n, int reps,
                                  double *tflops) {
    const size_t elem = dt == CONVND_F32 ? 4 : 2, bytes = (size_t)n * (size_t)n * elem;
    void *a = NULL, *b = NULL, *c = NULL, *host = malloc(bytes);
    convnd_status s = host ? CONVND_OK : CONVND_ERR_OUT_OF_MEMORY;
    if (s == CONVND_OK) {
        bench_rng rng = bench_rng_seed(12345);
        bench_fill_random_tiled(dt, host, (int64_t)n * n, (int64_t)1 << 20, &rng);
        s = bench_alloc(&a, bytes);
    }
    if (s == CONVND_OK) s = bench_alloc(&b, bytes);
    if (s == CONVND_OK) s = bench_alloc(&c, bytes);
    if (s == CONVND_OK) s = convnd_memcpy_h2d(a, host, bytes);
    if (s == CONVND_OK) s = convnd_memcpy_h2d(b, host, bytes);
    double ms = 0.0;
    gemm_ctx g = {h, n, dt == CONVND_F32 ? CUDA_R_32F : CUDA_R_16BF, a, b, c};
    if (s == CONVND_OK) s = median_ms(gemm_op, &g, 3, reps, &ms);
    if (s == CONVND_OK) *tflops = 2.0 * (double)n * n * n / (ms * 1e-3) / 1e12;
    bench_free(&a);
    bench_free(&b);
    bench_free(&c);
    free(host);
    return s;
}

convnd_status bench_measure_ceilings(bench_ceilings *c) {
    memset(c, 0, sizeof *c);
    if (convnd_active_device() != CONVND_DEVICE_GPU) return CONVND_OK;
    /* copy: 1 GiB, far past the L2 */
    copy_ctx cp = {NULL, NULL, (size_t)1 << 30};
    convnd_status s = bench_alloc(&cp.src, cp.bytes);
    if (s == CONVND_OK) s = bench_alloc(&cp.dst, cp.bytes);
    if (s == CONVND_OK) s = convnd_memset(cp.src, 0x3C, cp.bytes);
    double ms = 0.0;
    if (s == CONVND_OK) s = median_ms(copy_op, &cp, 3, 20, &ms);
    if (s == CONVND_OK) c->copy_gbps = 2.0 * (double)cp.bytes / (ms * 1e-3) / 1e9;
    bench_free(&cp.src);
    bench_free(&cp.dst);
    if (s != CONVND_OK) return s;

    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return CONVND_ERR_DEVICE;
    s = measure_gemm(h, CONVND_BF16, 8192, 10, &c->gemm_bf16_tflops);
    if (s == CONVND_OK) s = measure_gemm(h, CONVND_F32, 8192, 5, &c->gemm_f32_tflops);
    cublasDestroy(h);
    if (s == CONVND_OK) s = convnd_synchronize(NULL);
    c->measured = s == CONVND_OK;
    return s;
}

#else

convnd_status bench_measure_ceilings(bench_ceilings *c) {
    memset(c, 0, sizeof *c);
    return CONVND_OK;
}

#endif
