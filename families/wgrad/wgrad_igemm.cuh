/* Implicit-GEMM weight gradient (SPEC §10), one kernel template for CUDA cores and tensor cores.
 * Per group g the GEMM dw_g[M, N] = dy_g[M, R] * X_g[R, N] with M = C_out/g, N = (C_in/g) *
 * prod(K) (column n = cl * prod(K) + kidx, kidx = (k0 * K1 + k1) * K2 + k2) and the reduction R
 * = batch * prod(O) (r = (n, o0, o1, o2) row-major); X_g[r, n] = x[n, g*C_in/g + cl, o*S - P0 +
 * k*D], zero where the tap falls in the padding (never materialised: gathered into shared
 * memory). Grid (N tiles, M tiles, groups * splits); block z = j * groups + g computes its tile
 * over split-K chunk j of the k-tiles.
 *
 * Stage tiles in shared memory, two stages: A[m * LD + kk] = dy (M x BK) and B[n * LD + kk] = X
 * (N x BK, "n-major"), the layout both math cores read (igemm_simt_mma, tc_warp_mma). f32 stages
 * are filled with cp.async (4-byte copies, zero-fill for padding taps), overlapping the next
 * k-tile's copies with this one's math; 16-bit stages (tensor cores) by plain loads, and the CUDA
 * cores stage 16-bit inputs as f32 (converted at the load). Every thread of a block owns one
 * reduction column kk = tid % BK of every stage (THREADS is a multiple of BK), whose (n, o) it
 * carries from k-tile to k-tile by additions (wgrad_igemm_cursor); the x tile's columns (channel
 * and taps) are decoded once per block into shared memory (wgrad_igemm_tap). The loop divides
 * nothing: it held four 64-bit divisions per staged x element before (tools/peer_sass.py).
 *
 * One chunk (splits == 1): the epilogue writes dw = alpha * acc + beta * z from the accumulators.
 * Several: each chunk's f32 partial goes to ws[j * w_numel + e] (e: dw element in memory order)
 * and wgrad_reduce_kernel sums them for j = 0, 1, ... — no atomics, bit-identical whatever the
 * order blocks and threads run in. */
#ifndef CONVND_WGRAD_IGEMM_CUH
#define CONVND_WGRAD_IGEMM_CUH

#include "launch_abi.h"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "error.h"
#include "planted_bugs.h"
#include "wgrad_common.cuh"
#include "wgrad_split.h"

namespace CONVND_NS {

/* One column n of the block's x tile, decoded once per block (it does not change with the
 * k-tile): the offset of its channel and taps in x, and each tap's displacement k * d per spatial
 * dim. A column past the GEMM's N gets a displacement no input position can reach, so its bounds
 * check fails wherever the k-tile is. */
struct wgrad_igemm_tap {
    int64_t off, disp[3];
};
constexpr int64_t wgrad_igemm_no_tap = INT64_MIN / 4;

/* Shared-memory layout of one configuration: stage element type S (f32 for CUDA cores, T for
 * tensor cores), rows LD elements apart (16 bytes of padding: 16-byte-aligned rows for the
 * vector and ldmatrix reads), two stages of A then B, and for a math core that hands over through
 * shared memory (C_TILE) a BM x (BN + 1) f32 C tile over the same bytes; then the x tile's BN
 * decoded columns (wgrad_igemm_tap). */
template <typename S, int BM, int BN, int BK, bool C_TILE> struct wgrad_igemm_smem {
    static constexpr int LD = BK + 16 / (int)sizeof(S);
    static constexpr int STAGE = (BM + BN) * LD; /* elements of one stage */
    static constexpr int LDC = BN + 1;
    static constexpr size_t STAGE_BYTES = 2 * (size_t)STAGE * sizeof(S);
    static constexpr size_t C_BYTES = C_TILE ? (size_t)BM * LDC * sizeof(float) : 0;
    static constexpr size_t TAPS_OFFSET =
        ((STAGE_BYTES > C_BYTES ? STAGE_BYTES : C_BYTES) + 15) / 16 * 16;
    static constexpr size_t BYTES = TAPS_OFFSET + BN * sizeof(wgrad_igemm_tap);
};

/* One element of a stage: src[off] as S, zero when !valid. */
template <typename S, typename T>
__device__ __forceinline__ S wgrad_stage_value(const T *src, int64_t off, bool valid) {
    if constexpr (std::is_same<S, T>::value)
        return valid ? src[off] : convnd_from_f32<T>(0.0f);
    else
        return valid ? conv_load(src, off) : 0.0f;
}

template <typename S, typename T>
__device__ __forceinline__ void wgrad_stage_store(S *dst, const T *src, int64_t off, bool valid) {
    if constexpr (std::is_same<S, T>::value && sizeof(T) == 4)
        convnd_cp_async<4>(dst, valid ? src + off : src, valid); /* zero-fills when !valid */
    else
        *dst = wgrad_stage_value<S, T>(src, off, valid);
}

/* Decodes the x tile's columns n0 .. n0 + BN - 1 of group g (column cn = cl * prod(K) + kidx). */
template <int BN, int THREADS>
__device__ __forceinline__ void wgrad_igemm_decode_taps(const convnd_conv_params &p, int64_t g,
                                                        int64_t n0, int tid,
                                                        wgrad_igemm_tap *taps) {
    const int64_t KK = p.k[0] * p.k[1] * p.k[2], NC = p.cin_g * KK;
    for (int n = tid; n < BN; n += THREADS) {
        wgrad_igemm_tap t;
        const int64_t cn = n0 + n;
        if (cn >= NC) {
            t.off = 0;
            t.disp[0] = t.disp[1] = t.disp[2] = wgrad_igemm_no_tap;
        } else {
            int64_t kidx = cn % KK;
            t.off = (g * p.cin_g + cn / KK) * p.xs[1];
            for (int d = 2; d >= 0; --d) {
                t.disp[d] = (kidx % p.k[d]) * p.d[d];
                t.off += t.disp[d] * p.xs[2 + d];
                kidx /= p.k[d];
            }
        }
        taps[n] = t;
    }
}

/* A thread's reduction column r = (n, o0, o1, o2) (row-major over batch * prod(O)), carried from
 * k-tile to k-tile: the division happens once, each step of BK positions is a mixed-radix add
 * of BK's own digits (step), one carry per digit. */
struct wgrad_igemm_cursor {
    int64_t r, n, o[3];
};

__device__ __forceinline__ wgrad_igemm_cursor wgrad_igemm_cursor_at(const convnd_conv_params &p,
                                                                    int64_t r) {
    wgrad_igemm_cursor c;
    c.r = r;
    for (int t = 2; t >= 0; --t) {
        c.o[t] = r % p.out[t];
        r /= p.out[t];
    }
    c.n = r;
    return c;
}

__device__ __forceinline__ void wgrad_igemm_cursor_step(const convnd_conv_params &p,
                                                        wgrad_igemm_cursor &c,
                                                        const wgrad_igemm_cursor &step) {
    int64_t carry = 0;
    c.r += step.r;
    for (int t = 2; t >= 0; --t) {
        c.o[t] += step.o[t] + carry;
        carry = c.o[t] >= p.out[t];
        if (carry) c.o[t] -= p.out[t];
    }
    c.n += step.n + carry;
}

/* The column's offsets in dy (without the channel term) and x (without the channel and tap
 * terms), and the input position of tap k = 0 per spatial dim. */
struct wgrad_igemm_column {
    bool valid;
    int64_t dy_off, x_off, i0[3];
};

__device__ __forceinline__ wgrad_igemm_column wgrad_igemm_column_of(const convnd_conv_params &p,
                                                                    const wgrad_igemm_cursor &c,
                                                                    int64_t R) {
    wgrad_igemm_column col;
    col.valid = c.r < R;
    col.dy_off = c.n * p.ys[0] + c.o[0] * p.ys[2] + c.o[1] * p.ys[3] + c.o[2] * p.ys[4];
    col.x_off = c.n * p.xs[0];
    for (int t = 0; t < 3; ++t) {
        col.i0[t] = c.o[t] * p.s[t] - p.p0[t];
        col.x_off += col.i0[t] * p.xs[2 + t];
    }
    return col;
}

/* Loads one k-tile, column col, of group g into stage tiles a (dy) and b (x). */
template <typename T, typename S, int BM, int BN, int BK, int LD, int THREADS>
__device__ __forceinline__ void
wgrad_igemm_load(const convnd_conv_params &p, const T *x, const T *dy, int64_t g, int64_t m0,
                 const wgrad_igemm_column &col, const wgrad_igemm_tap *taps, int tid, S *a, S *b) {
    static_assert(THREADS % BK == 0, "each thread owns one reduction column");
    const int kk = tid % BK;
    CONVND_UNROLL(8)
    for (int m = tid / BK; m < BM; m += THREADS / BK) {
        const bool ok = col.valid && m0 + m < p.cout_g;
        const int64_t co = g * p.cout_g + m0 + m;
        wgrad_stage_store<S, T>(a + m * LD + kk, dy, col.dy_off + co * p.ys[1], ok);
    }
    CONVND_UNROLL(8)
    for (int n = tid / BK; n < BN; n += THREADS / BK) {
        const wgrad_igemm_tap t = taps[n];
        bool ok = col.valid;
        for (int d = 0; d < 3; ++d) {
            const int64_t i = col.i0[d] + t.disp[d];
            ok = ok && i >= 0 && i < p.in[d];
        }
        wgrad_stage_store<S, T>(b + n * LD + kk, x, col.x_off + t.off, ok);
    }
}

/* The weight gradient gathers both GEMM operands (im2col rows of x, and dy), so its loaders hold
 * more addresses than the forward kernels', which gather one. Two cases spill at sm_90 with the
 * forward core's register budget (tools/static_check.py): a one-warp block, whose 32 threads each
 * gather 1/32 of both tiles, and a SIMT core staging 16-bit operands as f32 (the conversions). They
 * get half the forward's resident blocks, i.e. twice its registers; the rest keep its occupancy. */
template <class Mma, typename T, typename S>
constexpr bool wgrad_needs_more_registers = Mma::THREADS <= 32 || sizeof(T) != sizeof(S);
template <class Mma, typename T, typename S>
constexpr int wgrad_min_blocks =
    Mma::MIN_BLOCKS > 1 && wgrad_needs_more_registers<Mma, T, S> ? Mma::MIN_BLOCKS / 2
                                                                 : Mma::MIN_BLOCKS;

/* z may be dw (in place), so neither carries __restrict__. */
template <typename T, typename S, class Mma, int BM, int BN, int BK>
__global__ void __launch_bounds__(Mma::THREADS, wgrad_min_blocks<Mma, T, S>)
    wgrad_igemm_kernel(const convnd_conv_params p, int64_t splits, const T *__restrict__ x,
                       const T *__restrict__ dy, const T *z, T *dw, float *__restrict__ ws) {
    using layout = wgrad_igemm_smem<S, BM, BN, BK, Mma::C_TILE>;
    constexpr int LD = layout::LD, THREADS = Mma::THREADS;
    CONVND_DYNAMIC_SHARED(float4, smem);
    S *const stages = reinterpret_cast<S *>(smem);
    const int tid = (int)threadIdx.x;
    const int64_t g = (int64_t)blockIdx.z % p.groups, j = (int64_t)blockIdx.z / p.groups;
    const int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * BN;
    const int64_t R = p.N * p.out[0] * p.out[1] * p.out[2];
    const int64_t ktiles = (R + BK - 1) / BK;
    const int64_t kt0 = wgrad_chunk_begin(ktiles, splits, j);
    const int64_t kt1 = wgrad_chunk_begin(ktiles, splits, j + 1);

    wgrad_igemm_tap *const taps =
        reinterpret_cast<wgrad_igemm_tap *>(reinterpret_cast<char *>(smem) + layout::TAPS_OFFSET);
    wgrad_igemm_decode_taps<BN, THREADS>(p, g, n0, tid, taps);
    /* this thread's reduction column at the first k-tile, and BK positions as digits */
    wgrad_igemm_cursor cur_col = wgrad_igemm_cursor_at(p, kt0 * BK + tid % BK);
    const wgrad_igemm_cursor step = wgrad_igemm_cursor_at(p, BK);
    __syncthreads(); /* the decoded columns, before any load reads them */

    Mma mma;
    mma.init(tid);
    if (kt0 < kt1)
        wgrad_igemm_load<T, S, BM, BN, BK, LD, THREADS>(p, x, dy, g, m0,
                                                        wgrad_igemm_column_of(p, cur_col, R), taps,
                                                        tid, stages, stages + BM * LD);
    convnd_cp_async_commit();
    for (int64_t kt = kt0; kt < kt1; ++kt) {
        S *const cur = stages + ((kt - kt0) & 1) * layout::STAGE;
        S *const next = stages + ((kt - kt0 + 1) & 1) * layout::STAGE;
        /* the next stage was last read by the previous k-tile's math: the barrier below it */
        if (kt + 1 < kt1) {
            wgrad_igemm_cursor_step(p, cur_col, step);
            wgrad_igemm_load<T, S, BM, BN, BK, LD, THREADS>(p, x, dy, g, m0,
                                                            wgrad_igemm_column_of(p, cur_col, R),
                                                            taps, tid, next, next + BM * LD);
        }
        convnd_cp_async_commit();
        convnd_cp_async_wait<1>(); /* this k-tile's copies have landed */
        __syncthreads();
        mma.compute(cur, cur + BM * LD);
        if (CONVND_PLANTED_BUG != CONVND_PLANT_WGRAD_IGEMM_NO_STAGE_BARRIER) __syncthreads();
    }
    convnd_cp_async_wait<0>();

    const int64_t KK = p.k[0] * p.k[1] * p.k[2], NC = p.cin_g * KK;
    auto finish = [&](int r, int c, float v) {
        const int64_t m = m0 + r, cn = n0 + c;
        if (m >= p.cout_g || cn >= NC) return;
        const int64_t co = g * p.cout_g + m, cl = cn / KK, kidx = cn % KK;
        if (splits > 1) {
            ws[j * p.w_numel + wgrad_memory_index(p, co, cl, kidx)] = v;
            return;
        }
        const int64_t k2 = kidx % p.k[2], k1 = (kidx / p.k[2]) % p.k[1],
                      k0 = kidx / (p.k[2] * p.k[1]);
        conv_finish<T, int64_t>(p, v, (const T *)nullptr, z, dw, co,
                                conv_offset<int64_t>(p.ws, co, cl, k0, k1, k2));
    };
    if constexpr (Mma::C_TILE) {
        /* the C tile reuses the stage bytes: every thread's math is done (the loop's barrier) */
        float *const c_tile = reinterpret_cast<float *>(smem);
        __syncthreads();
        mma.template store<layout::LDC>(c_tile);
        __syncthreads();
        for (int idx = tid; idx < BM * BN; idx += THREADS)
            finish(idx / BN, idx % BN, c_tile[(idx / BN) * layout::LDC + idx % BN]);
    } else {
        mma.each(finish);
    }
}

/* Launches one configuration (BM x BN x BK, at most max_splits chunks) on a WGRAD problem its
 * schedule's supports() accepted; the workspace holds the split-K partials when splits > 1. */
template <typename T, typename S, class Mma, int BM, int BN, int BK>
__host__ convnd_status wgrad_igemm_launch_tile(const convnd_launch_args *a, int64_t max_splits,
                                               const char *name) {
    const convnd_conv_params &p = a->params;
    if (p.mode != CONVND_WGRAD)
        return convnd_error(CONVND_ERR_INTERNAL, "%s: mode %d is not wgrad", name, (int)p.mode);
    if (p.w_numel == 0) return CONVND_OK;
    using layout = wgrad_igemm_smem<S, BM, BN, BK, Mma::C_TILE>;
    const T *x = (const T *)a->x, *dy = (const T *)a->w, *z = (const T *)a->z;
    T *dw = (T *)a->y;
    return wgrad_gemm_launch<T, BM, BN, BK>(
        a, max_splits, name, [&](dim3 grid, int64_t splits, float *ws) {
            return convnd_launch(&wgrad_igemm_kernel<T, S, Mma, BM, BN, BK>, grid,
                                 dim3(Mma::THREADS), layout::BYTES, a->stream, p, splits, x, dy, z,
                                 dw, ws);
        });
}

} // namespace CONVND_NS

#endif
