/* Implicit-GEMM weight gradient with a 16-byte vector loader (SPEC §10), for channels-last x and
 * dy on tensor cores (f16/bf16). Per group g: dw_g[M, N] = dy_g[M, R] * X_g[R, N] with M =
 * C_out/g, R = batch * prod(O) (r = (n, o0, o1, o2) row-major) and, unlike wgrad_igemm.cuh,
 * columns tap-major: n = kidx * (C_in/g) + cl, so that 8 consecutive columns are 8 consecutive
 * channels of one tap, 16 contiguous bytes of x (C_in/g is a multiple of 8).
 *
 * Both operands are staged as they lie in memory, k-major: A[r][m] = dy (rows of BM output
 * channels), B[r][n] = X (rows of BN gathered columns), XOR-swizzled 16-bit tiles
 * (smem_tile.cuh); the warps read A with ldmatrix.trans and B k-major (tc_warp_mma.cuh). Every
 * 16-byte chunk is one cp.async (zero-filled where the tap falls in the padding, past R, or past
 * M or N), STAGES deep. A thread's chunks keep their column for the whole block: its dy channel
 * offset, and its x tap (displacement per dim) and channel offset, are formed once; per k-tile
 * only its rows' reduction positions advance (a mixed-radix add of BK's digits, one carry per
 * digit), their 32-bit offsets and bounds predicates formed once per row, not per element.
 * Problems that need 64-bit offsets are refused (wgrad_igemm_tc runs them).
 *
 * Split-K as wgrad_igemm.cuh: block z = j * groups + g over chunk j of the k-tiles; one chunk
 * writes dw through the epilogue, several write f32 partials that wgrad_reduce_kernel sums in a
 * fixed order (bit-identical run to run). */
#ifndef CONVND_WGRAD_VEC_CUH
#define CONVND_WGRAD_VEC_CUH

#include "launch_abi.h"
#include "conv_index.cuh"
#include "error.h"
#include "planted_bugs.h"
#include "smem_tile.cuh"
#include "tc_warp_mma.cuh"
#include "wgrad_common.cuh"
#include "wgrad_split.h"

namespace CONVND_NS {

constexpr int wgrad_vec_elems = 8; /* 16-bit elements per 16-byte chunk */

/* The block's warps: A and B k-major swizzled tiles (rows: the BK reduction positions). */
template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N>
using wgrad_vec_mma =
    tc_warp_mma_on<T, BM, BN, BK, WARPS_M, WARPS_N, true, smem_swizzled_tile<T, BK, BM>,
                   smem_swizzled_tile<T, BK, BN>, true>;

/* One reduction position r = (n, o0, o1, o2), carried from k-tile to k-tile. */
struct wgrad_vec_cursor {
    int32_t r, n, o[3];
};

__device__ __forceinline__ wgrad_vec_cursor wgrad_vec_cursor_at(const convnd_conv_params &p,
                                                                int64_t r) {
    wgrad_vec_cursor c;
    c.r = (int32_t)r;
    for (int t = 2; t >= 0; --t) {
        c.o[t] = (int32_t)(r % p.out[t]);
        r /= p.out[t];
    }
    c.n = (int32_t)r;
    return c;
}

/* c += step (step: a count of positions as digits), one carry per digit */
__device__ __forceinline__ void wgrad_vec_cursor_add(const int32_t out[3], wgrad_vec_cursor &c,
                                                     const wgrad_vec_cursor &step) {
    int32_t carry = 0;
    c.r += step.r;
    for (int t = 2; t >= 0; --t) {
        c.o[t] += step.o[t] + carry;
        carry = c.o[t] >= out[t];
        if (carry) c.o[t] -= out[t];
    }
    c.n += step.n + carry;
}

/* What a thread's chunks keep for the whole block (each thread copies one column of chunks of
 * each operand): its dy channel offset; its x tap's displacement k * d per spatial dim and the
 * tap's and channel's offset in x; whether each column lies inside M, N. */
struct wgrad_vec_columns {
    int32_t dy_ch, x_tap, disp[3];
    bool a_ok, b_ok;
};

template <typename T, int BM, int BN, int BK, int THREADS> struct wgrad_vec_shape {
    static constexpr int A_CPR = BM / wgrad_vec_elems, B_CPR = BN / wgrad_vec_elems;
    static_assert(THREADS % A_CPR == 0 && (BK * A_CPR) % THREADS == 0,
                  "every thread copies whole chunks of one dy column");
    static_assert(THREADS % B_CPR == 0 && (BK * B_CPR) % THREADS == 0,
                  "every thread copies whole chunks of one x column");
    static constexpr int A_ROWS = BK * A_CPR / THREADS; /* A rows a thread copies per k-tile */
    static constexpr int B_ROWS = BK * B_CPR / THREADS;
    static constexpr int A_STEP = THREADS / A_CPR, B_STEP = THREADS / B_CPR; /* row stride */
    /* the same rows for both operands (BM == BN): one set of cursors */
    static constexpr bool SHARED_ROWS = A_CPR == B_CPR;
    using LA = smem_swizzled_tile<T, BK, BM>;
    using LB = smem_swizzled_tile<T, BK, BN>;
    static constexpr int STAGE = LA::ELEMS + LB::ELEMS;
};

/* Copies one k-tile: the thread's A rows (positions ra[i]) and B rows (rb[i]) into stage s. */
template <typename T, int BM, int BN, int BK, int THREADS>
__device__ __forceinline__ void wgrad_vec_load(const convnd_conv_params &p, const T *x, const T *dy,
                                               int32_t R, int tid, const wgrad_vec_columns &col,
                                               const wgrad_vec_cursor *ra,
                                               const wgrad_vec_cursor *rb, T *s) {
    using sh = wgrad_vec_shape<T, BM, BN, BK, THREADS>;
    const int ac = tid % sh::A_CPR, bc = tid % sh::B_CPR;
    T *const a = s, *const b = s + sh::LA::ELEMS;
    CONVND_UNROLL(8)
    for (int i = 0; i < sh::A_ROWS; ++i) {
        const wgrad_vec_cursor &c = ra[i];
        const bool ok = col.a_ok && c.r < R;
        const int32_t off = c.n * (int32_t)p.ys[0] + c.o[0] * (int32_t)p.ys[2] +
                            c.o[1] * (int32_t)p.ys[3] + c.o[2] * (int32_t)p.ys[4] + col.dy_ch;
        const int row = tid / sh::A_CPR + i * sh::A_STEP;
        convnd_cp_async<16>(a + sh::LA::offset(row, ac * wgrad_vec_elems), ok ? dy + off : dy, ok);
    }
    CONVND_UNROLL(8)
    for (int i = 0; i < sh::B_ROWS; ++i) {
        const wgrad_vec_cursor &c = rb[i];
        bool ok = col.b_ok && c.r < R;
        int32_t off = c.n * (int32_t)p.xs[0] + col.x_tap;
        for (int d = 0; d < 3; ++d) {
            const int32_t base = c.o[d] * (int32_t)p.s[d] - (int32_t)p.p0[d]; /* the row's */
            /* 0 <= in < size as one unsigned compare */
            ok = ok && (uint32_t)(base + col.disp[d]) < (uint32_t)p.in[d];
            off += base * (int32_t)p.xs[2 + d];
        }
        const int row = tid / sh::B_CPR + i * sh::B_STEP;
        convnd_cp_async<16>(b + sh::LB::offset(row, bc * wgrad_vec_elems), ok ? x + off : x, ok);
    }
}

/* The loader's state (each row's cursor, the columns' offsets and taps) takes about 40
 * registers beyond the forward's. On the forward core's 128-register budget, 64 accumulators a
 * thread (the 128 x 64 tile's 64 x 32 warp tiles) spill at sm_90 (ptxas: 176 bytes): those get
 * half the resident blocks, i.e. twice the registers. */
template <class Mma>
constexpr int wgrad_vec_min_blocks =
    Mma::REGS == 128 && Mma::FM *Mma::FN * 4 >= 64 && Mma::MIN_BLOCKS > 1 ? Mma::MIN_BLOCKS / 2
                                                                          : Mma::MIN_BLOCKS;

/* z may be dw (in place), so neither carries __restrict__. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES>
__global__ void __launch_bounds__(Mma::THREADS, wgrad_vec_min_blocks<Mma>)
    wgrad_vec_kernel(const convnd_conv_params p, int64_t splits, const T *__restrict__ x,
                     const T *__restrict__ dy, const T *z, T *dw, float *__restrict__ ws) {
    constexpr int THREADS = Mma::THREADS;
    using sh = wgrad_vec_shape<T, BM, BN, BK, THREADS>;
    CONVND_DYNAMIC_SHARED(float4, smem);
    T *const stages = reinterpret_cast<T *>(smem);
    const int tid = (int)threadIdx.x;
    const int64_t g = (int64_t)blockIdx.z % p.groups, j = (int64_t)blockIdx.z / p.groups;
    const int32_t m0 = (int32_t)blockIdx.y * BM, n0 = (int32_t)blockIdx.x * BN;
    const int32_t R = (int32_t)(p.N * p.out[0] * p.out[1] * p.out[2]);
    const int32_t cin_g = (int32_t)p.cin_g, KK = (int32_t)(p.k[0] * p.k[1] * p.k[2]);
    const int32_t NC = cin_g * KK;
    const int64_t ktiles = (R + BK - 1) / BK;
    const int64_t kt0 = wgrad_chunk_begin(ktiles, splits, j);
    const int64_t kt1 = wgrad_chunk_begin(ktiles, splits, j + 1);

    /* the thread's columns, formed once */
    wgrad_vec_columns col;
    {
        const int32_t m = m0 + (tid % sh::A_CPR) * wgrad_vec_elems;
        col.a_ok = m < (int32_t)p.cout_g;
        col.dy_ch = (int32_t)(g * p.cout_g) + m;
        const int32_t cn = n0 + (tid % sh::B_CPR) * wgrad_vec_elems;
        col.b_ok = cn < NC;
        int32_t kidx = col.b_ok ? cn / cin_g : 0;
        col.x_tap = (int32_t)(g * p.cin_g) + (col.b_ok ? cn % cin_g : 0);
        for (int d = 2; d >= 0; --d) {
            col.disp[d] = (kidx % (int32_t)p.k[d]) * (int32_t)p.d[d];
            col.x_tap += col.disp[d] * (int32_t)p.xs[2 + d];
            kidx /= (int32_t)p.k[d];
        }
    }
    /* the thread's rows at the first k-tile, and BK positions as digits */
    /* B's rows are A's when both tiles are as wide (SHARED_ROWS): rb then is never read */
    wgrad_vec_cursor ra[sh::A_ROWS], rb[sh::SHARED_ROWS ? 1 : sh::B_ROWS];
    CONVND_UNROLL(8)
    for (int i = 0; i < sh::A_ROWS; ++i)
        ra[i] = wgrad_vec_cursor_at(p, kt0 * BK + tid / sh::A_CPR + i * sh::A_STEP);
    if constexpr (!sh::SHARED_ROWS) {
        CONVND_UNROLL(8)
        for (int i = 0; i < sh::B_ROWS; ++i)
            rb[i] = wgrad_vec_cursor_at(p, kt0 * BK + tid / sh::B_CPR + i * sh::B_STEP);
    }
    const wgrad_vec_cursor *const b_rows = sh::SHARED_ROWS ? ra : rb;
    const wgrad_vec_cursor step = wgrad_vec_cursor_at(p, BK);
    const int32_t out[3] = {(int32_t)p.out[0], (int32_t)p.out[1], (int32_t)p.out[2]};
    auto advance = [&]() {
        CONVND_UNROLL(8)
        for (int i = 0; i < sh::A_ROWS; ++i)
            wgrad_vec_cursor_add(out, ra[i], step);
        if constexpr (!sh::SHARED_ROWS) {
            CONVND_UNROLL(8)
            for (int i = 0; i < sh::B_ROWS; ++i)
                wgrad_vec_cursor_add(out, rb[i], step);
        }
    };

    Mma mma;
    mma.init(tid);
    /* the first STAGES - 1 k-tiles in flight, one commit group each (empty past the chunk) */
    CONVND_UNROLL(4)
    for (int s = 0; s < STAGES - 1; ++s) {
        if (kt0 + s < kt1) {
            wgrad_vec_load<T, BM, BN, BK, THREADS>(p, x, dy, R, tid, col, ra, b_rows,
                                                   stages + s * sh::STAGE);
            advance();
        }
        convnd_cp_async_commit();
    }
    /* k-tiles left in the chunk (R < 2^31: 32 bits), and the stages read and refilled next,
     * rotated by compares (a modulo of a 64-bit k-tile index cost 30 instructions a k-tile) */
    int32_t left = (int32_t)(kt1 - kt0), read = 0, fill = STAGES - 1;
    for (; left > 0; --left) {
        convnd_cp_async_wait<STAGES - 2>(); /* the read stage's copies (this thread's) landed */
        /* everyone's have, and everyone is done reading the stage refilled below (k-tile kt-1's) */
        if (CONVND_PLANTED_BUG != CONVND_PLANT_WGRAD_VEC_NO_STAGE_BARRIER) __syncthreads();
        if (left > STAGES - 1) {
            wgrad_vec_load<T, BM, BN, BK, THREADS>(p, x, dy, R, tid, col, ra, b_rows,
                                                   stages + fill * sh::STAGE);
            advance();
        }
        convnd_cp_async_commit();
        const T *const cur = stages + read * sh::STAGE;
        mma.compute(cur, cur + sh::LA::ELEMS);
        read = read == STAGES - 1 ? 0 : read + 1;
        fill = fill == STAGES - 1 ? 0 : fill + 1;
    }
    convnd_cp_async_wait<0>();

    mma.each([&](int r, int c, float v) {
        const int32_t m = m0 + r, cn = n0 + c;
        if (m >= (int32_t)p.cout_g || cn >= NC) return;
        const int64_t co = g * p.cout_g + m, cl = cn % cin_g, kidx = cn / cin_g;
        if (splits > 1) {
            ws[j * p.w_numel + wgrad_memory_index(p, co, cl, kidx)] = v;
            return;
        }
        const int64_t k2 = kidx % p.k[2], k1 = (kidx / p.k[2]) % p.k[1],
                      k0 = kidx / (p.k[2] * p.k[1]);
        conv_finish<T, int64_t>(p, v, (const T *)nullptr, z, dw, co,
                                conv_offset<int64_t>(p.ws, co, cl, k0, k1, k2));
    });
}

/* Launches one configuration (BM x BN x BK, STAGES deep, at most max_splits chunks) on a problem
 * the schedule's supports() accepted, with 16-byte aligned x and dy (the launcher checks). */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES>
__host__ convnd_status wgrad_vec_launch_tile(const convnd_launch_args *a, int64_t max_splits,
                                             const char *name) {
    const convnd_conv_params &p = a->params;
    if (p.mode != CONVND_WGRAD || conv_needs_index64(p))
        return convnd_error(CONVND_ERR_INTERNAL, "%s: mode %d, index64 %d: not its problem", name,
                            (int)p.mode, (int)conv_needs_index64(p));
    if (p.w_numel == 0) return CONVND_OK;
    using sh = wgrad_vec_shape<T, BM, BN, BK, Mma::THREADS>;
    const size_t bytes = (size_t)STAGES * sh::STAGE * sizeof(T);
    const T *x = (const T *)a->x, *dy = (const T *)a->w, *z = (const T *)a->z;
    T *dw = (T *)a->y;
    return wgrad_gemm_launch<T, BM, BN, BK>(
        a, max_splits, name, [&](dim3 grid, int64_t splits, float *ws) {
            return convnd_launch(&wgrad_vec_kernel<T, Mma, BM, BN, BK, STAGES>, grid,
                                 dim3(Mma::THREADS), bytes, a->stream, p, splits, x, dy, z, dw, ws);
        });
}

} // namespace CONVND_NS

#endif
