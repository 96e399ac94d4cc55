/* The tensor-core math of one k-tile, shared by the implicit GEMM (igemm_tc_mma, B n-major) and
 * the transposed kernels (convT_tc_mma_kmajor, B k-major): mma.sync on fragments that ldmatrix
 * reads from the stage tiles (mma_sync.cuh), f32 accumulators in registers in the PTX ISA's C
 * layout.
 *
 * Stage tiles as the loaders write them, through their layouts (smem_tile.cuh): A (output
 * pixels x k) element (row, k) at LA::offset(row, k), or k-major LA::offset(k, row) (A_KMAJOR,
 * 16-bit: ldmatrix.trans; the weight gradient's channels-last dy, families/wgrad/wgrad_vec.cuh); B
 * n-major LB::offset(n, k) or k-major LB::offset(k, n). Each warp owns a WM x WN tile: FM x FN mma
 * tiles of 16 x 8. f16/bf16: m16n8k16, A through ldmatrix.x4, two n8 tiles of B per ldmatrix.x4
 * (.trans when B is k-major). f32: m16n8k8 on TF32 (the caller allowed it), fragments rounded with
 * cvt.rna after the read; A and n-major B through ldmatrix.x4 as well (a 16-byte row is 4 whole
 * 32-bit elements, and lane 4*row + w receives element w: the m16n8k8 layout), k-major B element by
 * element (.trans moves 16-bit elements). The XOR-swizzled layouts of 16-bit tiles (and padded rows
 * with LD*size = 16 mod 128 bytes) put the 8 rows of an ldmatrix phase in 8 distinct 16-byte bank
 * groups: no conflicts (tc_stage_tile below says which tile is which).
 *
 * tc_warp_mma_on<..., LA, LB> is the core; tc_warp_mma<..., LD, ..., LDB> the same on padded
 * rows (LD, LDB elements apart), the interface other kernels build on. */
#ifndef CONVND_TC_WARP_MMA_CUH
#define CONVND_TC_WARP_MMA_CUH

#include "mma_sync.cuh"
#include "smem_tile.cuh"

namespace CONVND_NS {

template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N, bool B_KMAJOR, class LA,
          class LB, bool A_KMAJOR = false>
struct tc_warp_mma_on {
    using A_TILE = LA;
    using B_TILE = LB;
    static constexpr bool TF32 = sizeof(T) == 4;
    static constexpr int KSTEP = TF32 ? 8 : 16;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    static constexpr int FM = WM / 16, FN = WN / 8;            /* 16x8 mma tiles per warp */
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % KSTEP == 0 && FM <= 8 && FN <= 8,
                  "tc tile shape (the loops below unroll at most 8)");
    static_assert(
        (A_KMAJOR ? LA::ROWS == BK && LA::COLS == BM : LA::ROWS == BM && LA::COLS == BK) &&
            (B_KMAJOR ? LB::ROWS == BK && LB::COLS == BN : LB::ROWS == BN && LB::COLS == BK),
        "stage tile layouts do not match the block tile");
    static_assert(!(A_KMAJOR && TF32), "a k-major A is read by ldmatrix.trans: 16-bit only");
    /* Blocks per SM to keep registers for: 128 registers a thread, 240 for 64x64 warp tiles
     * (128 accumulators), 255 for TF32 with 64+ accumulators. */
    static constexpr int REGS = FM * FN >= 32 ? 240 : TF32 && FM * FN >= 16 ? 255 : 128;
    static constexpr int MIN_BLOCKS = 65536 / (THREADS * REGS) > 0 ? 65536 / (THREADS * REGS) : 1;

    float acc[FM][FN][4];
    int wm0, wn0; /* warp tile origin */
    int lane;

    __device__ __forceinline__ void init(int tid) {
        const int warp = tid / 32;
        lane = tid % 32;
        wm0 = (warp / WARPS_N) * WM;
        wn0 = (warp % WARPS_N) * WN;
        /* fully unrolled: a runtime index would put acc in local memory */
        CONVND_UNROLL(8)
        for (int i = 0; i < FM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < FN; ++j)
            CONVND_UNROLL(4)
        for (int r = 0; r < 4; ++r)
            acc[i][j][r] = 0.0f;
    }

    /* 16-byte rows of ldmatrix: 8 elements of 16 bits, or 4 of TF32 (each a pair of b16, so a
     * lane receives whole 32-bit elements: the m16n8k8 fragments' layout, untransposed). */
    static constexpr int QUAD = 16 / (int)sizeof(T);

    /* Element offset of the A row this lane hands ldmatrix.x4 for mma tile row i at k: matrices
     * (rows 0-7 | 8-15) x (k 0.. | k QUAD..), lane l gives row l%16, half l/16. */
    __device__ __forceinline__ int a_ldsm_offset(int k, int i) const {
        if constexpr (A_KMAJOR) /* .trans: matrix q = lane/8 is (m half q%2, k half q/2), its
                                   stored rows are k: the fragment as above, transposed */
            return LA::offset(k + lane % 8 + (lane / 16) * 8, wm0 + 16 * i + ((lane / 8) % 2) * 8);
        else
            return LA::offset(wm0 + 16 * i + lane % 16, k + (lane / 16) * QUAD);
    }

    /* Element offset of the B row this lane hands ldmatrix.x4 for mma tile columns j, j+1 at k:
     * k-major (.trans, 16-bit only): matrices (k 0-7 | 8-15) x (n 0-7 | 8-15); n-major: (n 0-7,
     * k 0..), (n 0-7, k QUAD..), (n 8-15, k 0..), (n 8-15, k QUAD..). */
    __device__ __forceinline__ int b_ldsm_offset(int k, int j) const {
        if constexpr (B_KMAJOR)
            return LB::offset(k + lane % 16, wn0 + 8 * j + (lane / 16) * 8);
        else
            return LB::offset(wn0 + 8 * j + (lane / 16) * 8 + lane % 8,
                              k + ((lane / 8) % 2) * QUAD);
    }

    /* A fragment of mma tile row i at k: a[r] = A[16i + g + 8(r&1)][k + ...] (mma_sync.cuh);
     * TF32 rounded with cvt.rna after the read. */
    __device__ __forceinline__ void load_a(uint32_t (&a)[4], const T *a_tile, int k, int i) const {
        convnd_ldmatrix_at<4, A_KMAJOR>(a, a_tile, (int)sizeof(T) * a_ldsm_offset(k, i));
        if constexpr (TF32) {
            CONVND_UNROLL(4)
            for (int r = 0; r < 4; ++r)
                a[r] = tf32_round_bits(a[r]);
        }
    }

    /* B fragments of mma tile columns j (b[0..1]) and j+1 (b[2..3]). TF32 k-major B is read
     * element by element (ldmatrix's .trans moves 16-bit elements). */
    __device__ __forceinline__ void load_b(uint32_t (&b)[4], const T *b_tile, int k, int j) const {
        if constexpr (TF32 && B_KMAJOR) {
            const int g = lane / 4, t = lane % 4;
            const float *p = reinterpret_cast<const float *>(b_tile);
            CONVND_UNROLL(2)
            for (int h = 0; h < 2; ++h) {
                const int n = wn0 + 8 * (j + h) + g;
                b[2 * h] = tf32_bits(p[LB::offset(k + t, n)]);
                b[2 * h + 1] = tf32_bits(p[LB::offset(k + t + 4, n)]);
            }
        } else {
            convnd_ldmatrix_at<4, B_KMAJOR>(b, b_tile, (int)sizeof(T) * b_ldsm_offset(k, j));
            if constexpr (TF32) {
                CONVND_UNROLL(4)
                for (int r = 0; r < 4; ++r)
                    b[r] = tf32_round_bits(b[r]);
            }
        }
    }

    __device__ __forceinline__ void mma(int i, int j, const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
        const uint32_t b[2] = {b0, b1};
        if constexpr (TF32)
            convnd_mma_m16n8k8_tf32(acc[i][j], a, b, acc[i][j]);
        else
            convnd_mma_m16n8k16<T>(acc[i][j], a, b, acc[i][j]);
    }

    __device__ __forceinline__ void compute(const T *a_tile, const T *b_tile) {
        CONVND_UNROLL(8)
        for (int k = 0; k < BK; k += KSTEP) {
            uint32_t a[FM][4];
            CONVND_UNROLL(8)
            for (int i = 0; i < FM; ++i)
                load_a(a[i], a_tile, k, i);
            CONVND_UNROLL(8)
            for (int j = 0; j < FN; j += 2) {
                uint32_t b[4];
                load_b(b, b_tile, k, j);
                CONVND_UNROLL(8)
                for (int i = 0; i < FM; ++i) {
                    mma(i, j, a[i], b[0], b[1]);
                    mma(i, j + 1, a[i], b[2], b[3]);
                }
            }
        }
    }

    static constexpr bool C_TILE = false; /* the epilogue runs on the registers (each) */

    /* f(row, col, value) for every accumulator of this thread, at its block-tile coordinates
     * per the ISA's C layout: acc[i][j][r] is C[16i + g + 8(r>>1)][8j + 2t + (r&1)]. */
    template <class F> __device__ __forceinline__ void each(F f) const {
        const int g = lane / 4, t = lane % 4;
        CONVND_UNROLL(8)
        for (int i = 0; i < FM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < FN; ++j)
            CONVND_UNROLL(4)
        for (int r = 0; r < 4; ++r)
            f(wm0 + 16 * i + g + 8 * (r >> 1), wn0 + 8 * j + 2 * t + (r & 1), acc[i][j][r]);
    }

    /* f(row, col, v[8]) with v[e] = C[row][col + e]: the accumulators transposed so that each
     * lane holds 8 consecutive columns of one row (16 bytes of 16-bit output: one vector store
     * where y's channels are innermost). Per mma tile row i and pair of n8 tiles (j, j+1), the
     * quad of lanes g (t = 0..3) holds rows g, g+8 x 16 columns; lane t takes row g + 8(t>>1),
     * columns 8(j + (t&1)) .. +7, and gets C[row][.. + 2s, + 2s+1] from quad lane s. Lane t's
     * pair for lane d, P[d] = acc[i][j + (d&1)][2(d>>1) .. +1], goes over in three xor rounds
     * (m = 1, 2, 3: P[t^m] to lane t^m; m = 0 is its own). Every lane of the warp must call it
     * (warp shuffles). */
    template <class F> __device__ __forceinline__ void each_octet(F f) const {
        const int g = lane / 4, t = lane % 4;
        CONVND_UNROLL_GPU(8)
        for (int i = 0; i < FM; ++i)
            CONVND_UNROLL_GPU(4)
        for (int j = 0; j < FN; j += 2) {
            float px[4], py[4]; /* P[d] = (px[d], py[d]) */
            CONVND_UNROLL_GPU(4)
            for (int d = 0; d < 4; ++d) {
                px[d] = acc[i][j + (d & 1)][2 * (d >> 1)];
                py[d] = acc[i][j + (d & 1)][2 * (d >> 1) + 1];
            }
            float rx[4], ry[4]; /* R[m]: the pair from quad lane t^m */
            rx[0] = pick4(px, t);
            ry[0] = pick4(py, t);
            CONVND_UNROLL_GPU(4)
            for (int m = 1; m < 4; ++m) {
                rx[m] = __shfl_xor_sync(0xffffffffu, pick4(px, t ^ m), m);
                ry[m] = __shfl_xor_sync(0xffffffffu, pick4(py, t ^ m), m);
            }
            float v[8];
            CONVND_UNROLL_GPU(4)
            for (int s = 0; s < 4; ++s) {
                v[2 * s] = pick4(rx, s ^ t);
                v[2 * s + 1] = pick4(ry, s ^ t);
            }
            f(wm0 + 16 * i + g + 8 * (t >> 1), wn0 + 8 * (j + (t & 1)), v);
        }
    }

  private:
    /* a[k] for a run-time k in 0..3, through selects (a run-time array index would put a in
     * local memory) */
    __device__ __forceinline__ static float pick4(const float (&a)[4], int k) {
        return k == 0 ? a[0] : k == 1 ? a[1] : k == 2 ? a[2] : a[3];
    }

    __device__ __forceinline__ static uint32_t tf32_bits(float f) {
        const float r = ::convnd_float_to_tf32(f);
        uint32_t u;
        memcpy(&u, &r, 4);
        return u;
    }
    __device__ __forceinline__ static uint32_t tf32_round_bits(uint32_t u) {
        float f;
        memcpy(&f, &u, 4);
        return tf32_bits(f);
    }
};

/* The stage tiles the tensor cores read: XOR-swizzled for 16-bit elements (ldmatrix); TF32 stays
 * on padded rows (rows of a multiple of 128 bytes + 16: an ldmatrix phase's 8 rows, the k-major
 * B element reads' 8 rows x 4 words and the 16-byte cp.async phases are conflict-free there, and
 * the element reads' addresses are a constant offset per fragment, where a swizzle would cost an
 * XOR per k and register pressure). */
template <typename T, int ROWS, int COLS>
using tc_stage_tile =
    typename std::conditional<sizeof(T) == 4, smem_padded_tile<T, ROWS, COLS, 16 / (int)sizeof(T)>,
                              smem_swizzled_tile<T, ROWS, COLS>>::type;

/* The core on padded rows: A and n-major B rows LD elements apart, k-major B rows LDB apart. */
template <typename T, int BM, int BN, int BK, int LD, int WARPS_M, int WARPS_N, bool B_KMAJOR,
          int LDB>
struct tc_warp_mma
    : tc_warp_mma_on<T, BM, BN, BK, WARPS_M, WARPS_N, B_KMAJOR,
                     smem_padded_tile<T, BM, BK, LD - BK>,
                     typename std::conditional<B_KMAJOR, smem_padded_tile<T, BK, BN, LDB - BN>,
                                               smem_padded_tile<T, BN, BK, LD - BK>>::type> {};

} // namespace CONVND_NS

#endif
