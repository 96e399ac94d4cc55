/* Tile loaders of the implicit GEMM: one k-tile (one tap, BK channels) of x rows (GEMM rows =
 * output pixels, gathered im2col-style on the fly) and of w rows (output channels) into a
 * shared-memory stage, row-major with the BK channels contiguous: element (row, k) at
 * tile[L::offset(row, k)] (smem_tile.cuh: padded or XOR-swizzled rows).
 *
 * Two ways to load, picked per launch (see igemm_pick_path):
 *  - vector: x and w channels-last, channel counts and strides multiples of 16 bytes, pointers
 *    16-byte aligned. Each thread moves whole 16-byte chunks with cp.async (LDGSTS.128); a chunk
 *    is all in range or all out (cin_g is a multiple of the chunk), so predication is exact.
 *  - gather: any strides (channels-first, mixed layouts, odd channel counts). One element at a
 *    time: cp.async of 4 bytes for f32, a plain load and shared store for 16-bit types (cp.async
 *    moves at least 4 bytes). Consecutive threads take consecutive rows, which are consecutive
 *    addresses in channels-first x at stride 1.
 * Everything out of range (padding, negative-padding crop, rows past M, columns past cout_g,
 * channels past cin_g) lands as zero, so the math needs no predicates. */
#ifndef CONVND_IGEMM_LOAD_CUH
#define CONVND_IGEMM_LOAD_CUH

#include "igemm_geometry.cuh"
#include "smem_tile.cuh"

namespace CONVND_NS {

enum igemm_path { IGEMM_GATHER = 0, IGEMM_VECTOR = 1, IGEMM_VECTOR_POINTWISE = 2 };

/* One element into shared memory, zero when !ok (src is not read then). */
template <typename T>
__device__ __forceinline__ void igemm_copy_elem(T *dst, const T *src, bool ok) {
    if constexpr (sizeof(T) == 4) {
        convnd_cp_async<4>(dst, src, ok);
    } else {
        *dst = ok ? *src : convnd_from_f32<T>(0.0f);
    }
}

/* ---- vector path -------------------------------------------------------------------------- */

/* A rows (x). POINTWISE (1x1 kernel): the row's input offset does not depend on the tap, so it
 * is computed once per block instead of once per k-tile. */
template <typename T, int BM, int BK, class L, int THREADS, bool POINTWISE>
struct igemm_a_vector_loader {
    static constexpr int VEC = 16 / (int)sizeof(T); /* elements per 16-byte chunk */
    static constexpr int CHUNKS = BK / VEC;         /* chunks per tile row */
    static constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
    /* more threads than chunks (small tiles): one pass, the surplus threads idle */
    static constexpr int PASSES = BM > ROWS_PER_PASS ? BM / ROWS_PER_PASS : 1;
    static constexpr bool SURPLUS = ROWS_PER_PASS > BM;
    static_assert(BK % VEC == 0 && THREADS % CHUNKS == 0 &&
                      (BM % ROWS_PER_PASS == 0 || ROWS_PER_PASS % BM == 0),
                  "vector A loader: tile does not split evenly over the threads");

    int32_t col;          /* first element of this thread's chunk within the tile row */
    int32_t base[PASSES]; /* n*xs0 + first channel of the group (+ spatial if POINTWISE); -1:
                             no row (pointwise: or the row's pixel is padding) */
    int32_t i0[PASSES], i1[PASSES], i2[PASSES]; /* o*S - P0 (unused if POINTWISE) */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        col = (tid % CHUNKS) * VEC;
        CONVND_UNROLL(8)
        for (int p = 0; p < PASSES; ++p) {
            const int32_t m = m0 + tid / CHUNKS + p * ROWS_PER_PASS;
            int32_t c[3] = {CONVND_IGEMM_ABSENT_ROW, CONVND_IGEMM_ABSENT_ROW,
                            CONVND_IGEMM_ABSENT_ROW};
            base[p] = -1;
            if (m < g.M) {
                const igemm_row r = igemm_split_row(g, m);
                for (int t = 0; t < 3; ++t)
                    c[t] = r.o[t] * g.S[t] - g.P0[t];
                base[p] = r.n * g.xs[0] + group * g.cin_g; /* xs[1] == 1 */
            }
            if (POINTWISE) {
                const bool in = (uint32_t)c[0] < (uint32_t)g.I[0] &&
                                (uint32_t)c[1] < (uint32_t)g.I[1] &&
                                (uint32_t)c[2] < (uint32_t)g.I[2];
                base[p] = in && base[p] >= 0
                              ? base[p] + c[0] * g.xs[2] + c[1] * g.xs[3] + c[2] * g.xs[4]
                              : -1;
            } else {
                i0[p] = c[0];
                i1[p] = c[1];
                i2[p] = c[2];
            }
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t c = it.c0 + col;
        const bool c_ok = c < g.cin_g;
        CONVND_UNROLL(8)
        for (int p = 0; p < PASSES; ++p) {
            const int row = tid / CHUNKS + p * ROWS_PER_PASS;
            if (SURPLUS && row >= BM) break;
            int32_t off;
            bool ok;
            if (POINTWISE) {
                ok = c_ok && base[p] >= 0;
                off = base[p] + c;
            } else {
                const int32_t a = i0[p] + it.t[0] * g.D[0];
                const int32_t b = i1[p] + it.t[1] * g.D[1];
                const int32_t e = i2[p] + it.t[2] * g.D[2];
                ok = c_ok && (uint32_t)a < (uint32_t)g.I[0] && (uint32_t)b < (uint32_t)g.I[1] &&
                     (uint32_t)e < (uint32_t)g.I[2];
                /* only formed in range: an absent row's coordinates would overflow */
                off = ok ? base[p] + a * g.xs[2] + b * g.xs[3] + e * g.xs[4] + c : 0;
            }
            convnd_cp_async<16>(tile + L::offset(row, col), ok ? x + off : x, ok);
        }
    }
};

/* B rows (w): output channels n0.. of the group. */
template <typename T, int BN, int BK, class L, int THREADS> struct igemm_b_vector_loader {
    static constexpr int VEC = 16 / (int)sizeof(T);
    static constexpr int CHUNKS = BK / VEC;
    static constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
    /* more threads than chunks (small tiles): one pass, the surplus threads idle */
    static constexpr int PASSES = BN > ROWS_PER_PASS ? BN / ROWS_PER_PASS : 1;
    static constexpr bool SURPLUS = ROWS_PER_PASS > BN;
    static_assert(BK % VEC == 0 && THREADS % CHUNKS == 0 &&
                      (BN % ROWS_PER_PASS == 0 || ROWS_PER_PASS % BN == 0),
                  "vector B loader: tile does not split evenly over the threads");

    int32_t col;
    int32_t base[PASSES]; /* co * ws0; -1: column past cout_g */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        col = (tid % CHUNKS) * VEC;
        CONVND_UNROLL(8)
        for (int p = 0; p < PASSES; ++p) {
            const int32_t n = n0 + tid / CHUNKS + p * ROWS_PER_PASS;
            base[p] = n < g.cout_g ? (group * g.cout_g + n) * g.ws[0] : -1;
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t c = it.c0 + col;
        const int32_t tap = it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4] + c;
        const bool c_ok = c < g.cin_g;
        CONVND_UNROLL(8)
        for (int p = 0; p < PASSES; ++p) {
            const int row = tid / CHUNKS + p * ROWS_PER_PASS;
            if (SURPLUS && row >= BN) break;
            const bool ok = c_ok && base[p] >= 0;
            convnd_cp_async<16>(tile + L::offset(row, col), ok ? w + (base[p] + tap) : w, ok);
        }
    }
};

/* ---- gather path -------------------------------------------------------------------------- */

/* A rows: thread tid owns row tid % BM and tile columns tid / BM + j * (THREADS / BM). */
template <typename T, int BM, int BK, class L, int THREADS> struct igemm_a_gather_loader {
    static constexpr int COL_STEP = THREADS / BM;
    static constexpr int PER_THREAD = BK / COL_STEP;
    static_assert(THREADS % BM == 0 && BK % COL_STEP == 0,
                  "gather A loader: tile does not split evenly over the threads");

    int32_t base; /* n*xs0 + first channel of the group * xs1 */
    int32_t i[3]; /* o*S - P0 */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        const int32_t m = m0 + tid % BM;
        base = 0;
        i[0] = i[1] = i[2] = CONVND_IGEMM_ABSENT_ROW;
        if (m < g.M) {
            const igemm_row r = igemm_split_row(g, m);
            for (int t = 0; t < 3; ++t)
                i[t] = r.o[t] * g.S[t] - g.P0[t];
            base = r.n * g.xs[0] + group * g.cin_g * g.xs[1];
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t a = i[0] + it.t[0] * g.D[0];
        const int32_t b = i[1] + it.t[1] * g.D[1];
        const int32_t e = i[2] + it.t[2] * g.D[2];
        const bool in = (uint32_t)a < (uint32_t)g.I[0] && (uint32_t)b < (uint32_t)g.I[1] &&
                        (uint32_t)e < (uint32_t)g.I[2];
        /* only formed in range: an absent row's coordinates would overflow */
        const int32_t off = in ? base + a * g.xs[2] + b * g.xs[3] + e * g.xs[4] : 0;
        const int row = tid % BM;
        CONVND_UNROLL(4)
        for (int j = 0; j < PER_THREAD; ++j) {
            const int kc = tid / BM + j * COL_STEP;
            const int32_t c = it.c0 + kc;
            const bool ok = in && c < g.cin_g;
            igemm_copy_elem(tile + L::offset(row, kc), ok ? x + (off + c * g.xs[1]) : x, ok);
        }
    }
};

/* B rows: thread tid owns output channel n0 + tid % BN. */
template <typename T, int BN, int BK, class L, int THREADS> struct igemm_b_gather_loader {
    static constexpr int COL_STEP = THREADS / BN;
    static constexpr int PER_THREAD = BK / COL_STEP;
    static_assert(THREADS % BN == 0 && BK % COL_STEP == 0,
                  "gather B loader: tile does not split evenly over the threads");

    int32_t base; /* co * ws0; -1: column past cout_g */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        const int32_t n = n0 + tid % BN;
        base = n < g.cout_g ? (group * g.cout_g + n) * g.ws[0] : -1;
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t off = base + it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4];
        const int row = tid % BN;
        CONVND_UNROLL(4)
        for (int j = 0; j < PER_THREAD; ++j) {
            const int kc = tid / BN + j * COL_STEP;
            const int32_t c = it.c0 + kc;
            const bool ok = base >= 0 && c < g.cin_g;
            igemm_copy_elem(tile + L::offset(row, kc), ok ? w + (off + c * g.ws[1]) : w, ok);
        }
    }
};

/* The loader pair of a path: A rows into stage tiles of layout LA, B rows into LB
 * (smem_tile.cuh; the math policy's A_TILE and B_TILE). */
template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS, int PATH>
struct igemm_loaders;

template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS>
struct igemm_loaders<T, BM, BN, BK, LA, LB, THREADS, IGEMM_GATHER> {
    using A = igemm_a_gather_loader<T, BM, BK, LA, THREADS>;
    using B = igemm_b_gather_loader<T, BN, BK, LB, THREADS>;
};
template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS>
struct igemm_loaders<T, BM, BN, BK, LA, LB, THREADS, IGEMM_VECTOR> {
    using A = igemm_a_vector_loader<T, BM, BK, LA, THREADS, false>;
    using B = igemm_b_vector_loader<T, BN, BK, LB, THREADS>;
};
template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS>
struct igemm_loaders<T, BM, BN, BK, LA, LB, THREADS, IGEMM_VECTOR_POINTWISE> {
    using A = igemm_a_vector_loader<T, BM, BK, LA, THREADS, true>;
    using B = igemm_b_vector_loader<T, BN, BK, LB, THREADS>;
};

} // namespace CONVND_NS

#endif
