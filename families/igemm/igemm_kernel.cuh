/* The implicit-GEMM kernel template (forward mode) and its host-side launch.
 *
 * One block computes a BM x BN tile of one group's GEMM (igemm_geometry.cuh): BM output pixels
 * times BN output channels. The k-tiles (one tap, BK channels) flow through a STAGES-deep ring
 * of shared-memory buffers filled by cp.async (igemm_load.cuh) while the math (igemm_mma.cuh)
 * works STAGES-1 tiles behind. The fused epilogue (conv_index.cuh) then applies to each
 * accumulator where it is: in registers for the tensor cores (Mma::C_TILE false; tc_epilogue.cuh:
 * the activation a template parameter, 16-byte stores of channels-last y), else through an f32
 * C tile in shared memory, one store per output in y's memory order.
 *
 * Shared memory (dynamic): [ A stages | B stages ] (reused after the main loop as the f32 C tile
 * when there is one), then the BM row offsets of y, which live through the whole kernel. */
#ifndef CONVND_IGEMM_KERNEL_CUH
#define CONVND_IGEMM_KERNEL_CUH

#include <stdint.h>
#include <type_traits>
#include "conv_index.cuh"
#include "igemm_geometry.cuh"
#include "igemm_load.cuh"
#include "igemm_mma.cuh"
#include "tc_epilogue.cuh"
#include "planted_bugs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

/* Row stride of a padded stage tile (the CUDA-core policies; the tensor cores' tiles are
 * XOR-swizzled instead, smem_tile.cuh): BK elements plus 16 bytes, which keeps every row 16-byte
 * aligned (cp.async, ldmatrix) and shifts consecutive rows by 4 banks (conflict-free 16-byte
 * accesses). */
template <typename T, int BK> struct igemm_ld {
    static constexpr int value = BK + 16 / (int)sizeof(T);
};

/* Stage tiles in the math policy's layouts (Mma::A_TILE, Mma::B_TILE; smem_tile.cuh).
 * Mma::C_TILE: the policy hands its accumulators over through an f32 C tile (igemm_simt_mma);
 * without it (the tensor cores' register epilogue) shared memory is the pipeline alone. */
template <typename T, class Mma, int BM, int BN, int STAGES> struct igemm_smem_layout {
    static constexpr bool C_TILE = Mma::C_TILE;
    static constexpr int LDC = BN + 4; /* f32 C tile: rows stay 16-byte aligned */
    static constexpr size_t A_STAGE = (size_t)Mma::A_TILE::ELEMS; /* elements */
    static constexpr size_t B_STAGE = (size_t)Mma::B_TILE::ELEMS;
    static constexpr size_t PIPE_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(T);
    static constexpr size_t C_BYTES = C_TILE ? (size_t)BM * LDC * sizeof(float) : 0;
    static constexpr size_t MAIN_BYTES =
        ((PIPE_BYTES > C_BYTES ? PIPE_BYTES : C_BYTES) + 127) / 128 * 128;
    static constexpr size_t BYTES = MAIN_BYTES + BM * sizeof(int32_t);
};

/* One block's BM x BN tile (rows m0.., columns n0.. of group `group`'s GEMM): the whole kernel
 * but the choice of tile and geometry, so that the phase-decomposed transposed convolution
 * (families/igemm/convT_kernel.cuh) runs this same code on a per-block geometry with its own B
 * loader. Loaders: a class with member types A and B (igemm_loaders). z may be y (in place), so
 * neither carries __restrict__. y_base: added to every row's y (and z) offset (a transposed phase's
 * first output), so that y and z stay the kernel's parameters rather than registers. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES, class Loaders,
          class Io = igemm_no_io>
__device__ __forceinline__ void
igemm_block_tile(const convnd_conv_params &p, const igemm_geometry &g, int32_t m0, int32_t n0,
                 int32_t group, const T *__restrict__ x, const T *__restrict__ w,
                 const T *__restrict__ bias, const T *z, T *y, int32_t y_base = 0,
                 const Io &io = Io()) {
    using layout = igemm_smem_layout<T, Mma, BM, BN, STAGES>;
    using loaders = Loaders;
    constexpr int THREADS = Mma::THREADS;
    static_assert(STAGES >= 2, "the pipeline needs at least two stages");

    CONVND_DYNAMIC_SHARED(float4, smem);
    char *const arena = reinterpret_cast<char *>(smem);
    T *const a_tiles = reinterpret_cast<T *>(arena);
    T *const b_tiles = a_tiles + STAGES * layout::A_STAGE;
    float *const c_tile = reinterpret_cast<float *>(arena);
    int32_t *const y_rows = reinterpret_cast<int32_t *>(arena + layout::MAIN_BYTES);

    const int tid = (int)threadIdx.x;

    /* y offset of each tile row without the channel term; -1 past M. Read after the barriers
     * of the main loop. */
    for (int r = tid; r < BM; r += THREADS) {
        int32_t off = -1;
        if (m0 + r < g.M) {
            const igemm_row row = igemm_split_row(g, m0 + r);
            off = y_base + row.n * g.ys[0] + row.o[0] * g.ys[2] + row.o[1] * g.ys[3] +
                  row.o[2] * g.ys[4];
        }
        y_rows[r] = off;
    }

    typename loaders::A load_a;
    typename loaders::B load_b;
    if constexpr (!std::is_same<Io, igemm_no_io>::value) load_a.init_io(io); /* the prefix */
    load_a.init(g, m0, group, tid);
    load_b.init(g, n0, group, tid);
    Mma mma;
    mma.init(tid);
    igemm_k_iter it;
    it.start();

    /* Prologue: the first STAGES-1 tiles in flight. Every stage commits a group, empty or not,
     * so that "tile kt has landed" is always "at most STAGES-2 groups pending". */
    CONVND_UNROLL(8)
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < g.ktiles) {
            load_a.load(a_tiles + s * layout::A_STAGE, x, g, it, tid);
            load_b.load(b_tiles + s * layout::B_STAGE, w, g, it, tid);
            it.advance(g, BK);
        }
        convnd_cp_async_commit();
    }

    /* Stage of tile kt (read) and of tile kt + STAGES - 1 (written), stepped without divides. */
    int read_stage = 0, write_stage = STAGES - 1;
    for (int32_t kt = 0; kt < g.ktiles; ++kt) {
        convnd_cp_async_wait<STAGES - 2>();
        /* Tile kt is visible to all, and everyone is done with tile kt-1, whose buffer the
         * prefetch below refills. */
        if (CONVND_PLANTED_BUG != CONVND_PLANT_PREFETCH_ABOVE_BARRIER) __syncthreads();
        if (kt + STAGES - 1 < g.ktiles) {
            load_a.load(a_tiles + write_stage * layout::A_STAGE, x, g, it, tid);
            load_b.load(b_tiles + write_stage * layout::B_STAGE, w, g, it, tid);
            it.advance(g, BK);
        }
        convnd_cp_async_commit();
        if (CONVND_PLANTED_BUG == CONVND_PLANT_PREFETCH_ABOVE_BARRIER) __syncthreads();
        mma.compute(a_tiles + read_stage * layout::A_STAGE, b_tiles + read_stage * layout::B_STAGE);
        read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
        write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;
    }

    const int32_t co0 = group * g.cout_g;
    if constexpr (!Mma::C_TILE) {
        /* Register epilogue (tc_epilogue.cuh): the accumulators go to y from the registers, 16
         * bytes at a time where y's channels are innermost. */
        convnd_cp_async_wait<0>(); /* only empty groups can be pending: nothing left to land */
        __syncthreads();           /* y_rows, even when there was no k-tile (no loop barrier) */
        tc_epilogue<T>(mma, p, g, y_rows, n0, co0, bias, z, y);
    } else {
        /* The C tile reuses the stage buffers: all copies landed and all math done first. */
        convnd_cp_async_wait<0>();
        if (CONVND_PLANTED_BUG != CONVND_PLANT_NO_BARRIER_BEFORE_C_STORE) __syncthreads();
        mma.template store<layout::LDC>(c_tile);
        __syncthreads();

        /* Epilogue in y's memory order: channels innermost when y is channels-last, pixels
         * otherwise, so consecutive threads store to neighbouring addresses. */
        for (int idx = tid; idx < BM * BN; idx += THREADS) {
            const int r = p.y_cl ? idx / BN : idx % BM;
            const int c = p.y_cl ? idx % BN : idx / BM;
            const int32_t row_off = y_rows[r];
            if (row_off < 0 || n0 + c >= g.cout_g) continue;
            const int32_t co = co0 + n0 + c;
            conv_finish<T, int32_t>(p, c_tile[r * layout::LDC + c], bias, z, y, co,
                                    row_off + co * g.ys[1]);
        }
    }
}

/* MIN_BLOCKS resident blocks per SM cap the registers at 65536 / (THREADS * MIN_BLOCKS) (see
 * igemm_mma.cuh). */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__global__ void __launch_bounds__(Mma::THREADS, Mma::MIN_BLOCKS)
    igemm_kernel(const convnd_conv_params p, const igemm_geometry g, const T *__restrict__ x,
                 const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y) {
    using loaders = igemm_loaders<T, BM, BN, BK, typename Mma::A_TILE, typename Mma::B_TILE,
                                  Mma::THREADS, PATH>;
    igemm_block_tile<T, Mma, BM, BN, BK, STAGES, loaders>(p, g, (int32_t)blockIdx.x * BM,
                                                          (int32_t)blockIdx.y * BN,
                                                          (int32_t)blockIdx.z, x, w, bias, z, y);
}

/* ---- host side ------------------------------------------------------------------------------ */

/* The vector path needs 16-byte chunks of channels: channels-last x and w, cin_g and every
 * other stride multiples of the chunk, 16-byte aligned base pointers, and a filter extent of at
 * most CONVND_IGEMM_MASK_TAPS along every dimension (the loader's tap masks; a wider filter
 * gathers) and partial offsets within int32 (igemm_x_offsets_fit32). The pointwise variant
 * needs a 1x1(x1) kernel instead. */
template <typename T> __host__ inline int igemm_pick_path(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    const int64_t vec = 16 / (int64_t)sizeof(T);
    bool ok = p.xs[1] == 1 && p.ws[1] == 1 && p.cin_g % vec == 0 && (uintptr_t)a->x % 16 == 0 &&
              (uintptr_t)a->w % 16 == 0;
    for (int i = 0; i < 5; ++i)
        if (i != 1) ok = ok && p.xs[i] % vec == 0 && p.ws[i] % vec == 0;
    if (!ok) return IGEMM_GATHER;
    if (p.k[0] == 1 && p.k[1] == 1 && p.k[2] == 1) return IGEMM_VECTOR_POINTWISE;
    return igemm_x_loader_fits(p) ? IGEMM_VECTOR : IGEMM_GATHER;
}

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__host__ convnd_status igemm_launch_path(const convnd_launch_args *a, const igemm_geometry &g,
                                         dim3 grid) {
    using layout = igemm_smem_layout<T, Mma, BM, BN, STAGES>;
    auto kernel = &igemm_kernel<T, Mma, BM, BN, BK, STAGES, PATH>;
    return convnd_launch(kernel, grid, dim3(Mma::THREADS), layout::BYTES, a->stream, a->params, g,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y);
}

/* Launches one configuration on a problem the schedule's supports() accepted. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES>
__host__ convnd_status igemm_launch_tile(const convnd_launch_args *a, const char *name) {
    const convnd_conv_params &p = a->params;
    if (p.mode != CONVND_FORWARD || conv_needs_index64(p) || p.io_dim >= 0)
        return convnd_error(CONVND_ERR_INTERNAL,
                            "%s: launched on a problem it does not support (mode %d, 64-bit "
                            "indices %d, prefix/state axis %d: igemm_io_launch_tile's)",
                            name, (int)p.mode, (int)conv_needs_index64(p), (int)p.io_dim);
    if (p.N == 0 || p.cout_g == 0 || p.y_numel == 0) return CONVND_OK;
    const igemm_geometry g = igemm_make_geometry(p, BK);
    const int64_t tiles_n = (p.cout_g + BN - 1) / BN;
    if (tiles_n > 65535 || p.groups > 65535)
        return convnd_error(CONVND_ERR_INTERNAL, "%s: grid of %lld x %lld blocks too large", name,
                            (long long)tiles_n, (long long)p.groups);
    const dim3 grid((unsigned)((g.M + BM - 1) / BM), (unsigned)tiles_n, (unsigned)p.groups);
    switch (igemm_pick_path<T>(a)) {
    case IGEMM_VECTOR:
        return igemm_launch_path<T, Mma, BM, BN, BK, STAGES, IGEMM_VECTOR>(a, g, grid);
    case IGEMM_VECTOR_POINTWISE:
        return igemm_launch_path<T, Mma, BM, BN, BK, STAGES, IGEMM_VECTOR_POINTWISE>(a, g, grid);
    default:
        return igemm_launch_path<T, Mma, BM, BN, BK, STAGES, IGEMM_GATHER>(a, g, grid);
    }
}

} // namespace CONVND_NS

#endif
