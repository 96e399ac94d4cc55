/* Strided batched GEMM (device/gemm_backend.h): cuBLAS on the GPU, OpenBLAS's cblas_sgemm
 * (or plain loops when the build found no BLAS) on the emulated device. */
#include <limits.h>
#include <stdint.h>

#include "gemm_backend.h"
#include "error.h"

#ifdef CONVND_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif
#ifdef CONVND_HAVE_CBLAS
#include <cblas.h>
#endif

static int32_t fits_int(int64_t v) {
    return v >= 0 && v <= INT_MAX;
}

int32_t convnd_gemm_dims_fit(const convnd_gemm *g) {
    return fits_int(g->m) && fits_int(g->n) && fits_int(g->k) && fits_int(g->batch) &&
           fits_int(g->lda) && fits_int(g->ldb) && fits_int(g->ldc);
}

const char *convnd_gemm_host_backend(void) {
#ifdef CONVND_HAVE_CBLAS
    return "OpenBLAS cblas_sgemm";
#else
    return "plain loops";
#endif
}

/* ---- host --------------------------------------------------------------------------------- */

#ifndef CONVND_HAVE_CBLAS
/* Element (r, c) of op(X) for a row-major X with leading dimension ld. */
static float op_at(const float *x, int64_t ld, int32_t trans, int64_t r, int64_t c) {
    return trans ? x[c * ld + r] : x[r * ld + c];
}
#endif

static convnd_status gemm_host(const convnd_gemm *g) {
    if (g->ab_dtype != CONVND_F32)
        return convnd_error(CONVND_ERR_INTERNAL,
                            "gemm: the host GEMM takes f32 operands, got dtype %d",
                            (int)g->ab_dtype);
    for (int64_t b = 0; b < g->batch; ++b) {
        const float *a = (const float *)g->a + b * g->stride_a;
        const float *bm = (const float *)g->b + b * g->stride_b;
        float *c = g->c + b * g->stride_c;
#ifdef CONVND_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                    g->trans_b ? CblasTrans : CblasNoTrans, (int)g->m, (int)g->n, (int)g->k, 1.0f,
                    a, (int)g->lda, bm, (int)g->ldb, 0.0f, c, (int)g->ldc);
#else
        for (int64_t i = 0; i < g->m; ++i)
            for (int64_t j = 0; j < g->n; ++j) {
                float acc = 0.0f;
                for (int64_t l = 0; l < g->k; ++l)
                    acc += op_at(a, g->lda, g->trans_a, i, l) * op_at(bm, g->ldb, g->trans_b, l, j);
                c[i * g->ldc + j] = acc;
            }
#endif
    }
    return CONVND_OK;
}

/* ---- GPU ---------------------------------------------------------------------------------- */

#ifdef CONVND_HAVE_CUDA
/* One handle per host thread: a handle carries a stream and a workspace, so sharing one across
 * threads would race. Created on first use (after any fork, as Criterion needs) and kept. */
static _Thread_local cublasHandle_t convnd_cublas_handle;

static convnd_status cublas_fail(const char *what, cublasStatus_t s) {
    return convnd_error(CONVND_ERR_DEVICE, "cublas_im2col: %s failed: %s (%d)", what,
                        cublasGetStatusString(s), (int)s);
}

static cudaDataType_t cuda_type(convnd_dtype dt) {
    switch (dt) {
    case CONVND_F16:
        return CUDA_R_16F;
    case CONVND_BF16:
        return CUDA_R_16BF;
    default:
        return CUDA_R_32F;
    }
}

static convnd_status gemm_cublas(const convnd_gemm *g, void *stream, void *ws, size_t ws_bytes) {
    cublasStatus_t s;
    if (!convnd_cublas_handle) {
        s = cublasCreate(&convnd_cublas_handle);
        if (s != CUBLAS_STATUS_SUCCESS) {
            convnd_cublas_handle = NULL;
            return cublas_fail("cublasCreate", s);
        }
    }
    cublasHandle_t h = convnd_cublas_handle;
    /* cublasSetStream resets the workspace, so the workspace comes second */
    if ((s = cublasSetStream(h, (cudaStream_t)stream)) != CUBLAS_STATUS_SUCCESS)
        return cublas_fail("cublasSetStream", s);
    if ((s = cublasSetWorkspace(h, ws, ws_bytes)) != CUBLAS_STATUS_SUCCESS)
        return cublas_fail("cublasSetWorkspace", s);
    const cublasComputeType_t compute = g->ab_dtype == CONVND_F32 && g->allow_tf32
                                            ? CUBLAS_COMPUTE_32F_FAST_TF32
                                            : CUBLAS_COMPUTE_32F;
    const cudaDataType_t ab = cuda_type(g->ab_dtype);
    const float one = 1.0f, zero = 0.0f;
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands. */
    s = cublasGemmStridedBatchedEx(h, g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, (int)g->n, (int)g->m,
                                   (int)g->k, &one, g->b, ab, (int)g->ldb, g->stride_b, g->a, ab,
                                   (int)g->lda, g->stride_a, &zero, g->c, CUDA_R_32F, (int)g->ldc,
                                   g->stride_c, (int)g->batch, compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail("cublasGemmStridedBatchedEx", s);
    return CONVND_OK;
}
#endif

convnd_status convnd_gemm_run(const convnd_gemm *g, convnd_device device, void *stream,
                              void *blas_workspace, size_t blas_workspace_bytes) {
    if (g->m == 0 || g->n == 0 || g->batch == 0) return CONVND_OK;
    if (!convnd_gemm_dims_fit(g))
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "gemm: m=%lld n=%lld k=%lld batch=%lld exceed the BLAS 32-bit sizes",
                            (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch);
    if (device == CONVND_DEVICE_GPU) {
#ifdef CONVND_HAVE_CUDA
        return gemm_cublas(g, stream, blas_workspace, blas_workspace_bytes);
#else
        (void)blas_workspace, (void)blas_workspace_bytes;
        return convnd_error(CONVND_ERR_DEVICE, "gemm: built without CUDA");
#endif
    }
    (void)stream, (void)blas_workspace, (void)blas_workspace_bytes;
    return gemm_host(g);
}
