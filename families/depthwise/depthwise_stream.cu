/* Depthwise convolution streamed along W: the 1-D causal conv of sequence models (K <= 8, long
 * sequences), configs stream4 / stream8 of the depthwise schedule.
 *
 * The kernel must be 1 in the leading dims (any 1-D problem; 2-D/3-D with a 1 x K kernel) and
 * span E = D*(K-1) + 1 <= WIN along W. A thread owns VEC consecutive output channels (16 bytes
 * of T) and a run of outputs along W; it keeps the WIN most recent inputs in registers and the
 * K taps scattered into a WIN-long register weight vector, so the sequence is read once (plus
 * E-1 inputs of overlap per run): per output it loads S new input vectors, does K FMAs per
 * channel and stores one vector. With stride 1 it takes 4 (window 8: 2) outputs at a time and
 * issues their input loads together, so a thread keeps several loads in flight. Channels-last with
 * a multiplier of 1 and aligned channel vectors moves 16 bytes per access; other layouts run the
 * same loop element by element. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "depthwise_common.cuh"
#include "depthwise_configs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

/* Threads per block: the kernel has no shared memory or barriers, and a register-heavy thread
 * (window, weights and prefetched inputs in registers) fits SMs better in small blocks. */
#define CONVND_DW_STREAM_THREADS 128

struct dw_stream_args {
    int64_t run_len, runs, threads; /* threads = N * O0 * O1 * runs * channel vectors */
};

/* Output o from the window (slot s holds tap k when bit s of taps is set). */
template <typename T, typename Idx, int WIN, int VEC, bool VECIO>
__device__ __forceinline__ void
dw_stream_output(const convnd_conv_params &p, unsigned taps, const float (&wv)[WIN][VEC],
                 const float (&win)[WIN][VEC], const dw_item<Idx> &at, Idx co0, Idx o, int lanes,
                 const T *bias, const T *z, T *y) {
    float acc[VEC];
    CONVND_UNROLL(16)
    for (int j = 0; j < VEC; ++j)
        acc[j] = 0.0f;
    CONVND_UNROLL(8)
    for (int s = 0; s < WIN; ++s)
        if (taps >> s & 1u)
            for (int j = 0; j < VEC; ++j)
                acc[j] = fmaf(win[s][j], wv[s][j], acc[j]);
    const Idx y_off = conv_offset<Idx>(p.ys, at.n, co0, at.o0, at.o1, o);
    dw_finish_vec<T, Idx, VEC, VECIO>(p, acc, bias, z, y, co0, y_off, lanes);
}

/* Stride 1 (the causal conv): U outputs at a time, their U new inputs loaded together first, so
 * that U loads are in flight per thread instead of one dependent load per output (U = 2 for a
 * window of 8, whose registers are scarcer). Slot i of the extended window is win[i] below WIN,
 * nxt[i - WIN] above (indices fixed once unrolled). */
template <typename T, typename Idx, int WIN, int VEC, bool VECIO>
__device__ __forceinline__ void
dw_stream_stride1(const convnd_conv_params &p, const T *xrow, const dw_lane_channels<Idx, VEC> &lc,
                  Idx first, unsigned taps, const float (&wv)[WIN][VEC], const dw_item<Idx> &at,
                  Idx co0, Idx o_end, float (&win)[WIN][VEC], const T *bias, const T *z, T *y) {
    constexpr int U = WIN <= 4 ? 4 : 2;
    for (Idx o = at.ow0; o < o_end; o += U) {
        float nxt[U][VEC];
        const Idx pos = first + (o - at.ow0) + WIN; /* input of extended slot WIN */
        CONVND_UNROLL(8)
        for (int u = 0; u < U; ++u)
            dw_load_lanes<T, Idx, VEC, VECIO>(p, xrow, lc, pos + u, nxt[u]);
        CONVND_UNROLL(8)
        for (int u = 0; u < U; ++u) {
            if (o + u >= o_end) continue; /* not break: the loop must unroll */
            float acc[VEC];
            CONVND_UNROLL(16)
            for (int j = 0; j < VEC; ++j)
                acc[j] = 0.0f;
            CONVND_UNROLL(8)
            for (int s = 0; s < WIN; ++s) {
                const int i = u + s;
                if (taps >> s & 1u)
                    for (int j = 0; j < VEC; ++j)
                        acc[j] =
                            fmaf(i < WIN ? win[i < WIN ? i : 0][j] : nxt[i >= WIN ? i - WIN : 0][j],
                                 wv[s][j], acc[j]);
            }
            const Idx y_off = conv_offset<Idx>(p.ys, at.n, co0, at.o0, at.o1, o + u);
            dw_finish_vec<T, Idx, VEC, VECIO>(p, acc, bias, z, y, co0, y_off, lc.lanes);
        }
        CONVND_UNROLL(8)
        for (int s = 0; s < WIN; ++s) {
            const int i = U + s;
            CONVND_UNROLL(16)
            for (int j = 0; j < VEC; ++j)
                win[s][j] = i < WIN ? win[i < WIN ? i : 0][j] : nxt[i >= WIN ? i - WIN : 0][j];
        }
    }
}

template <typename T, typename Idx, int WIN, bool VECIO>
__global__ void __launch_bounds__(CONVND_DW_STREAM_THREADS, 1)
    depthwise_stream_kernel(const convnd_conv_params p, const T *__restrict__ x,
                            const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y,
                            const dw_stream_args g) {
    constexpr int VEC = dw_vec_width<T>::value;
    const Idx C_out = (Idx)p.C_out;
    const Idx cvecs = (C_out + VEC - 1) / VEC;
    const Idx S = (Idx)p.s[2], D = (Idx)p.d[2], P = (Idx)p.p0[2];
    const Idx E = D * ((Idx)p.k[2] - 1) + 1;
    /* window slot j holds input position (first tap's position) + j - lead */
    const Idx lead = (Idx)WIN - E;
    const Idx total = (Idx)g.threads, runs = (Idx)g.runs, run_len = (Idx)g.run_len;
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx t = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; t < total; t += step) {
        const Idx co0 = (t % cvecs) * VEC;
        const dw_item<Idx> at = dw_decode_item<Idx>(p, t / cvecs, runs, run_len);
        const dw_lane_channels<Idx, VEC> lc = dw_lane_channels_for<Idx, VEC>(p, co0);
        const int lanes = lc.lanes;

        /* tap k sits in slot lead + k*D; the other slots are skipped (not multiplied by 0, so a
         * non-finite input between dilated taps cannot leak into this output) */
        float wv[WIN][VEC];
        unsigned taps = 0;
        CONVND_UNROLL(8)
        for (int s = 0; s < WIN; ++s) {
            const Idx off = (Idx)s - lead;
            const bool tap = off >= 0 && off % D == 0;
            taps |= tap ? 1u << s : 0u;
            CONVND_UNROLL(16)
            for (int j = 0; j < VEC; ++j)
                wv[s][j] = tap && j < lanes
                               ? conv_load(w, conv_offset<Idx>(p.ws, co0 + (Idx)j, (Idx)0, (Idx)0,
                                                               (Idx)0, off / D))
                               : 0.0f;
        }

        /* the kernel is 1 in the leading dims: one input row (or none, in their padding) */
        Idx i0, i1;
        const bool row = conv_forward_input<Idx>(at.o0, 0, p.s[0], p.d[0], p.p0[0], p.in[0], i0) &&
                         conv_forward_input<Idx>(at.o1, 0, p.s[1], p.d[1], p.p0[1], p.in[1], i1);
        const T *xrow =
            row ? x + at.n * (Idx)p.xs[0] + i0 * (Idx)p.xs[2] + i1 * (Idx)p.xs[3] : nullptr;

        const Idx o_end = at.ow0 + run_len < (Idx)p.out[2] ? at.ow0 + run_len : (Idx)p.out[2];
        const Idx first = at.ow0 * S - P - lead; /* input in slot 0 for output ow0 */
        float win[WIN][VEC];
        CONVND_UNROLL(8)
        for (int s = 0; s < WIN; ++s)
            dw_load_lanes<T, Idx, VEC, VECIO>(p, xrow, lc, first + s, win[s]);
        if (S == 1) {
            dw_stream_stride1<T, Idx, WIN, VEC, VECIO>(p, xrow, lc, first, taps, wv, at, co0, o_end,
                                                       win, bias, z, y);
            continue;
        }
        for (Idx o = at.ow0;;) {
            dw_stream_output<T, Idx, WIN, VEC, VECIO>(p, taps, wv, win, at, co0, o, lanes, bias, z,
                                                      y);
            if (++o >= o_end) break;
            /* the next output's window starts S inputs later */
            const Idx next = o * S - P - lead + (Idx)WIN - S; /* first input not yet loaded */
            /* with S > WIN the first S - WIN of them would only pass through: skip them, so the
             * cost per output is bounded by the window, not by the stride */
            for (Idx s = S > (Idx)WIN ? S - (Idx)WIN : 0; s < S; ++s) {
                CONVND_UNROLL(8)
                for (int q = 0; q + 1 < WIN; ++q) {
                    CONVND_UNROLL(16)
                    for (int j = 0; j < VEC; ++j)
                        win[q][j] = win[q + 1][j];
                }
                dw_load_lanes<T, Idx, VEC, VECIO>(p, xrow, lc, next + s, win[WIN - 1]);
            }
        }
    }
}

/* As families/depthwise/depthwise_cl.cu: multiplier 1, channels innermost, whole aligned vectors. */
static bool dw_stream_vector_io(const convnd_launch_args *a, int vec) {
    const convnd_conv_params &p = a->params;
    if (p.cout_g != 1 || p.C_out % vec != 0 || p.xs[1] != 1 || p.ys[1] != 1) return false;
    for (int t = 0; t < 5; ++t)
        if (t != 1 && (p.xs[t] % vec != 0 || p.ys[t] % vec != 0)) return false;
    const uintptr_t ptrs = (uintptr_t)a->x | (uintptr_t)a->y |
                           (p.has_bias ? (uintptr_t)a->bias : 0) | (p.has_z ? (uintptr_t)a->z : 0);
    return ptrs % 16 == 0;
}

template <typename T, typename Idx, int WIN, bool VECIO>
static convnd_status dw_stream_launch_typed(const convnd_launch_args *a, const dw_stream_args &g) {
    const convnd_conv_params &p = a->params;
    int64_t blocks = (g.threads + CONVND_DW_STREAM_THREADS - 1) / CONVND_DW_STREAM_THREADS;
    if (blocks > 65535) blocks = 65535; /* the thread loop strides over the rest */
    auto kernel = &depthwise_stream_kernel<T, Idx, WIN, VECIO>;
    return convnd_launch(kernel, dim3((unsigned)blocks), dim3(CONVND_DW_STREAM_THREADS), 0,
                         a->stream, p, (const T *)a->x, (const T *)a->w, (const T *)a->bias,
                         (const T *)a->z, (T *)a->y, g);
}

template <typename T, int WIN>
static convnd_status dw_stream_launch_dtype(const convnd_launch_args *a) {
    constexpr int VEC = dw_vec_width<T>::value;
    const convnd_conv_params &p = a->params;
    if (p.k[0] != 1 || p.k[1] != 1 || convnd_dw_span_w(&p) > WIN)
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_stream: kernel does not fit %d", WIN);
    dw_stream_args g;
    g.run_len = convnd_dw_stream_run(&p);
    g.runs = (p.out[2] + g.run_len - 1) / g.run_len;
    g.threads = p.N * p.out[0] * p.out[1] * g.runs * ((p.C_out + VEC - 1) / VEC);
    const bool vec = dw_stream_vector_io(a, VEC);
    /* the thread count joins the index math */
    const bool wide = conv_needs_index64(p) || g.threads >= ((int64_t)1 << 30);
    if (vec)
        return wide ? dw_stream_launch_typed<T, int64_t, WIN, true>(a, g)
                    : dw_stream_launch_typed<T, int32_t, WIN, true>(a, g);
    return wide ? dw_stream_launch_typed<T, int64_t, WIN, false>(a, g)
                : dw_stream_launch_typed<T, int32_t, WIN, false>(a, g);
}

template <int WIN> static convnd_status dw_stream_launch_win(const convnd_launch_args *a) {
    return convnd_launch_by_dtype(a->params.dtype, "depthwise_stream", [&](auto t) {
        return dw_stream_launch_dtype<typename decltype(t)::type, WIN>(a);
    });
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(depthwise_stream) {
    using namespace CONVND_NS;
    if (a->config < 0 || a->config >= CONVND_DW_CONFIG_COUNT ||
        convnd_dw_config_at(a->config).path != CONVND_DW_PATH_STREAM)
        return convnd_error(CONVND_ERR_INTERNAL,
                            "depthwise_stream: config %d is not a stream config", (int)a->config);
    if (a->params.y_numel == 0) return CONVND_OK;
    switch (convnd_dw_config_at(a->config).param) {
    case 4:
        return dw_stream_launch_win<4>(a);
    case 8:
        return dw_stream_launch_win<8>(a);
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_stream: no kernel for a window of %d",
                            (int)convnd_dw_config_at(a->config).param);
    }
}
