/* Stateful causal depthwise conv1d (SPEC §13): the streaming forward kernel, the final-state
 * kernel and the decode-step kernel.
 *
 * Forward: a block owns a tile of TILE_D channels x TILE_L tokens of one batch row. It stages the
 * tile's inputs plus the W-1 tokens before it in shared memory once (coalesced: along L for
 * (B, D, L), along D for (B, L, D)), then each thread computes outputs from shared memory, so
 * every input is read from global memory once (plus a W-1 halo per tile) and every output
 * written once. Taps before the output's sequence start read that sequence's initial state (or
 * are skipped). Each output's sum runs over k in increasing order with fmaf, whatever the tile,
 * so running a sequence in chunks with carried state is bit-identical to running it whole. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "causal_params.h"
#include "causal_launchers.h"
#include "error.h"

namespace CONVND_NS {


/* Row pitch of the shared tile: odd, so that 32 threads reading one token of 32 channels
 * ((B, L, D) outputs) hit 32 different banks. */
__host__ __device__ __forceinline__ int64_t causal_pitch(int64_t span) {
    return span % 2 ? span : span + 1;
}

__device__ __forceinline__ int64_t causal_clamp(int64_t v, int64_t hi) {
    return v < 0 ? 0 : v > hi ? hi : v;
}

/* Sequence s of token u in a packed row (the last s with query_start_loc[s] <= u) and its start.
 * Offsets are clamped to [0, L], so bad offsets give wrong values, never a wild access. */
__device__ __forceinline__ int64_t causal_seq_of(const int32_t *qsl, int64_t seqs, int64_t L,
                                                 int64_t u, int64_t &start) {
    int64_t lo = 0, hi = seqs - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (causal_clamp(qsl[mid], L) <= u)
            lo = mid;
        else
            hi = mid - 1;
    }
    start = causal_clamp(qsl[lo], L);
    return lo;
}

/* bias, then SiLU: shared by the forward and the update kernels so that both round alike. */
template <typename T>
__device__ __forceinline__ float causal_finish(const convnd_causal_params &p, float acc,
                                               const T *bias, int64_t d) {
    float v = acc;
    if (p.has_bias) v += conv_load(bias, d);
    return p.silu ? conv_activate(CONVND_ACT_SILU, v) : v;
}

template <typename T>
__global__ void __launch_bounds__(CONVND_CAUSAL_THREADS)
    causal_conv1d_kernel(const convnd_causal_params p, const T *__restrict__ x,
                         const T *__restrict__ w, const T *__restrict__ bias,
                         const T *__restrict__ init, const int32_t *__restrict__ seq_idx,
                         const int32_t *__restrict__ qsl, T *__restrict__ y) {
    CONVND_DYNAMIC_SHARED(float, smem);
    const int64_t W = p.width, L = p.seqlen, D = p.dim;
    const int64_t span = CONVND_CAUSAL_TILE_L + W - 1; /* tokens t0-(W-1) .. t0+TILE_L-1 */
    const int64_t pitch = causal_pitch(span);
    float *tile = smem;                                              /* [TILE_D][pitch] */
    int32_t *sid = (int32_t *)(smem + CONVND_CAUSAL_TILE_D * pitch); /* [span], seq_idx only */
    const int64_t tiles = (L + CONVND_CAUSAL_TILE_L - 1) / CONVND_CAUSAL_TILE_L;
    const int64_t b = (int64_t)blockIdx.x / tiles; /* one block per (row, token tile, channels) */
    const int64_t t0 = (int64_t)blockIdx.x % tiles * CONVND_CAUSAL_TILE_L;
    const int64_t d0 = (int64_t)blockIdx.y * CONVND_CAUSAL_TILE_D;
    const bool bdl = p.layout == CONVND_CAUSAL_BDL;
    const int tid = (int)threadIdx.x, nthr = (int)blockDim.x;

    const T *xb = x + b * p.xs_b;
    for (int64_t i = tid; i < CONVND_CAUSAL_TILE_D * span; i += nthr) {
        const int64_t c = bdl ? i / span : i % CONVND_CAUSAL_TILE_D;
        const int64_t j = bdl ? i % span : i / CONVND_CAUSAL_TILE_D;
        const int64_t d = d0 + c, u = t0 - (W - 1) + j;
        tile[c * pitch + j] =
            d < D && u >= 0 && u < L ? conv_load(xb, d * p.xs_d + u * p.xs_l) : 0.0f;
    }
    if (p.seqs == CONVND_CAUSAL_SEQ_IDX)
        for (int64_t j = tid; j < span; j += nthr) {
            const int64_t u = t0 - (W - 1) + j;
            sid[j] = u >= 0 && u < L ? seq_idx[b * L + u] : -1;
        }
    __syncthreads();

    for (int64_t i = tid; i < CONVND_CAUSAL_TILE_D * CONVND_CAUSAL_TILE_L; i += nthr) {
        const int64_t c = bdl ? i / CONVND_CAUSAL_TILE_L : i % CONVND_CAUSAL_TILE_D;
        const int64_t tl = bdl ? i % CONVND_CAUSAL_TILE_L : i / CONVND_CAUSAL_TILE_D;
        const int64_t d = d0 + c, t = t0 + tl;
        if (d >= D || t >= L) continue;
        int64_t start = 0, s = b;
        if (p.seqs == CONVND_CAUSAL_OFFSETS) s = causal_seq_of(qsl, p.num_seqs, L, t, start);
        const T *st = init ? init + (s * D + d) * (W - 1) : nullptr;
        const float *row = tile + c * pitch + tl; /* row[k]: token t - (W-1) + k */
        float acc = 0.0f;
        for (int64_t k = 0; k < W; ++k) {
            const int64_t u = t - (W - 1) + k;
            const float wk = conv_load(w, d * W + k);
            if (u >= start) {
                if (p.seqs != CONVND_CAUSAL_SEQ_IDX || sid[tl + k] == sid[tl + W - 1])
                    acc = fmaf(wk, row[k], acc);
            } else if (st) {
                acc = fmaf(wk, conv_load(st, (W - 1) + (u - start)), acc);
            }
        }
        conv_store(y, b * p.xs_b + d * p.xs_d + t * p.xs_l, causal_finish(p, acc, bias, d));
    }
}

/* final_states[s, d, j] = X[L_s + j]: one thread per (sequence, channel), j increasing, so
 * final_states may be initial_states itself (entry j reads entry L_s + j >= j, not yet
 * overwritten). */
template <typename T>
__global__ void __launch_bounds__(CONVND_CAUSAL_THREADS)
    causal_final_state_kernel(const convnd_causal_params p, const T *x, const int32_t *qsl,
                              const T *init, T *fin) {
    const int64_t W = p.width, D = p.dim, L = p.seqlen;
    const int64_t n = p.num_seqs * D;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = i / D, d = i % D;
        int64_t b = s, start = 0, end = L;
        if (p.seqs == CONVND_CAUSAL_OFFSETS) {
            b = 0;
            start = causal_clamp(qsl[s], L);
            end = causal_clamp(qsl[s + 1], L);
            if (end < start) end = start;
        }
        const int64_t len = end - start, base = (s * D + d) * (W - 1);
        for (int64_t j = 0; j < W - 1; ++j) {
            const int64_t m = len + j; /* position in X = cat(state, sequence) */
            float v;
            if (m < W - 1)
                v = init ? conv_load(init, base + m) : 0.0f;
            else
                v = conv_load(x, b * p.xs_b + d * p.xs_d + (start + m - (W - 1)) * p.xs_l);
            conv_store(fin, base + j, v);
        }
    }
}

__device__ __forceinline__ int64_t causal_pmod(int64_t a, int64_t m) {
    const int64_t r = a % m;
    return r < 0 ? r + m : r;
}

/* Decode step: one thread per (batch row, channel). All outputs first (they read the old
 * state), then the state update. */
template <typename T>
__global__ void __launch_bounds__(CONVND_CAUSAL_THREADS)
    causal_update_kernel(const convnd_causal_params p, const T *x, const T *w, const T *bias,
                         const int32_t *cache_seqlens, const int32_t *state_indices, T *state,
                         T *y) {
    const int64_t W = p.width, D = p.dim, Ln = p.seqlen, SL = p.state_len;
    const int64_t n = p.batch * D;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t b = i / D, d = i % D;
        const int64_t row = state_indices ? (int64_t)state_indices[b] : b;
        if (row < 0 || row >= p.state_rows) continue; /* padding slot: untouched */
        const bool ring = cache_seqlens != nullptr;
        const int64_t seen = ring ? (int64_t)cache_seqlens[b] : 0;
        T *st = state + (row * D + d) * SL;
        const int64_t xo = b * p.xs_b + d * p.xs_d;
        for (int64_t t = 0; t < Ln; ++t) {
            float acc = 0.0f;
            for (int64_t k = 0; k < W; ++k) {
                const int64_t u = t - (W - 1) + k; /* < 0: from the state */
                const float v = u >= 0 ? conv_load(x, xo + u * p.xs_l)
                                : ring ? conv_load(st, causal_pmod(seen + u, SL))
                                       : conv_load(st, SL + u);
                acc = fmaf(conv_load(w, d * W + k), v, acc);
            }
            conv_store(y, xo + t * p.xs_l, causal_finish(p, acc, bias, d));
        }
        if (ring && SL > 0) { /* width 1 keeps no state */
            for (int64_t t = 0; t < Ln; ++t)
                st[causal_pmod(seen + t, SL)] = x[xo + t * p.xs_l];
        } else {
            for (int64_t j = 0; j < SL; ++j) { /* shift left by Ln, append x */
                const int64_t src = j + Ln;
                st[j] = src < SL ? st[src] : x[xo + (src - SL) * p.xs_l];
            }
        }
    }
}

static unsigned causal_blocks(int64_t threads) {
    int64_t blocks = (threads + CONVND_CAUSAL_THREADS - 1) / CONVND_CAUSAL_THREADS;
    return (unsigned)(blocks > 65535 ? 65535 : blocks < 1 ? 1 : blocks);
}

template <typename T> static convnd_status causal_fwd_launch(const convnd_causal_launch_args *a) {
    const convnd_causal_params &p = a->p;
    convnd_status s = CONVND_OK;
    if (p.batch > 0 && p.dim > 0 && p.seqlen > 0) {
        const int64_t span = CONVND_CAUSAL_TILE_L + p.width - 1;
        const size_t smem = sizeof(float) * (size_t)(CONVND_CAUSAL_TILE_D * causal_pitch(span)) +
                            (p.seqs == CONVND_CAUSAL_SEQ_IDX ? sizeof(int32_t) * (size_t)span : 0);
        const int64_t tiles = (p.seqlen + CONVND_CAUSAL_TILE_L - 1) / CONVND_CAUSAL_TILE_L;
        if (tiles > INT32_MAX / p.batch)
            return convnd_error(CONVND_ERR_UNSUPPORTED,
                                "causal_conv1d: batch=%lld x %lld token tiles exceeds the grid",
                                (long long)p.batch, (long long)tiles);
        const dim3 grid((unsigned)(tiles * p.batch),
                        (unsigned)((p.dim + CONVND_CAUSAL_TILE_D - 1) / CONVND_CAUSAL_TILE_D));
        auto kernel = &causal_conv1d_kernel<T>;
        s = convnd_launch(kernel, grid, dim3(CONVND_CAUSAL_THREADS), smem, a->stream, p,
                          (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->init,
                          a->seq_idx, a->query_start_loc, (T *)a->y);
    }
    if (s == CONVND_OK && a->final_state && p.num_seqs * p.dim > 0) {
        auto kernel = &causal_final_state_kernel<T>;
        s = convnd_launch(kernel, dim3(causal_blocks(p.num_seqs * p.dim)),
                          dim3(CONVND_CAUSAL_THREADS), 0, a->stream, p, (const T *)a->x,
                          a->query_start_loc, (const T *)a->init, (T *)a->final_state);
    }
    return s;
}

template <typename T>
static convnd_status causal_update_launch(const convnd_causal_launch_args *a) {
    const convnd_causal_params &p = a->p;
    if (p.batch * p.dim == 0) return CONVND_OK;
    auto kernel = &causal_update_kernel<T>;
    return convnd_launch(kernel, dim3(causal_blocks(p.batch * p.dim)), dim3(CONVND_CAUSAL_THREADS),
                         0, a->stream, p, (const T *)a->x, (const T *)a->w, (const T *)a->bias,
                         a->cache_seqlens, a->state_indices, (T *)a->state, (T *)a->y);
}

} // namespace CONVND_NS

extern "C" convnd_status CONVND_LAUNCHER(causal_conv1d)(const convnd_causal_launch_args *a) {
    using namespace CONVND_NS;
    if (a->p.dim > (int64_t)65535 * CONVND_CAUSAL_TILE_D)
        return convnd_error(CONVND_ERR_UNSUPPORTED, "causal_conv1d: dim=%lld exceeds %lld",
                            (long long)a->p.dim, (long long)65535 * CONVND_CAUSAL_TILE_D);
    return convnd_launch_by_dtype(a->p.dtype, "causal_conv1d", [&](auto t) {
        return causal_fwd_launch<typename decltype(t)::type>(a);
    });
}

extern "C" convnd_status CONVND_LAUNCHER(causal_conv1d_update)(const convnd_causal_launch_args *a) {
    using namespace CONVND_NS;
    return convnd_launch_by_dtype(a->p.dtype, "causal_conv1d_update", [&](auto t) {
        return causal_update_launch<typename decltype(t)::type>(a);
    });
}
