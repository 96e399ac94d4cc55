/* Registry entry of the cublas_im2col schedule: explicit im2col into the caller's workspace
 * followed by a GEMM (cuBLAS on the GPU; the host BLAS on the emulated device), or, transposed,
 * a GEMM followed by col2im. It is convnd's "what cuBLAS alone gives" reference and a benchmark
 * peer, never routed to by the planner: it moves a K-times larger col matrix through memory and
 * needs a large workspace.
 *
 * Precision: the GEMM accumulates in f32 and the epilogue rounds once to the output dtype.
 * f16/bf16 operands go to cuBLAS as they are (tensor cores, f32 accumulation, CUBLAS_COMPUTE_32F);
 * f32 uses exact FMA math (CUBLAS_COMPUTE_32F), or TF32 when the problem allows it. On the
 * emulated device 16-bit operands are first widened to f32 (exactly) for cblas_sgemm. cuBLAS may
 * split K, so the summation order differs from the direct schedule's; transposed mode then adds
 * the taps' partial sums in f32. All within the f32-accumulation tolerances.
 *
 * Matrix layouts and the chunking over images: families/im2col/im2col.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "refuse.h"
#include "registry.h"
#include "gemm_backend.h"
#include "im2col.h"
#include "problem_internal.h"
#include "error.h"

static const convnd_im2col_launcher im2col_to_f32_kernel = CONVND_LAUNCHER_OF(im2col_to_f32);
static const convnd_im2col_launcher im2col_forward_kernel = CONVND_LAUNCHER_OF(im2col_forward);
static const convnd_im2col_launcher im2col_epilogue_kernel = CONVND_LAUNCHER_OF(im2col_epilogue);
static const convnd_im2col_launcher col2im_epilogue_kernel = CONVND_LAUNCHER_OF(col2im_epilogue);

#define IM2COL_DECLARE(name)                                                                       \
    convnd_status convnd_emu_##name(const convnd_im2col_args *a);                                  \
    convnd_status convnd_gpu_##name(const convnd_im2col_args *a)

static const char *const im2col_configs[] = {"gemm"};

/* A chunk's col + acc stay under this, so that huge problems take a bounded workspace. */
static const double im2col_chunk_budget_gpu = 1024.0 * 1024.0 * 1024.0;
static const double im2col_chunk_budget_host = 256.0 * 1024.0 * 1024.0;

/* Byte offsets of the workspace regions, each 256-byte aligned (cuBLAS wants that). */
typedef struct im2col_layout {
    int64_t nb;   /* images per chunk */
    int64_t P;    /* GEMM columns per image: prod(O) forward, prod(I) transposed */
    int64_t rows; /* forward: C_in/g * prod(K); transposed: C_out/g * prod(K) */
    convnd_dtype col_dtype;
    int32_t host; /* the emulated device: host BLAS, f32 operands */
    size_t col, acc, w32, x32, blas, total;
} im2col_layout;

/* Saturates at SIZE_MAX (converting a double past 2^64 is undefined), which the size_t check at
 * the end of im2col_plan then refuses. */
static size_t align256(double v) {
    if (!(v < 0x1p63)) return SIZE_MAX;
    return (size_t)(((uint64_t)v + 255u) & ~(uint64_t)255u);
}

/* Plans the workspace of the problem of launch parameters c on device; 0 (and a reason) when
 * a size does not fit. */
static int32_t im2col_plan(const convnd_conv_params *c, convnd_device device, im2col_layout *L,
                           char *why, size_t why_len) {
    memset(L, 0, sizeof *L);
    const convnd_dtype dtype = (convnd_dtype)c->dtype;
    const int64_t kk = c->k[0] * c->k[1] * c->k[2];
    const int32_t transposed = c->mode == CONVND_TRANSPOSED;
    const int64_t P_out = c->out[0] * c->out[1] * c->out[2];
    const int64_t P_in = c->in[0] * c->in[1] * c->in[2];
    const double elem = (double)convnd_dtype_bytes(dtype);
    L->host = device != CONVND_DEVICE_GPU;
    L->col_dtype = L->host || transposed ? CONVND_F32 : dtype;
    L->P = transposed ? P_in : P_out;
    L->rows = (transposed ? c->cout_g : c->cin_g) * kk;
    const double col_elem = L->col_dtype == CONVND_F32 ? 4.0 : elem;
    /* per image: col (all groups) and the f32 GEMM result (forward) or widened x (host) */
    double per_image = (double)c->groups * (double)L->rows * (double)L->P * col_elem;
    if (!transposed) per_image += (double)c->C_out * (double)P_out * 4.0;
    if (transposed && L->host && dtype != CONVND_F32)
        per_image += (double)c->C_in * (double)P_in * 4.0;
    const double budget = L->host ? im2col_chunk_budget_host : im2col_chunk_budget_gpu;
    double nb = per_image > 0.0 ? budget / per_image : (double)c->N;
    if (nb > (double)c->N) nb = (double)c->N;
    if (nb < 1.0) nb = 1.0;
    if (L->P > 0 && nb * (double)L->P > (double)INT_MAX) nb = (double)(INT_MAX / L->P);
    if (nb < 1.0 || L->rows > INT_MAX || c->C_in > INT_MAX || c->C_out > INT_MAX ||
        c->ws[0] > INT_MAX || c->groups > INT_MAX) {
        snprintf(why, why_len,
                 "a GEMM dimension exceeds the BLAS 32-bit sizes (columns per image %lld, rows "
                 "%lld, C_in %lld, C_out %lld)",
                 (long long)L->P, (long long)L->rows, (long long)c->C_in, (long long)c->C_out);
        return 0;
    }
    L->nb = (int64_t)nb;
    const double nbd = (double)L->nb;
    double off = 0.0;
    L->col = align256(off);
    off = (double)L->col + (double)c->groups * (double)L->rows * (double)L->P * nbd * col_elem;
    L->acc = align256(off);
    if (!transposed) off = (double)L->acc + (double)c->C_out * (double)P_out * nbd * 4.0;
    L->w32 = align256(off);
    if (L->host && dtype != CONVND_F32) off = (double)L->w32 + (double)c->w_numel * 4.0;
    L->x32 = align256(off);
    if (transposed && L->host && dtype != CONVND_F32)
        off = (double)L->x32 + (double)c->C_in * (double)P_in * nbd * 4.0;
    L->blas = align256(off);
    if (!L->host) off = (double)L->blas + (double)CONVND_GEMM_CUBLAS_WORKSPACE;
    if (off > (double)(SIZE_MAX / 2)) {
        snprintf(why, why_len, "the workspace (%.3g bytes) does not fit size_t", off);
        return 0;
    }
    L->total = align256(off);
    return 1;
}

static int32_t im2col_supports(const convnd_conv_params *params, int32_t config, char *reason,
                               size_t reason_len) {
    (void)config;
    if (params->mode == CONVND_WGRAD)
        return convnd_refuse(reason, reason_len, "mode=wgrad: forward and transposed only");
    im2col_layout L;
    return im2col_plan(params, CONVND_DEVICE_GPU, &L, reason, reason_len) &&
           im2col_plan(params, CONVND_DEVICE_EMULATED, &L, reason, reason_len);
}

/* A reference and benchmark peer: the planner never picks it (forcing it is the way in). */
static int32_t im2col_worth_routing(const convnd_conv_params *params, int32_t config) {
    (void)params, (void)config;
    return 0;
}

/* The device decides the col dtype and whether cuBLAS needs its slice, so the size is that of
 * the device in use (conv_nd checks the caller's workspace against the same number). */
static size_t im2col_workspace_size(const convnd_conv_params *params, int32_t config) {
    (void)config;
    im2col_layout L;
    char why[256];
    if (!im2col_plan(params, convnd_active_device(), &L, why, sizeof why)) return 0;
    return L.total;
}

IM2COL_DECLARE(im2col_forward);
IM2COL_DECLARE(im2col_epilogue);
IM2COL_DECLARE(col2im_epilogue);
IM2COL_DECLARE(im2col_to_f32);

/* The GEMM(s) of one forward chunk: acc[g] = W[g] . col[g] (orientation: families/im2col/im2col.h).
 */
static convnd_status forward_gemm(const convnd_launch_args *a, const im2col_layout *L,
                                  const void *w, void *col, float *acc, int64_t nb) {
    const convnd_conv_params *c = &a->params;
    const int64_t M = nb * L->P, K = L->rows;
    convnd_gemm g = {.k = K,
                     .batch = c->groups,
                     .c = acc,
                     .ab_dtype = L->host ? CONVND_F32 : a->params.dtype,
                     .allow_tf32 = c->allow_tf32};
    if (c->x_cl) { /* acc[M x cout_g] = col[M x K] . W^T */
        g.m = M, g.n = c->cout_g;
        g.a = col, g.lda = K, g.stride_a = M * K;
        g.b = w, g.trans_b = 1, g.ldb = c->ws[0], g.stride_b = c->cout_g * c->ws[0];
        g.ldc = c->cout_g, g.stride_c = M * c->cout_g;
    } else { /* acc[cout_g x M] = W[cout_g x K] . col[K x M] */
        g.m = c->cout_g, g.n = M;
        g.a = w, g.lda = c->ws[0], g.stride_a = c->cout_g * c->ws[0];
        g.b = col, g.ldb = M, g.stride_b = K * M;
        g.ldc = M, g.stride_c = c->cout_g * M;
    }
    return convnd_gemm_run(&g, a->device, a->stream, (char *)a->workspace + L->blas,
                           CONVND_GEMM_CUBLAS_WORKSPACE);
}

/* The GEMM(s) of one transposed chunk: col[g] = x[g]^T-ish . W[g], x from the chunk's first
 * image (xc, element size xe). */
static convnd_status transposed_gemm(const convnd_launch_args *a, const im2col_layout *L,
                                     const void *w, const void *xc, size_t xe, float *col,
                                     int64_t nb) {
    const convnd_conv_params *c = &a->params;
    const int64_t M = nb * L->P, Nn = L->rows;
    convnd_gemm g = {.k = c->cin_g,
                     .batch = c->groups,
                     .ab_dtype = L->host ? CONVND_F32 : a->params.dtype,
                     .allow_tf32 = c->allow_tf32};
    if (c->x_cl) { /* col[M x Nn] = X[M x cin_g] (row stride C_in) . W[cin_g x Nn] */
        g.m = M, g.n = Nn;
        g.a = xc, g.lda = c->C_in, g.stride_a = c->cin_g;
        g.b = w, g.ldb = c->ws[0], g.stride_b = c->cin_g * c->ws[0];
        g.c = col, g.ldc = Nn, g.stride_c = M * Nn;
        return convnd_gemm_run(&g, a->device, a->stream, (char *)a->workspace + L->blas,
                               CONVND_GEMM_CUBLAS_WORKSPACE);
    }
    /* channels-first: per image, col[Nn x P_in] = W^T[Nn x cin_g] . X_n[cin_g x P_in] */
    for (int64_t n = 0; n < nb; ++n) {
        g.m = Nn, g.n = L->P;
        g.a = w, g.trans_a = 1, g.lda = c->ws[0], g.stride_a = c->cin_g * c->ws[0];
        g.b = (const char *)xc + (size_t)(n * c->xs[0]) * xe, g.ldb = L->P;
        g.stride_b = c->cin_g * L->P;
        g.c = col + n * Nn * L->P, g.ldc = L->P, g.stride_c = Nn * M;
        const convnd_status s = convnd_gemm_run(
            &g, a->device, a->stream, (char *)a->workspace + L->blas, CONVND_GEMM_CUBLAS_WORKSPACE);
        if (s != CONVND_OK) return s;
    }
    return CONVND_OK;
}

/* The host BLAS reads memory the kernels wrote: wait for them first. */
static convnd_status host_gemm_fence(const convnd_launch_args *a, const im2col_layout *L) {
    return L->host ? convnd_synchronize(a->stream) : CONVND_OK;
}

static convnd_status im2col_launch(const convnd_launch_args *a) {
    const convnd_conv_params *c = &a->params;
    if (c->y_numel == 0) return CONVND_OK;
    im2col_layout L;
    char why[256];
    if (!im2col_plan(c, a->device, &L, why, sizeof why))
        return convnd_error(CONVND_ERR_UNSUPPORTED, "cublas_im2col: %s", why);
    if (a->workspace_bytes < L.total || (L.total && !a->workspace))
        return convnd_error(CONVND_ERR_WORKSPACE,
                            "cublas_im2col: workspace_bytes=%zu is smaller than the %zu it needs",
                            a->workspace_bytes, L.total);
    char *ws = (char *)a->workspace;
    const size_t elem = (size_t)convnd_dtype_bytes(a->params.dtype);
    const int32_t widen = L.host && a->params.dtype != CONVND_F32;
    convnd_status s = CONVND_OK;
    const void *w = a->w;
    convnd_im2col_args k = {.launch = a,
                            .device = a->device,
                            .col = ws + L.col,
                            .col_dtype = L.col_dtype,
                            .acc = (const float *)(ws + L.acc)};
    if (widen) {
        k.src = a->w, k.dst = (float *)(ws + L.w32), k.count = c->w_numel;
        if ((s = CONVND_LAUNCH(&im2col_to_f32_kernel, &k)) != CONVND_OK) return s;
        w = ws + L.w32;
    }
    const int32_t empty_k = (a->params.mode == CONVND_TRANSPOSED ? c->cin_g : L.rows) == 0;
    for (int64_t n0 = 0; n0 < c->N && s == CONVND_OK; n0 += L.nb) {
        const int64_t nb = c->N - n0 < L.nb ? c->N - n0 : L.nb;
        k.n0 = n0, k.nb = nb;
        if (a->params.mode == CONVND_FORWARD) {
            float *acc = (float *)(ws + L.acc);
            if (empty_k) { /* no input channels: the accumulator is zero */
                s = convnd_memset(acc, 0, (size_t)(c->C_out * nb * L.P) * sizeof(float));
            } else if ((s = CONVND_LAUNCH(&im2col_forward_kernel, &k)) == CONVND_OK &&
                       (s = host_gemm_fence(a, &L)) == CONVND_OK) {
                s = forward_gemm(a, &L, w, ws + L.col, acc, nb);
            }
            if (s == CONVND_OK) s = CONVND_LAUNCH(&im2col_epilogue_kernel, &k);
        } else {
            float *col = (float *)(ws + L.col);
            const void *xc = (const char *)a->x + (size_t)(n0 * c->xs[0]) * elem;
            size_t xe = elem;
            if (empty_k) {
                s = convnd_memset(col, 0, (size_t)(c->groups * L.rows * nb * L.P) * sizeof(float));
            } else {
                if (widen) {
                    k.src = xc, k.dst = (float *)(ws + L.x32), k.count = nb * c->xs[0];
                    s = CONVND_LAUNCH(&im2col_to_f32_kernel, &k);
                    xc = ws + L.x32, xe = sizeof(float);
                }
                if (s == CONVND_OK) s = host_gemm_fence(a, &L);
                if (s == CONVND_OK) s = transposed_gemm(a, &L, w, xc, xe, col, nb);
            }
            if (s == CONVND_OK) s = CONVND_LAUNCH(&col2im_epilogue_kernel, &k);
        }
    }
    return s;
}

CONVND_SCHEDULE_ENTRY(
    cublas_im2col, im2col,
    "the reference: im2col into the workspace + cuBLAS GEMM (host OpenBLAS on the "
    "emulated device); forced only",
    "families/im2col/cublas_im2col.c, families/im2col/im2col.cu",
    (int32_t)(sizeof(im2col_configs) / sizeof(im2col_configs[0])), im2col_configs,
    im2col_workspace_size, CONVND_NEEDS_CUBLAS_BF16, 0);
