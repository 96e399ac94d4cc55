/* Weight gradient (SPEC §10): dw[co, cl, k] = alpha * sum_{n, o} dy[n, co, o] * x[n, ci, o*S - P0
 * + k*D] + beta * z, ci = grp(co) * C_in/g + cl. Two launchers share one reduction routine:
 *
 *   wgrad_direct  one thread per dw element, the whole reduction (n, o0, o1, o2) in ascending
 *                 order; no workspace. Every wgrad problem (the fallback).
 *   wgrad_splitk  the reduction cut into `splits` contiguous chunks; thread (e, j) writes chunk j
 *                 of dw element e as an f32 partial into the caller's workspace, then a second
 *                 kernel sums the partials of e in the fixed order j = 0, 1, ... and applies the
 *                 epilogue. No atomics: bit-identical from run to run, whatever the thread order.
 *
 * Both skip the taps that fall in the padding by clipping the o-range per dimension instead of
 * testing every position. Accumulation is f32 with fmaf; dw is rounded once, at the store. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "launch_abi.h"
#include "error.h"
#include "wgrad_split.h"
#include "planted_bugs.h"
#include "wgrad_common.cuh"

namespace CONVND_NS {

/* floor(a / b) for b > 0 and any sign of a. */
template <typename Idx> __device__ __forceinline__ Idx wgrad_floor_div(Idx a, Idx b) {
    const Idx q = a / b;
    return q - ((a % b != 0) && (a < 0));
}

/* The outputs o in [0, O) whose tap k reads inside [0, I): o*S - P0 + k*D in [0, I), i.e.
 * ceil((P0 - k*D) / S) <= o <= floor((I - 1 + P0 - k*D) / S). Empty when lo >= hi. */
template <typename Idx>
__device__ __forceinline__ void wgrad_valid_outputs(const convnd_conv_params &p, int t, Idx k,
                                                    Idx &lo, Idx &hi) {
    const Idx S = (Idx)p.s[t], base = (Idx)p.p0[t] - k * (Idx)p.d[t];
    lo = -wgrad_floor_div<Idx>(-base, S);
    hi = wgrad_floor_div<Idx>((Idx)p.in[t] - 1 + base, S) + 1;
    if (lo < 0) lo = 0;
    if (hi > (Idx)p.out[t]) hi = (Idx)p.out[t];
}

/* Sum over the reduction positions r in [r_begin, r_end), r numbering (n, o0, o1, o2) row-major,
 * in ascending r. Walks o2-rows: each row segment is clipped to the outputs that read inside x. */
template <typename T, typename Idx>
__device__ __forceinline__ float wgrad_partial(const convnd_conv_params &p, const T *__restrict__ x,
                                               const T *__restrict__ dy, const wgrad_elem<Idx> &e,
                                               Idx r_begin, Idx r_end) {
    Idx lo[3], hi[3];
    for (int t = 0; t < 3; ++t)
        wgrad_valid_outputs<Idx>(p, t, e.k[t], lo[t], hi[t]);
    float acc = 0.0f;
    if (r_begin >= r_end || lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) return acc;
    const Idx O0 = (Idx)p.out[0], O1 = (Idx)p.out[1], O2 = (Idx)p.out[2];
    const Idx ci = (e.co / (Idx)p.cout_g) * (Idx)p.cin_g + e.cl;
    /* innermost spatial dim: stride S2, element strides xs[4] / ys[4] (n, c, s0, s1, s2) */
    const Idx S2 = (Idx)p.s[2], xs2 = (Idx)p.xs[4], ys2 = (Idx)p.ys[4];
    /* input position of o = 0 through tap k, per dim (may be negative: only o >= lo is read) */
    Idx i_at0[3];
    for (int t = 0; t < 3; ++t)
        i_at0[t] = e.k[t] * (Idx)p.d[t] - (Idx)p.p0[t];
    Idx row = r_begin / O2, o2 = r_begin - row * O2;
    for (Idx r = r_begin; r < r_end; ++row, o2 = 0) {
        const Idx row_end = r + (O2 - o2) < r_end ? r + (O2 - o2) : r_end;
        const Idx o2_end = o2 + (row_end - r);
        const Idx o1 = row % O1, o0 = (row / O1) % O0, n = row / (O1 * O0);
        r = row_end;
        if (o0 < lo[0] || o0 >= hi[0] || o1 < lo[1] || o1 >= hi[1]) continue;
        const Idx a = o2 > lo[2] ? o2 : lo[2], b = o2_end < hi[2] ? o2_end : hi[2];
        if (a >= b) continue;
        /* offsets of the row's o2 = 0 (x's may be negative: only o in [a, b) is read) */
        const Idx x_row = conv_offset<Idx>(p.xs, n, ci, o0 * (Idx)p.s[0] + i_at0[0],
                                           o1 * (Idx)p.s[1] + i_at0[1], i_at0[2]);
        const Idx dy_row = conv_offset<Idx>(p.ys, n, e.co, o0, o1, (Idx)0);
        for (Idx o = a; o < b; ++o)
            acc = fmaf(conv_load(dy, dy_row + o * ys2), conv_load(x, x_row + o * S2 * xs2), acc);
    }
    return acc;
}

/* Number of reduction positions N * O0 * O1 * O2. */
template <typename Idx>
__device__ __forceinline__ Idx wgrad_reduction(const convnd_conv_params &p) {
    return (Idx)p.N * (Idx)p.out[0] * (Idx)p.out[1] * (Idx)p.out[2];
}

/* z may be dw (in place), so neither carries __restrict__. */
template <typename T, typename Idx>
__global__ void wgrad_direct_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                    const T *__restrict__ dy, const T *z, T *dw) {
    const Idx total = (Idx)p.w_numel, R = wgrad_reduction<Idx>(p);
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        const wgrad_elem<Idx> e = wgrad_element<Idx>(p, linear);
        const float acc = wgrad_partial<T, Idx>(p, x, dy, e, (Idx)0, R);
        conv_finish<T, Idx>(p, acc, (const T *)nullptr, z, dw, e.co, e.off);
    }
}

/* Partial j of dw element e (linear = j * w_numel + e) into ws[j * w_numel + e]. */
template <typename T, typename Idx>
__global__ void wgrad_partial_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                     const T *__restrict__ dy, int64_t splits,
                                     float *__restrict__ ws) {
    const Idx W = (Idx)p.w_numel, R = wgrad_reduction<Idx>(p);
    const int64_t total = (int64_t)W * splits;
    const int64_t step = (int64_t)gridDim.x * (int64_t)blockDim.x;
    for (int64_t linear = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; linear < total;
         linear += step) {
        const Idx j = (Idx)(linear / (int64_t)W), el = (Idx)(linear % (int64_t)W);
        const wgrad_elem<Idx> e = wgrad_element<Idx>(p, el);
        const Idx r0 = (Idx)wgrad_chunk_begin((int64_t)R, splits, (int64_t)j);
        const Idx r1 = (Idx)wgrad_chunk_begin((int64_t)R, splits, (int64_t)j + 1);
#if CONVND_PLANTED_BUG == CONVND_PLANT_WGRAD_ARRIVAL_ORDER
        atomicAdd(&ws[el], wgrad_partial<T, Idx>(p, x, dy, e, r0, r1));
#else
        ws[linear] = wgrad_partial<T, Idx>(p, x, dy, e, r0, r1);
#endif
    }
}

#if CONVND_PLANTED_BUG == CONVND_PLANT_WGRAD_ARRIVAL_ORDER
__global__ void wgrad_planted_zero_kernel(float *ws, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        ws[i] = 0.0f;
}
#endif

template <typename T, typename Idx>
static convnd_status wgrad_launch_typed(const convnd_launch_args *a, int64_t splits) {
    const convnd_conv_params &p = a->params;
    const T *x = (const T *)a->x, *dy = (const T *)a->w, *z = (const T *)a->z;
    T *dw = (T *)a->y;
    if (splits <= 1)
        return convnd_launch(&wgrad_direct_kernel<T, Idx>, wgrad_grid(p.w_numel),
                             dim3(wgrad_threads), 0, a->stream, p, x, dy, z, dw);
    float *ws = (float *)a->workspace;
#if CONVND_PLANTED_BUG == CONVND_PLANT_WGRAD_ARRIVAL_ORDER
    if (convnd_launch(&wgrad_planted_zero_kernel, wgrad_grid(p.w_numel), dim3(wgrad_threads), 0,
                      a->stream, ws, (int64_t)p.w_numel) != CONVND_OK)
        return CONVND_ERR_DEVICE;
    const int64_t reduce_splits = 1; /* every partial went into the first slot */
#else
    const int64_t reduce_splits = splits;
#endif
    const convnd_status st =
        convnd_launch(&wgrad_partial_kernel<T, Idx>, wgrad_grid(p.w_numel * splits),
                      dim3(wgrad_threads), 0, a->stream, p, x, dy, splits, ws);
    if (st != CONVND_OK) return st;
    return convnd_launch(&wgrad_reduce_kernel<T, Idx>, wgrad_grid(p.w_numel), dim3(wgrad_threads),
                         0, a->stream, p, reduce_splits, (const float *)ws, z, dw);
}

static convnd_status wgrad_launch(const convnd_launch_args *a, int64_t splits, const char *who) {
    if (a->params.mode != CONVND_WGRAD)
        return convnd_error(CONVND_ERR_INTERNAL, "%s: mode %d is not wgrad", who,
                            (int)a->params.mode);
    if (a->params.w_numel == 0) return CONVND_OK;
    /* the reduction index and the workspace index stay 64-bit-safe through Idx = int64_t */
    const bool wide = conv_needs_index64(a->params) ||
                      (double)a->params.w_numel * (double)splits >= (double)(1 << 30);
    return convnd_launch_by_dtype(a->params.dtype, who, [&](auto t) {
        using T = typename decltype(t)::type;
        return wide ? wgrad_launch_typed<T, int64_t>(a, splits)
                    : wgrad_launch_typed<T, int32_t>(a, splits);
    });
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_direct) {
    return CONVND_NS::wgrad_launch(a, 1, "wgrad_direct");
}

CONVND_DEFINE_LAUNCHER(wgrad_splitk) {
    const int64_t splits = convnd_wgrad_splits(&a->params, a->config);
    if (splits < 1)
        return convnd_error(CONVND_ERR_INTERNAL, "wgrad_splitk: config %d out of range",
                            (int)a->config);
    const convnd_status st = CONVND_NS::wgrad_check_partials(a, splits, "wgrad_splitk");
    if (st != CONVND_OK) return st;
    return CONVND_NS::wgrad_launch(a, splits, "wgrad_splitk");
}
