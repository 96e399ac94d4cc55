/* Depthwise weight gradient (SPEC §10 with C_in/g = 1: depthwise, any channel multiplier, the
 * causal 1-D case included): dw[co, 0, k] = sum over (n, o) of dy[n, co, o] * x[n, co / m, o*S -
 * P0 + k*D], m = C_out / groups. dw is tiny (C_out * prod(K)) and every element's reduction is
 * long, so the reduction is spread over a whole block and cut into split-K chunks.
 *
 * Block (channel tile, chunk j) of THREADS threads: CB channel lanes x THREADS/CB reduction lanes
 * (CB = 32 when dy and x are channels-last, so a warp reads 32 neighbouring channels; 1
 * otherwise, so it reads 32 neighbouring positions). Reduction lane l walks positions
 * r_begin + l, + THREADS/CB, ... of chunk j (r = (n, o0, o1, o2) row-major), loading dy once for
 * KT taps at a time and accumulating each tap in f32 with fmaf. The lanes' sums are then added by
 * a fixed tree in shared memory. One chunk: the epilogue writes dw = alpha * acc + beta * z;
 * several: f32 partials into ws[j * w_numel + e], summed for j = 0, 1, ... by
 * wgrad_reduce_kernel. Every sum has a fixed order: bit-identical whatever the thread order. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "launch_abi.h"
#include "error.h"
#include "planted_bugs.h"
#include "wgrad_common.cuh"
#include "wgrad_split.h"

namespace CONVND_NS {

static constexpr int wgrad_dw_threads = 256;
static constexpr int wgrad_dw_taps = 8; /* KT: taps accumulated per pass over the chunk */

/* z may be dw (in place), so neither carries __restrict__. */
template <typename T>
__global__ void __launch_bounds__(wgrad_dw_threads)
    wgrad_depthwise_kernel(const convnd_conv_params p, int32_t cb, int64_t splits,
                           const T *__restrict__ x, const T *__restrict__ dy, const T *z, T *dw,
                           float *__restrict__ ws) {
    constexpr int THREADS = wgrad_dw_threads, KT = wgrad_dw_taps;
    CONVND_SHARED(float, lanes, [KT][THREADS]);
    const int tid = (int)threadIdx.x;
    const int c = tid % cb, lane = tid / cb, nlanes = THREADS / cb;
    const int64_t co = (int64_t)blockIdx.x * cb + c, j = (int64_t)blockIdx.y;
    const bool live = co < p.C_out;
    const int64_t ci = live ? co / p.cout_g : 0; /* cin_g == 1: group co / m reads channel g */
    const int64_t R = p.N * p.out[0] * p.out[1] * p.out[2];
    const int64_t r0 = wgrad_chunk_begin(R, splits, j), r1 = wgrad_chunk_begin(R, splits, j + 1);
    const int64_t KK = p.k[0] * p.k[1] * p.k[2];

    for (int64_t t0 = 0; t0 < KK; t0 += KT) {
        float acc[KT];
        CONVND_UNROLL(8)
        for (int t = 0; t < KT; ++t)
            acc[t] = 0.0f;
        for (int64_t r = r0 + lane; live && r < r1; r += nlanes) {
            int64_t rest = r, o[3];
            for (int d = 2; d >= 0; --d) {
                o[d] = rest % p.out[d];
                rest /= p.out[d];
            }
            const float g = conv_load(dy, conv_offset<int64_t>(p.ys, rest, co, o[0], o[1], o[2]));
            CONVND_UNROLL(8)
            for (int t = 0; t < KT; ++t) {
                int64_t kidx = t0 + t, i[3];
                bool in = kidx < KK;
                for (int d = 2; d >= 0; --d) {
                    i[d] = o[d] * p.s[d] - p.p0[d] + (kidx % p.k[d]) * p.d[d];
                    kidx /= p.k[d];
                    in = in && i[d] >= 0 && i[d] < p.in[d];
                }
                if (in)
                    acc[t] = fmaf(
                        g, conv_load(x, conv_offset<int64_t>(p.xs, rest, ci, i[0], i[1], i[2])),
                        acc[t]);
            }
        }
        /* the lanes' sums by a fixed tree: lane l adds lane l + half, half = nlanes/2, ..., 1 */
        CONVND_UNROLL(8)
        for (int t = 0; t < KT; ++t)
            lanes[t][tid] = acc[t];
        __syncthreads();
        for (int half = nlanes / 2; half >= 1; half /= 2) {
            if (lane < half) {
                CONVND_UNROLL(8)
                for (int t = 0; t < KT; ++t)
                    lanes[t][tid] += lanes[t][tid + half * cb];
            }
            if (CONVND_PLANTED_BUG != CONVND_PLANT_WGRAD_DEPTHWISE_NO_TREE_BARRIER) __syncthreads();
        }
        if (lane == 0 && live)
            for (int t = 0; t < KT && t0 + t < KK; ++t) {
                const int64_t kidx = t0 + t;
                if (splits > 1) {
                    ws[j * p.w_numel + wgrad_memory_index(p, co, 0, kidx)] = lanes[t][tid];
                    continue;
                }
                const int64_t k2 = kidx % p.k[2], k1 = (kidx / p.k[2]) % p.k[1],
                              k0 = kidx / (p.k[2] * p.k[1]);
                conv_finish<T, int64_t>(p, lanes[t][tid], (const T *)nullptr, z, dw, co,
                                        conv_offset<int64_t>(p.ws, co, (int64_t)0, k0, k1, k2));
            }
        __syncthreads(); /* lanes[] is rewritten by the next tap tile */
    }
}

template <typename T>
static convnd_status wgrad_depthwise_typed(const convnd_launch_args *a, int64_t splits) {
    const convnd_conv_params &p = a->params;
    const int32_t cb = p.xs[1] == 1 && p.ys[1] == 1 ? 32 : 1;
    const dim3 grid((unsigned)((p.C_out + cb - 1) / cb), (unsigned)splits);
    const T *x = (const T *)a->x, *dy = (const T *)a->w, *z = (const T *)a->z;
    T *dw = (T *)a->y;
    float *ws = (float *)a->workspace;
    const convnd_status st = convnd_launch(&wgrad_depthwise_kernel<T>, grid, dim3(wgrad_dw_threads),
                                           0, a->stream, p, cb, splits, x, dy, z, dw, ws);
    if (st != CONVND_OK || splits == 1) return st;
    return convnd_launch(&wgrad_reduce_kernel<T, int64_t>, wgrad_grid(p.w_numel),
                         dim3(wgrad_threads), 0, a->stream, p, splits, (const float *)ws, z, dw);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(wgrad_depthwise) {
    const convnd_conv_params &p = a->params;
    if (p.mode != CONVND_WGRAD || p.cin_g != 1)
        return convnd_error(CONVND_ERR_INTERNAL,
                            "wgrad_depthwise: launched on mode %d, C_in/groups=%lld (wgrad with "
                            "one input channel per group only)",
                            (int)p.mode, (long long)p.cin_g);
    const int64_t splits = convnd_wgrad_depthwise_splits(&p, a->config);
    if (splits < 1)
        return convnd_error(CONVND_ERR_INTERNAL, "wgrad_depthwise: config %d out of range",
                            (int)a->config);
    if (p.w_numel == 0) return CONVND_OK;
    if (splits > 1) {
        const convnd_status st = CONVND_NS::wgrad_check_partials(a, splits, "wgrad_depthwise");
        if (st != CONVND_OK) return st;
    }
    return CONVND_NS::convnd_launch_by_dtype(p.dtype, "wgrad_depthwise", [&](auto t) {
        return CONVND_NS::wgrad_depthwise_typed<typename decltype(t)::type>(a, splits);
    });
}
