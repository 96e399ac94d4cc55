/* What the weight-gradient kernels share (families/wgrad/wgrad.cu,
 * families/wgrad/wgrad_igemm_*.cu): how the reduction is cut into split-K chunks, dw elements in
 * memory order, and the fixed-order reduction of f32 split-K partials (ws[j * w_numel + e], e a dw
 * element in memory order) that makes every split-K schedule bit-identical from run to run. */
#ifndef CONVND_WGRAD_COMMON_CUH
#define CONVND_WGRAD_COMMON_CUH

#include "conv_index.cuh"
#include "launch_abi.h"
#include "error.h"
#include "wgrad_split.h"

namespace CONVND_NS {

/* First reduction position of chunk j when R positions are cut into `splits` chunks whose sizes
 * differ by at most one (the first R mod splits chunks take one more). */
__host__ __device__ __forceinline__ int64_t wgrad_chunk_begin(int64_t R, int64_t splits,
                                                              int64_t j) {
    const int64_t q = R / splits, rem = R % splits;
    return j * q + (j < rem ? j : rem);
}

/* A dw element: logical (co, cl, k0, k1, k2) and its offset in dw (and z). */
template <typename Idx> struct wgrad_elem { Idx co, cl, k[3], off; };

/* Splits a linear number into a dw element, enumerating dw in its memory order (cl innermost
 * when w is channels-last) so that consecutive threads store to consecutive addresses. */
template <typename Idx>
__device__ __forceinline__ wgrad_elem<Idx> wgrad_element(const convnd_conv_params &p, Idx linear) {
    wgrad_elem<Idx> e;
    const Idx CL = (Idx)p.cin_g;
    if (p.w_cl) {
        e.cl = linear % CL;
        linear /= CL;
    }
    for (int t = 2; t >= 0; --t) {
        e.k[t] = linear % (Idx)p.k[t];
        linear /= (Idx)p.k[t];
    }
    if (!p.w_cl) {
        e.cl = linear % CL;
        linear /= CL;
    }
    e.co = linear;
    e.off = conv_offset<Idx>(p.ws, e.co, e.cl, e.k[0], e.k[1], e.k[2]);
    return e;
}

/* Memory-order number of dw element (co, cl, kidx), kidx = (k0 * K1 + k1) * K2 + k2: the inverse of
 * wgrad_element (cl innermost when w is channels-last, k innermost otherwise). */
__device__ __forceinline__ int64_t wgrad_memory_index(const convnd_conv_params &p, int64_t co,
                                                      int64_t cl, int64_t kidx) {
    const int64_t KK = p.k[0] * p.k[1] * p.k[2];
    return p.w_cl ? (co * KK + kidx) * p.cin_g + cl : (co * p.cin_g + cl) * KK + kidx;
}

/* dw[e] = epilogue(sum_j ws[j * w_numel + e]), j ascending: the fixed order. */
template <typename T, typename Idx>
__global__ void wgrad_reduce_kernel(const convnd_conv_params p, int64_t splits,
                                    const float *__restrict__ ws, const T *z, T *dw) {
    const Idx W = (Idx)p.w_numel;
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < W;
         linear += step) {
        const wgrad_elem<Idx> e = wgrad_element<Idx>(p, linear);
        float acc = 0.0f;
        for (int64_t j = 0; j < splits; ++j)
            acc += ws[j * (int64_t)W + (int64_t)linear];
        conv_finish<T, Idx>(p, acc, (const T *)nullptr, z, dw, e.co, e.off);
    }
}

static constexpr int wgrad_threads = 256;
/* Enough blocks to fill an H200 many times over; beyond that the grid-stride loops take over. */
static constexpr int64_t wgrad_max_blocks = 8192;

__host__ inline dim3 wgrad_grid(int64_t work) {
    int64_t blocks = (work + wgrad_threads - 1) / wgrad_threads;
    return dim3((unsigned)(blocks > wgrad_max_blocks ? wgrad_max_blocks : blocks));
}

/* The caller's workspace holds `splits` f32 partials of every dw element: aligned and large
 * enough, or the error (naming who) that a launcher returns before writing anything. */
__host__ inline convnd_status wgrad_check_partials(const convnd_launch_args *a, int64_t splits,
                                                   const char *who) {
    if ((uintptr_t)a->workspace % 4 != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: workspace=%p is not aligned to its 4-byte f32 partials", who,
                            a->workspace);
    if ((double)a->workspace_bytes < (double)splits * (double)a->params.w_numel * 4.0)
        return convnd_error(CONVND_ERR_WORKSPACE, "%s: workspace %zu bytes < %lld", who,
                            a->workspace_bytes, (long long)(splits * a->params.w_numel * 4));
    return CONVND_OK;
}

/* What both implicit-GEMM weight gradients' launches do around their kernel (wgrad_igemm.cuh,
 * wgrad_vec.cuh): at most max_splits chunks of BK-deep k-tiles, the workspace checked for their
 * partials, a grid of (N tiles, M tiles, groups * splits) for launch(grid, splits, ws) (the
 * kernel), then the partials summed in a fixed order. p: a WGRAD problem with dw elements. */
template <typename T, int BM, int BN, int BK, class Launch>
__host__ convnd_status wgrad_gemm_launch(const convnd_launch_args *a, int64_t max_splits,
                                         const char *name, Launch launch) {
    const convnd_conv_params &p = a->params;
    const int64_t splits = convnd_wgrad_igemm_splits(&p, max_splits, BK);
    float *ws = (float *)a->workspace;
    if (splits > 1) {
        const convnd_status st = wgrad_check_partials(a, splits, name);
        if (st != CONVND_OK) return st;
    }
    const int64_t NC = p.cin_g * p.k[0] * p.k[1] * p.k[2];
    const dim3 grid((unsigned)((NC + BN - 1) / BN), (unsigned)((p.cout_g + BM - 1) / BM),
                    (unsigned)(p.groups * splits));
    const convnd_status st = launch(grid, splits, ws);
    if (st != CONVND_OK || splits == 1) return st;
    return convnd_launch(&wgrad_reduce_kernel<T, int64_t>, wgrad_grid(p.w_numel),
                         dim3(wgrad_threads), 0, a->stream, p, splits, (const float *)ws,
                         (const T *)a->z, (T *)a->y);
}

} // namespace CONVND_NS

#endif
