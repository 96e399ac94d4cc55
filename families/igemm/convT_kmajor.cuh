/* The weight's side of the transposed GEMM: a k-major B tile, element (k, n) at LB::offset(k, n)
 * (smem_tile.cuh: XOR-swizzled for the tensor cores, rows LDB apart for the CUDA cores).
 *
 * The transposed weight w[ci, co mod C_out/g, k...] never keeps a tile row's input channels
 * (the GEMM's k) contiguous, which the implicit GEMM's n-major tile (B[n * LD + k],
 * igemm_load.cuh) would want; channels-last [C_in][K...][C_out/g] keeps the output channels
 * (the GEMM's n) contiguous instead. So convT stores B k-major: a channels-last weight fills it
 * with whole 16-byte cp.async chunks of output channels, and the per-element gather (any
 * layout) writes consecutive output channels from consecutive threads, conflict-free. The math
 * reads B row-major: the implicit GEMM's own policies (igemm_mma.cuh, tc_warp_mma.cuh) with
 * only the B reads changed (same warp tiles, accumulators, and hand-off to the epilogue). */
#ifndef CONVND_CONVT_KMAJOR_CUH
#define CONVND_CONVT_KMAJOR_CUH

#include "convT_geometry.cuh"
#include "igemm_load.cuh"
#include "igemm_mma.cuh"

namespace CONVND_NS {

/* Row stride of a k-major B tile: BN elements plus 16 bytes (16-byte aligned rows for cp.async
 * and ldmatrix, consecutive rows 4 banks apart). */
template <typename T, int BN> struct convT_ldb {
    static constexpr int value = BN + 16 / (int)sizeof(T);
};

/* Vector path: B rows k (input channels of the k-tile), 16-byte chunks of output channels n0..
 * along the row. Needs ws[0] (next output channel) == 1, cout_g a multiple of the chunk (so a chunk
 * is all in range or all out), every other weight stride a multiple of the chunk and a 16-byte
 * aligned base (convT_pick_path). */
template <typename T, int BN, int BK, class LB, int THREADS> struct convT_b_vector_loader {
    using S = igemm_chunk_split<T, BK, BN, THREADS>; /* rows k, chunks of output channels */

    /* the phase's first tap + the group's first input channel + the chunk's first output
     * channel; -1: past cout_g. The chunk's column in the tile, S::col(tid), is recomputed per
     * load: one register fewer through the main loop. */
    int32_t base;

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        const int32_t n = n0 + S::col(tid);
        /* n * ws[0] with ws[0] == 1 */
        base = n < g.cout_g ? convT_of(g).w_base + n + group * g.cin_g * g.ws[1] : -1;
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t tap = it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4];
        const int col = S::col(tid);
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            const int k = S::row(tid, p);
            if (S::idle(k)) break;
            const int32_t c = it.c0 + k;
            const bool ok = base >= 0 && c < g.cin_g;
            convnd_cp_async<16>(tile + LB::offset(k, col), ok ? w + (base + tap + c * g.ws[1]) : w,
                                ok);
        }
    }
};

/* Gather path, any weight layout: thread tid owns output channel n0 + tid % BN and rows
 * tid / BN + j * (THREADS / BN) (igemm_gather_split over the output channels), one element
 * each (igemm_copy_elem). Consecutive threads write consecutive words of a row, and read
 * neighbours in a channels-last weight. */
template <typename T, int BN, int BK, class LB, int THREADS> struct convT_b_gather_loader {
    using S = igemm_gather_split<BN, BK, THREADS>;

    /* the phase's first tap + the group's first input channel + the output channel; -1: past
     * cout_g */
    int32_t base;

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        const int32_t n = n0 + S::line(tid);
        base = n < g.cout_g ? convT_of(g).w_base + n * g.ws[0] + group * g.cin_g * g.ws[1] : -1;
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ w, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t off = base + it.t[0] * g.ws[2] + it.t[1] * g.ws[3] + it.t[2] * g.ws[4];
        const int n = S::line(tid);
        CONVND_UNROLL(4)
        for (int j = 0; j < S::PER_THREAD; ++j) {
            const int k = S::pos(tid, j);
            const int32_t c = it.c0 + k;
            const bool ok = base >= 0 && c < g.cin_g;
            igemm_copy_elem(tile + LB::offset(k, n), ok ? w + (off + c * g.ws[1]) : w, ok);
        }
    }
};

/* igemm_tc_mma's math reading a k-major B tile (ldmatrix.trans, tc_warp_mma.cuh), both stage
 * tiles XOR-swizzled for 16-bit elements (tc_stage_tile, smem_tile.cuh). */
template <typename T, int BM, int BN, int BK, int WARPS_M, int WARPS_N>
struct convT_tc_mma_kmajor : tc_warp_mma_on<T, BM, BN, BK, WARPS_M, WARPS_N, true,
                                            tc_stage_tile<T, BM, BK>, tc_stage_tile<T, BK, BN>> {
    using core = tc_warp_mma_on<T, BM, BN, BK, WARPS_M, WARPS_N, true, tc_stage_tile<T, BM, BK>,
                                tc_stage_tile<T, BK, BN>>;
    /* 16-bit 64-thread blocks (the 32x64 tile): under the core's 128-register budget ptxas keeps
     * the per-phase geometry in 114 registers (8 blocks, 16 warps a SM); held to 113 it needs
     * 94 for 3 more loop instructions (10 blocks, 20 warps; tools/static_check.py, sm_90).
     * The forward kernels keep the core's budget: theirs grows 145 -> 171 instructions. */
    static constexpr int MIN_BLOCKS = !core::TF32 && core::THREADS == 64 ? 9 : core::MIN_BLOCKS;
};

/* igemm_simt_mma reading a k-major B tile: four k at a time as there, B one element per k (a
 * warp reads consecutive columns, conflict-free), the same FMA order. */
template <int BM, int BN, int BK, int LD, int LDB, int TM, int TN>
struct convT_simt_mma_kmajor : igemm_simt_mma<BM, BN, BK, LD, TM, TN> {
    using base = igemm_simt_mma<BM, BN, BK, LD, TM, TN>;
    using B_TILE = smem_padded_tile<float, BK, BN, LDB - BN>;

    __device__ __forceinline__ void compute(const float *a_tile, const float *b_tile) {
        CONVND_UNROLL(8)
        for (int k = 0; k < BK; k += 4) {
            float4 a[TM];
            CONVND_UNROLL(8)
            for (int i = 0; i < TM; ++i)
                a[i] = convnd_ld_vec(
                    reinterpret_cast<const float4 *>(a_tile + (this->ty + i * base::TY) * LD + k));
            CONVND_UNROLL(8)
            for (int j = 0; j < TN; ++j) {
                const float *b = b_tile + k * LDB + this->tx + j * base::TX;
                const float b0 = b[0], b1 = b[LDB], b2 = b[2 * LDB], b3 = b[3 * LDB];
                CONVND_UNROLL(8)
                for (int i = 0; i < TM; ++i) {
                    float s = this->acc[i][j];
                    s = fmaf(a[i].x, b0, s);
                    s = fmaf(a[i].y, b1, s);
                    s = fmaf(a[i].z, b2, s);
                    s = fmaf(a[i].w, b3, s);
                    this->acc[i][j] = s;
                }
            }
        }
    }
};

} // namespace CONVND_NS

#endif
