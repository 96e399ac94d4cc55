/* A strided batched GEMM with an f32 result, on cuBLAS (GPU) or a host BLAS (emulated device),
 * for the cublas_im2col schedule. Row-major, the way the schedule thinks about its matrices:
 *
 *   for b in [0, batch):  C_b[m x n] = op(A_b)[m x k] . op(B_b)[k x n]
 *   X_b = X + b * stride_x (elements), op(X) = X^T when trans_x is set, ld* = row strides.
 *
 * A and B have dtype ab_dtype (f32, f16 or bf16 on the GPU; f32 only on the host, where the
 * schedule widens 16-bit data first); C is f32. On the GPU 16-bit products accumulate in f32
 * on the tensor cores; f32 uses exact FMA math unless allow_tf32. */
#ifndef CONVND_GEMM_BACKEND_H
#define CONVND_GEMM_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_gemm {
    int64_t m, n, k, batch;
    int32_t trans_a, trans_b;
    const void *a;
    int64_t lda, stride_a;
    const void *b;
    int64_t ldb, stride_b;
    float *c;
    int64_t ldc, stride_c;
    convnd_dtype ab_dtype;
    int32_t allow_tf32;
} convnd_gemm;

/* cuBLAS wants its own scratch; conv_nd hands it this much of the caller's workspace so that
 * the library allocates nothing (32 MiB, cuBLAS's recommendation for Hopper). */
#define CONVND_GEMM_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* 1 when every GEMM size and leading dimension fits the BLAS interfaces' 32-bit ints. */
int32_t convnd_gemm_dims_fit(const convnd_gemm *g);

/* Runs g on device (stream and blas_workspace used on the GPU only). */
convnd_status convnd_gemm_run(const convnd_gemm *g, convnd_device device, void *stream,
                              void *blas_workspace, size_t blas_workspace_bytes);

/* Name of the host GEMM in use ("OpenBLAS cblas_sgemm" or "plain loops"), for documentation
 * and the benchmark's notes. */
const char *convnd_gemm_host_backend(void);

#ifdef __cplusplus
}
#endif

#endif
