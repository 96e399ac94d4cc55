/* The math of one k-tile of the implicit GEMM, and the hand-off of the finished accumulators to
 * shared memory for the epilogue. Both policies read the stage tiles as the loaders wrote them:
 * A[row * LD + k] (output pixels) and B[col * LD + k] (output channels), k contiguous.
 *
 *  - igemm_tc_mma: tensor cores through WMMA (convnd_wmma). f16/bf16 use m16n16k16, f32 uses
 *    m16n16k8 TF32 (the caller allowed TF32); f32 accumulation either way. B is col_major in
 *    WMMA's terms because a w tile row holds one output channel's k values.
 *  - igemm_simt_mma: exact f32 FMA on CUDA cores, a TM x TN register tile per thread. Thread
 *    (tx, ty) owns rows ty + i*TY and columns tx + j*TX, so a warp reads few distinct A rows
 *    (broadcast) and its B reads are 16-byte loads whose 8-thread phases hit distinct banks
 *    with the 16-byte row padding.
 *
 * The accumulator layout of a WMMA fragment is opaque, so both policies store their tile to
 * shared memory, C[row * LDC + col], and one epilogue (igemm_kernel.cuh) reads it from there. */
#ifndef CONVND_IGEMM_MMA_CUH
#define CONVND_IGEMM_MMA_CUH

namespace CONVND_NS {

/* WMMA shapes and fragment types per element type. */
template <typename T> struct igemm_wmma_traits;

template <> struct igemm_wmma_traits<convnd_half> {
    static constexpr int KSTEP = 16;
    using a_frag = convnd_wmma::fragment<convnd_wmma::matrix_a, 16, 16, 16, convnd_half,
                                         convnd_wmma::row_major>;
    using b_frag = convnd_wmma::fragment<convnd_wmma::matrix_b, 16, 16, 16, convnd_half,
                                         convnd_wmma::col_major>;
    using c_frag = convnd_wmma::fragment<convnd_wmma::accumulator, 16, 16, 16, float>;
    template <typename F> __device__ __forceinline__ static void prepare(F &) {}
};

template <> struct igemm_wmma_traits<convnd_bf16> {
    static constexpr int KSTEP = 16;
    using a_frag = convnd_wmma::fragment<convnd_wmma::matrix_a, 16, 16, 16, convnd_bf16,
                                         convnd_wmma::row_major>;
    using b_frag = convnd_wmma::fragment<convnd_wmma::matrix_b, 16, 16, 16, convnd_bf16,
                                         convnd_wmma::col_major>;
    using c_frag = convnd_wmma::fragment<convnd_wmma::accumulator, 16, 16, 16, float>;
    template <typename F> __device__ __forceinline__ static void prepare(F &) {}
};

/* f32 data in shared memory, rounded to TF32 in the fragments (WMMA requires the rounding). */
template <> struct igemm_wmma_traits<float> {
    static constexpr int KSTEP = 8;
    using a_frag = convnd_wmma::fragment<convnd_wmma::matrix_a, 16, 16, 8,
                                         convnd_wmma::precision::tf32, convnd_wmma::row_major>;
    using b_frag = convnd_wmma::fragment<convnd_wmma::matrix_b, 16, 16, 8,
                                         convnd_wmma::precision::tf32, convnd_wmma::col_major>;
    using c_frag = convnd_wmma::fragment<convnd_wmma::accumulator, 16, 16, 8, float>;
    template <typename F> __device__ __forceinline__ static void prepare(F &f) {
        CONVND_UNROLL(8)
        for (int e = 0; e < f.num_elements; ++e)
            f.x[e] = convnd_wmma::convnd_float_to_tf32(f.x[e]);
    }
};

template <typename T, int BM, int BN, int BK, int LD, int WARPS_M, int WARPS_N>
struct igemm_tc_mma {
    using traits = igemm_wmma_traits<T>;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* warp tile */
    static constexpr int FM = WM / 16, FN = WN / 16;           /* 16x16 fragments per warp */
    static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % traits::KSTEP == 0, "tc tile shape");
    /* Blocks per SM to keep registers for: 128 registers a thread (two 256-thread blocks), but
     * one block for TF32 with 8+ fragments a warp, whose fragments need more (ptxas spills at
     * 128). */
    static constexpr int MIN_BLOCKS = sizeof(T) == 4 && FM * FN >= 8 ? 1 : 512 / THREADS;

    typename traits::c_frag acc[FM][FN];
    int wm0, wn0; /* warp tile origin */

    __device__ __forceinline__ void init(int tid) {
        const int warp = tid / 32;
        wm0 = (warp / WARPS_N) * WM;
        wn0 = (warp % WARPS_N) * WN;
        CONVND_UNROLL(8)
        for (int i = 0; i < FM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < FN; ++j)
            convnd_wmma::fill_fragment(acc[i][j], 0.0f);
    }

    __device__ __forceinline__ void compute(const T *a_tile, const T *b_tile) {
        CONVND_UNROLL(8)
        for (int k = 0; k < BK; k += traits::KSTEP) {
            /* all B fragments of the step, then one A fragment at a time: fewer live
             * registers than holding every A fragment too */
            typename traits::b_frag b[FN];
            CONVND_UNROLL(8)
            for (int j = 0; j < FN; ++j) {
                convnd_wmma::load_matrix_sync(b[j], b_tile + (wn0 + 16 * j) * LD + k, LD);
                traits::prepare(b[j]);
            }
            CONVND_UNROLL(8)
            for (int i = 0; i < FM; ++i) {
                typename traits::a_frag a;
                convnd_wmma::load_matrix_sync(a, a_tile + (wm0 + 16 * i) * LD + k, LD);
                traits::prepare(a);
                CONVND_UNROLL(8)
                for (int j = 0; j < FN; ++j)
                    convnd_wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
            }
        }
    }

    template <int LDC> __device__ __forceinline__ void store(float *c_tile) const {
        CONVND_UNROLL(8)
        for (int i = 0; i < FM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < FN; ++j)
            convnd_wmma::store_matrix_sync(c_tile + (wm0 + 16 * i) * LDC + wn0 + 16 * j, acc[i][j],
                                           LDC, convnd_wmma::mem_row_major);
    }
};

template <int BM, int BN, int BK, int LD, int TM, int TN> struct igemm_simt_mma {
    static constexpr int TX = BN / TN, TY = BM / TM;
    static constexpr int THREADS = TX * TY;
    static_assert(BM % TM == 0 && BN % TN == 0 && BK % 4 == 0 && LD % 4 == 0, "simt tile shape");
    /* 128 registers a thread, except 8x8 register tiles (64 accumulators, 32 A operands), which
     * spill below ~200: one block per SM for those. */
    static constexpr int MIN_BLOCKS = TM * TN >= 64 ? 1 : 512 / THREADS;

    float acc[TM][TN];
    int tx, ty;

    __device__ __forceinline__ void init(int tid) {
        tx = tid % TX;
        ty = tid / TX;
        CONVND_UNROLL(8)
        for (int i = 0; i < TM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    }

    /* Four k at a time: one 16-byte shared load per A row and per B column. */
    __device__ __forceinline__ void compute(const float *a_tile, const float *b_tile) {
        CONVND_UNROLL(8)
        for (int k = 0; k < BK; k += 4) {
            float4 a[TM];
            CONVND_UNROLL(8)
            for (int i = 0; i < TM; ++i)
                a[i] = *reinterpret_cast<const float4 *>(a_tile + (ty + i * TY) * LD + k);
            CONVND_UNROLL(8)
            for (int j = 0; j < TN; ++j) {
                const float4 b = *reinterpret_cast<const float4 *>(b_tile + (tx + j * TX) * LD + k);
                CONVND_UNROLL(8)
                for (int i = 0; i < TM; ++i) {
                    float s = acc[i][j];
                    s = fmaf(a[i].x, b.x, s);
                    s = fmaf(a[i].y, b.y, s);
                    s = fmaf(a[i].z, b.z, s);
                    s = fmaf(a[i].w, b.w, s);
                    acc[i][j] = s;
                }
            }
        }
    }

    template <int LDC> __device__ __forceinline__ void store(float *c_tile) const {
        CONVND_UNROLL(8)
        for (int i = 0; i < TM; ++i)
            CONVND_UNROLL(8)
        for (int j = 0; j < TN; ++j)
            c_tile[(ty + i * TY) * LDC + tx + j * TX] = acc[i][j];
    }
};

} // namespace CONVND_NS

#endif
