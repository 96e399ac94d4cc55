/* The math of one k-tile of the implicit GEMM, and the hand-off of the finished accumulators to
 * shared memory for the epilogue. Both policies read the stage tiles as the loaders wrote them,
 * through the layouts they declare (A_TILE: output pixels x k, B_TILE: output channels x k, k
 * contiguous; smem_tile.cuh): XOR-swizzled for the tensor cores, padded rows
 * (A[row * LD + k], B[col * LD + k]) for the CUDA cores.
 *
 *  - igemm_tc_mma: tensor cores through mma.sync and ldmatrix (tc_warp_mma.cuh). f16/bf16 use
 *    m16n8k16, f32 uses m16n8k8 TF32 (the caller allowed TF32); f32 accumulation either way.
 *  - igemm_simt_mma: exact f32 FMA on CUDA cores, a TM x TN register tile per thread. Thread
 *    (tx, ty) owns rows ty + i*TY and columns tx + j*TX, so a warp reads few distinct A rows
 *    (broadcast) and its B reads are 16-byte loads whose 8-thread phases hit distinct banks
 *    with the 16-byte row padding.
 *
 * The tensor-core policy hands each accumulator with its tile coordinates to the epilogue in
 * registers (each); the SIMT one stores its tile to shared memory, C[row * LDC + col], for the
 * epilogue to read from there (igemm_kernel.cuh). */
#ifndef CONVND_IGEMM_MMA_CUH
#define CONVND_IGEMM_MMA_CUH

#include "tc_warp_mma.cuh"

namespace CONVND_NS {

/* Tensor cores: mma.sync fed by ldmatrix (tc_warp_mma.cuh), B n-major, both stage tiles
 * XOR-swizzled for 16-bit elements (tc_stage_tile, smem_tile.cuh). A struct rather than an alias so
 * that kernel names say which GEMM they belong to (tools/static_check.py, tools/sass_model.py).
 */
template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N>
struct igemm_tc_mma : tc_warp_mma_on<T, BM, BN, BK, WARPS_M, WARPS_N, false,
                                     tc_stage_tile<T, BM, BK>, tc_stage_tile<T, BN, BK>> {};

template <int BM, int BN, int BK, int LD, int TM, int TN> struct igemm_simt_mma {
    static constexpr int TX = BN / TN, TY = BM / TM;
    static constexpr int THREADS = TX * TY;
    static_assert(BM % TM == 0 && BN % TN == 0 && BK % 4 == 0 && LD % 4 == 0, "simt tile shape");
    /* 128 registers a thread, except 8x8 register tiles (64 accumulators, 32 A operands), which
     * spill below ~200: one block per SM for those. */
    static constexpr int MIN_BLOCKS = TM * TN >= 64 ? 1 : 512 / THREADS;
    static constexpr bool C_TILE = true; /* hands over through shared memory (store) */
    /* padded rows: the float4 reads of a row stay 16-byte aligned */
    using A_TILE = smem_padded_tile<float, BM, BK, LD - BK>;
    using B_TILE = smem_padded_tile<float, BN, BK, LD - BK>;

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
                a[i] = convnd_ld_vec(
                    reinterpret_cast<const float4 *>(a_tile + (ty + i * TY) * LD + k));
            CONVND_UNROLL(8)
            for (int j = 0; j < TN; ++j) {
                const float4 b = convnd_ld_vec(
                    reinterpret_cast<const float4 *>(b_tile + (tx + j * TX) * LD + k));
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
