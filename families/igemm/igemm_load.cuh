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

/* ---- how a tile splits over the threads --------------------------------------------------- */

/* Vector loaders: a tile of ROWS rows of COLS elements, moved in 16-byte chunks. Thread tid
 * takes chunk column col(tid) of rows row(tid, p), p = 0 .. PASSES - 1; with more threads than
 * chunks (small tiles) there is one pass and the surplus threads idle (idle(row)). */
template <typename T, int ROWS, int COLS, int THREADS> struct igemm_chunk_split {
    static constexpr int VEC = 16 / (int)sizeof(T); /* elements per 16-byte chunk */
    static constexpr int CHUNKS = COLS / VEC;       /* chunks per tile row */
    static constexpr int ROWS_PER_PASS = THREADS / CHUNKS;
    static constexpr int PASSES = ROWS > ROWS_PER_PASS ? ROWS / ROWS_PER_PASS : 1;
    static_assert(COLS % VEC == 0 && THREADS % CHUNKS == 0 &&
                      (ROWS % ROWS_PER_PASS == 0 || ROWS_PER_PASS % ROWS == 0),
                  "vector loader: tile does not split evenly over the threads");

    __device__ static __forceinline__ int col(int tid) { return (tid % CHUNKS) * VEC; }
    __device__ static __forceinline__ int row(int tid, int p) {
        return tid / CHUNKS + p * ROWS_PER_PASS;
    }
    __device__ static __forceinline__ bool idle(int row) {
        return ROWS_PER_PASS > ROWS && row >= ROWS;
    }
};

/* Gather loaders, one element at a time: thread tid owns line(tid) = tid % LINES of the tile (a
 * row of A, an output channel of B) and the PER_THREAD positions along it pos(tid, j) = tid /
 * LINES + j * STEP (channels of the k-tile), so consecutive threads take consecutive lines. */
template <int LINES, int SPAN, int THREADS> struct igemm_gather_split {
    static constexpr int STEP = THREADS / LINES;
    static constexpr int PER_THREAD = SPAN / STEP;
    static_assert(THREADS % LINES == 0 && SPAN % STEP == 0,
                  "gather loader: tile does not split evenly over the threads");

    __device__ static __forceinline__ int line(int tid) { return tid % LINES; }
    __device__ static __forceinline__ int pos(int tid, int j) { return tid / LINES + j * STEP; }
};

/* ---- vector path -------------------------------------------------------------------------- */

/* A rows (x). POINTWISE (1x1 kernel): the row's input offset does not depend on the tap, so it
 * is computed once per block instead of once per k-tile.
 *
 * Otherwise the state is incremental, as in CUTLASS's sm80 "optimized" conv activation
 * iterators: x's offset of (row, tap, channel) is the row's base (batch, group and the row's
 * own spatial origin o*S - P0, formed once at init) plus the tap's term (igemm_k_iter::x_tap,
 * uniform, stepped by the geometry's deltas) plus the channel; whether the tap lies inside x
 * for a row is bit t_d of the row's mask along each dimension d, also formed at init. Per
 * k-tile and pass that leaves three shifts, an AND, a compare and one add. A padded row's base may
 * lie outside x (negative, or past its end): the launcher takes this path only when every such
 * partial sum fits int32 (igemm_x_offsets_fit32). The masks cover filter extents up to
 * CONVND_IGEMM_MASK_TAPS; wider filters take the gather path (igemm_pick_path). */
template <typename T, int BM, int BK, class L, int THREADS, bool POINTWISE>
struct igemm_a_vector_loader {
    using S = igemm_chunk_split<T, BM, BK, THREADS>;

    int32_t col;                 /* first element of this thread's chunk within the tile row */
    int32_t base[S::PASSES];     /* n*xs0 + first channel of the group + the offset of the row's
                                    origin (o*S - P0); 0 for no row. Pointwise: of the row's pixel,
                                    -1 for no row or a padding pixel */
    uint32_t mask[3][S::PASSES]; /* bit 31 - t of mask[d]: tap t along d inside [0, I_d) (so a
                                    left shift by t brings it to the sign bit); 0 for no row;
                                    unused if POINTWISE */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        col = S::col(tid);
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            int32_t c[3], n;
            const bool present = igemm_row_origin(g, m0 + S::row(tid, p), c, n);
            base[p] = POINTWISE ? -1 : 0;
            if (present) base[p] = n * g.xs[0] + group * g.cin_g; /* xs[1] == 1 */
            if (POINTWISE) {
                const bool in = (uint32_t)c[0] < (uint32_t)g.I[0] &&
                                (uint32_t)c[1] < (uint32_t)g.I[1] &&
                                (uint32_t)c[2] < (uint32_t)g.I[2];
                base[p] = in && base[p] >= 0
                              ? base[p] + c[0] * g.xs[2] + c[1] * g.xs[3] + c[2] * g.xs[4]
                              : -1;
            } else {
                for (int d = 0; d < 3; ++d) {
                    /* an absent row's origin is far below 0: no bit, and no base term */
                    mask[d][p] = igemm_tap_mask(c[d], g.K[d], g.D[d], g.I[d]);
                    if (present) base[p] += c[d] * g.xs[2 + d];
                }
            }
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t c = it.c0 + col;
        const bool c_ok = c < g.cin_g;
        const int32_t tap = POINTWISE ? c : (int32_t)it.x_tap + c; /* exact: see above */
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            const int row = S::row(tid, p);
            if (S::idle(row)) break;
            bool ok;
            if (POINTWISE) {
                ok = c_ok && base[p] >= 0;
            } else {
                /* the tap's bit of each mask at the sign: three shifts and one 3-input AND */
                const uint32_t bits =
                    (mask[0][p] << it.t[0]) & (mask[1][p] << it.t[1]) & (mask[2][p] << it.t[2]);
                ok = c_ok && (int32_t)bits < 0;
            }
            /* only formed in range (x itself otherwise): an unsigned offset, as it is then
             * >= 0, so that forming the address is one wide multiply-add */
            convnd_cp_async<16>(tile + L::offset(row, col),
                                x + (ok ? (uint32_t)(base[p] + tap) : 0u), ok);
        }
    }
};

/* B rows (w): output channels n0.. of the group. */
template <typename T, int BN, int BK, class L, int THREADS> struct igemm_b_vector_loader {
    using S = igemm_chunk_split<T, BN, BK, THREADS>;

    int32_t col;
    int32_t base[S::PASSES]; /* co * ws0; -1: column past cout_g */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        col = S::col(tid);
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            const int32_t n = n0 + S::row(tid, p);
            base[p] = n < g.cout_g ? (group * g.cout_g + n) * g.ws[0] : -1;
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t c = it.c0 + col;
        const int32_t tap = it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4] + c;
        const bool c_ok = c < g.cin_g;
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            const int row = S::row(tid, p);
            if (S::idle(row)) break;
            const bool ok = c_ok && base[p] >= 0;
            /* w itself when out of range; unsigned, as igemm_a_vector_loader's */
            convnd_cp_async<16>(tile + L::offset(row, col),
                                w + (ok ? (uint32_t)(base[p] + tap) : 0u), ok);
        }
    }
};

/* ---- gather path -------------------------------------------------------------------------- */

/* A rows: thread tid owns row tid % BM (igemm_gather_split). The element loops of the gather
 * loaders (here, igemm_b_gather_loader, convT_b_gather_loader, igemm_a_io_gather_loader) are
 * written out in each: through one shared helper, ptxas gave the tensor-core gather loops about
 * ten more instructions per k-tile (sm_90). In the row loaders (not convT_b_gather_loader,
 * whose elements lie in one column of a k-major tile) a thread's elements lie in one tile row:
 * the row's part of the shared-memory offset is formed once and each element's with one add or
 * XOR (L::row_start, L::at); through L::offset, each element's swizzle cost about seven
 * instructions (sm_90, bench/README.md).
 *
 * The row's offset and validity at the current tap are kept between k-tiles and re-derived only
 * when a k-tile starts a new tap (it.c0 == 0): with C_in/g over BK, the k-tiles of one tap share
 * them. This needs load() called once per k-tile in k order, from it.start() on, as
 * igemm_block_tile does (the first k-tile has c0 == 0, and so has every tap's first). */
template <typename T, int BM, int BK, class L, int THREADS> struct igemm_a_gather_loader {
    using S = igemm_gather_split<BM, BK, THREADS>;

    int32_t base; /* n*xs0 + first channel of the group * xs1 */
    int32_t i[3]; /* o*S - P0 */
    int32_t off;  /* of the row at the current tap: x's offset of its channel 0 (0 if !in) */
    bool in;      /* the current tap lies inside x for the row */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        const int32_t m = m0 + S::line(tid);
        base = 0;
        i[0] = i[1] = i[2] = CONVND_IGEMM_ABSENT_ROW;
        if (m < g.M) {
            const igemm_row r = igemm_split_row(g, m);
            for (int t = 0; t < 3; ++t)
                i[t] = r.o[t] * g.S[t] - g.P0[t];
            base = r.n * g.xs[0] + group * g.cin_g * g.xs[1];
        }
        off = 0;
        in = false;
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) {
        if (it.c0 == 0) {
            const int32_t a = i[0] + it.t[0] * g.D[0];
            const int32_t b = i[1] + it.t[1] * g.D[1];
            const int32_t e = i[2] + it.t[2] * g.D[2];
            in = (uint32_t)a < (uint32_t)g.I[0] && (uint32_t)b < (uint32_t)g.I[1] &&
                 (uint32_t)e < (uint32_t)g.I[2];
            /* only formed in range: an absent row's coordinates would overflow */
            off = in ? base + a * g.xs[2] + b * g.xs[3] + e * g.xs[4] : 0;
        }
        const int start = L::row_start(S::line(tid)); /* of the row in the tile */
        CONVND_UNROLL(4)
        for (int j = 0; j < S::PER_THREAD; ++j) {
            const int kc = S::pos(tid, j);
            const int32_t c = it.c0 + kc;
            const bool ok = in && c < g.cin_g;
            igemm_copy_elem(tile + L::at(start, kc), ok ? x + (off + c * g.xs[1]) : x, ok);
        }
    }
};

/* B rows: thread tid owns output channel n0 + tid % BN. */
template <typename T, int BN, int BK, class L, int THREADS> struct igemm_b_gather_loader {
    using S = igemm_gather_split<BN, BK, THREADS>;

    int32_t base; /* co * ws0; -1: column past cout_g */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        const int32_t n = n0 + S::line(tid);
        base = n < g.cout_g ? (group * g.cout_g + n) * g.ws[0] : -1;
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t off = base + it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4];
        const int start = L::row_start(S::line(tid)); /* of the row in the tile */
        CONVND_UNROLL(4)
        for (int j = 0; j < S::PER_THREAD; ++j) {
            const int kc = S::pos(tid, j);
            const int32_t c = it.c0 + kc;
            const bool ok = base >= 0 && c < g.cin_g;
            igemm_copy_elem(tile + L::at(start, kc), ok ? w + (off + c * g.ws[1]) : w, ok);
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
