/* The tensor-core math of one k-tile, shared by the implicit GEMM (igemm_tc_mma, B n-major) and
 * the transposed kernels (convT_tc_mma_kmajor, B k-major): mma.sync on fragments that ldmatrix
 * reads from the stage tiles (mma_sync.cuh), f32 accumulators in registers in the PTX ISA's C
 * layout.
 *
 * Stage tiles as the loaders write them: A[row * LD + k] (output pixels x k), B n-major
 * B[n * LD + k] or k-major B[k * LDB + n]. Each warp owns a WM x WN tile: FM x FN mma tiles of
 * 16 x 8. f16/bf16: m16n8k16, A through ldmatrix.x4, two n8 tiles of B per ldmatrix.x4 (.trans
 * when B is k-major). f32: m16n8k8 on TF32 (the caller allowed it), fragments read element by
 * element (ldmatrix moves 16-bit elements) and rounded with cvt.rna. Rows LD (LDB) elements apart
 * with LD*size = 16 mod 128 bytes put the 8 rows of an ldmatrix phase in 8 distinct 16-byte bank
 * groups: no conflicts. */
#ifndef CONVND_TC_WARP_MMA_CUH
#define CONVND_TC_WARP_MMA_CUH

#include "mma_sync.cuh"

namespace CONVND_NS {

template <typename T, int BM, int BN, int BK, int LD, int WARPS_M, int WARPS_N, bool B_KMAJOR,
          int LDB>
struct tc_warp_mma {
    static constexpr bool TF32 = sizeof(T) == 4;
    static constexpr int KSTEP = TF32 ? 8 : 16;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    static constexpr int FM = WM / 16, FN = WN / 8;            /* 16x8 mma tiles per warp */
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % KSTEP == 0, "tc tile shape");
    static_assert((LD * sizeof(T)) % 16 == 0 && (!B_KMAJOR || (LDB * sizeof(T)) % 16 == 0),
                  "ldmatrix rows must be 16-byte aligned");
    /* Blocks per SM to keep registers for: 128 registers a thread (two 256-thread blocks), but
     * one block for TF32 with 64+ accumulators a thread. */
    static constexpr int MIN_BLOCKS = TF32 && FM * FN >= 16 ? 1 : 512 / THREADS;

    float acc[FM][FN][4];
    int wm0, wn0; /* warp tile origin */
    int lane;

    __device__ __forceinline__ void init(int tid) {
        const int warp = tid / 32;
        lane = tid % 32;
        wm0 = (warp / WARPS_N) * WM;
        wn0 = (warp % WARPS_N) * WN;
        float *const flat = &acc[0][0][0];
        CONVND_UNROLL(64)
        for (int e = 0; e < FM * FN * 4; ++e)
            flat[e] = 0.0f;
    }

    /* A fragment of mma tile row i at k: a[r] = A[16i + g + 8(r&1)][k + ...] (mma_sync.cuh). */
    __device__ __forceinline__ void load_a(uint32_t (&a)[4], const T *a_tile, int k, int i) const {
        if constexpr (TF32) {
            const int g = lane / 4, t = lane % 4;
            const float *p =
                reinterpret_cast<const float *>(a_tile) + (wm0 + 16 * i + g) * LD + k + t;
            a[0] = tf32_bits(p[0]);
            a[1] = tf32_bits(p[8 * LD]);
            a[2] = tf32_bits(p[4]);
            a[3] = tf32_bits(p[8 * LD + 4]);
        } else {
            /* matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15): lane l gives row l%16, half l/16 */
            convnd_ldmatrix<4, false>(a, a_tile + (wm0 + 16 * i + lane % 16) * LD + k +
                                             (lane / 16) * 8);
        }
    }

    /* B fragments of mma tile columns j and j+1 (16-bit), or j alone (TF32, b[0..1]). */
    __device__ __forceinline__ void load_b(uint32_t (&b)[4], const T *b_tile, int k, int j) const {
        if constexpr (TF32) {
            const int g = lane / 4, t = lane % 4;
            const float *p = reinterpret_cast<const float *>(b_tile);
            const int n = wn0 + 8 * j + g;
            b[0] = tf32_bits(B_KMAJOR ? p[(k + t) * LDB + n] : p[n * LD + k + t]);
            b[1] = tf32_bits(B_KMAJOR ? p[(k + t + 4) * LDB + n] : p[n * LD + k + t + 4]);
        } else if constexpr (B_KMAJOR) {
            /* matrices (k 0-7 | 8-15) x (n 0-7 | 8-15), transposed into "col" fragments */
            convnd_ldmatrix<4, true>(b, b_tile + (k + lane % 16) * LDB + wn0 + 8 * j +
                                            (lane / 16) * 8);
        } else {
            /* matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) */
            convnd_ldmatrix<4, false>(b, b_tile + (wn0 + 8 * j + (lane / 16) * 8 + lane % 8) * LD +
                                             k + ((lane / 8) % 2) * 8);
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
            for (int j = 0; j < FN; j += TF32 ? 1 : 2) {
                uint32_t b[4];
                load_b(b, b_tile, k, j);
                CONVND_UNROLL(8)
                for (int i = 0; i < FM; ++i) {
                    mma(i, j, a[i], b[0], b[1]);
                    if constexpr (!TF32) mma(i, j + 1, a[i], b[2], b[3]);
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

  private:
    __device__ __forceinline__ static uint32_t tf32_bits(float f) {
        const float r = ::convnd_float_to_tf32(f);
        uint32_t u;
        memcpy(&u, &r, 4);
        return u;
    }
};

} // namespace CONVND_NS

#endif
