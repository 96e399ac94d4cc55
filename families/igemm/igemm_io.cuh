/* The implicit GEMM's prefix/state instance (SPEC §12, §14): igemm_io_kernel, the block tile of
 * igemm_kernel.cuh over the logical input X = cat(prefix, x, suffix) along one spatial axis, plus
 * the state output, and its host-side launch. A separate kernel (and header: the transposed
 * schedules, which include igemm_kernel.cuh, never build it) so that igemm_kernel for problems
 * without a prefix stays as it is. The launchers (igemm_simt.cu, igemm_tc.cuh) send problems
 * with an io axis here; supports() keeps them to the configurations with
 * BK <= CONVND_IGEMM_IO_MAX_BK. */
#ifndef CONVND_IGEMM_IO_CUH
#define CONVND_IGEMM_IO_CUH

#include <stdint.h>
#include "igemm_configs.h"
#include "igemm_kernel.cuh"
#include "io_axis.cuh"

namespace CONVND_NS {

/* ---- prefix paths (SPEC §12; igemm_io_kernel) ----------------------------------------------- */

/* A rows over X = cat(prefix, x, suffix) along the io axis: the rows' coordinates are logical
 * (I counts all three), and each (row, tap) reads the source its io coordinate falls in
 * (io_axis_locate, the mapping `direct` uses), at that source's strides. init_io comes first
 * (the sources' batch strides enter init). */
template <typename T> struct igemm_a_io_source {
    const T *prefix, *suffix;
    int32_t io_dim, prefix_len, x_len;
    int32_t ps[5], fs[5];

    __device__ __forceinline__ void init_io(const igemm_io_geometry &io) {
        prefix = static_cast<const T *>(io.prefix);
        suffix = static_cast<const T *>(io.suffix);
        io_dim = io.io_dim;
        prefix_len = io.prefix_len;
        x_len = io.x_len;
        for (int i = 0; i < 5; ++i) {
            ps[i] = io.ps[i];
            fs[i] = io.fs[i];
        }
    }

    /* Logical tap (a, b, e) from its source's row base (x_base, p_base or f_base), and that
     * source's channel stride: only called in range. */
    __device__ __forceinline__ const T *locate(const T *__restrict__ x, const igemm_geometry &g,
                                               int32_t x_base, int32_t p_base, int32_t f_base,
                                               int32_t a, int32_t b, int32_t e,
                                               int32_t &c_stride) const {
        const io_axis_source src = io_axis_locate<int32_t>(io_dim, prefix_len, x_len, a, b, e);
        if (src == IO_AXIS_PREFIX) {
            c_stride = ps[1];
            return prefix + (p_base + a * ps[2] + b * ps[3] + e * ps[4]);
        }
        if (src == IO_AXIS_SUFFIX) {
            c_stride = fs[1];
            return suffix + (f_base + a * fs[2] + b * fs[3] + e * fs[4]);
        }
        c_stride = g.xs[1];
        return x + (x_base + a * g.xs[2] + b * g.xs[3] + e * g.xs[4]);
    }
};

/* Vector path: a 16-byte chunk is channels of one pixel, so it lies in one source whole; both
 * sources channels-last with strides in whole chunks and 16-byte aligned (igemm_io_pick_path).
 * The tile splits over the threads as igemm_a_vector_loader's, and the state is incremental as
 * there: per row, formed once, its base offset in each source and its tap masks (inside X along
 * each dimension, inside the prefix and before the suffix along the io axis); per k-tile, the
 * tap's term in each source (x's is igemm_k_iter::x_tap; the prefix's and the suffix's are
 * formed from the tap, uniform). Per pass that leaves five shifts, an AND, three sign tests, two
 * selects and an add. igemm_io_pick_path takes this path only when every partial offset of the
 * three sources fits int32. */
template <typename T, int BM, int BK, class L, int THREADS>
struct igemm_a_io_vector_loader : igemm_a_io_source<T> {
    using S = igemm_chunk_split<T, BM, BK, THREADS>;

    int32_t col;
    /* n*xs0 (n*ps0, n*fs0) + first channel of the group + the offset of the row's origin in x
     * (whose io coordinate is X's less prefix_len), in the prefix and in the suffix (X's less
     * prefix_len + x_len); 0 for no row */
    int32_t x_base[S::PASSES], p_base[S::PASSES], f_base[S::PASSES];
    uint32_t mask[3]
                 [S::PASSES];  /* bit 31 - t of mask[d]: tap t along d inside X (igemm_tap_mask) */
    uint32_t pmask[S::PASSES]; /* bit 31 - t: tap t along the io axis inside the prefix */
    uint32_t smask[S::PASSES]; /* bit 31 - t: tap t along the io axis before the suffix */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        const int io = this->io_dim;
        col = S::col(tid);
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            int32_t c[3], n;
            x_base[p] = p_base[p] = f_base[p] = 0;
            if (igemm_row_origin(g, m0 + S::row(tid, p), c, n)) { /* xs[1] == ps[1] == fs[1] == 1 */
                x_base[p] = n * g.xs[0] + group * g.cin_g;
                p_base[p] = n * this->ps[0] + group * g.cin_g;
                f_base[p] = n * this->fs[0] + group * g.cin_g;
                const int32_t before_suffix = this->prefix_len + this->x_len;
                for (int d = 0; d < 3; ++d) {
                    x_base[p] += (c[d] - (d == io ? this->prefix_len : 0)) * g.xs[2 + d];
                    p_base[p] += c[d] * this->ps[2 + d];
                    f_base[p] += (c[d] - (d == io ? before_suffix : 0)) * this->fs[2 + d];
                }
            }
            for (int d = 0; d < 3; ++d)
                mask[d][p] = igemm_tap_mask(c[d], g.K[d], g.D[d], g.I[d]);
            /* selects, not an indexed array, so that c stays in registers */
            const int32_t c_io = io == 0 ? c[0] : io == 1 ? c[1] : c[2];
            const int32_t k_io = io == 0 ? g.K[0] : io == 1 ? g.K[1] : g.K[2];
            const int32_t d_io = io == 0 ? g.D[0] : io == 1 ? g.D[1] : g.D[2];
            pmask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len);
            smask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len + this->x_len);
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int io = this->io_dim;
        const int32_t c = it.c0 + col;
        const bool c_ok = c < g.cin_g;
        const int32_t t_io = io == 0 ? it.t[0] : io == 1 ? it.t[1] : it.t[2];
        const int32_t x_tap = (int32_t)it.x_tap + c; /* exact where the tap is inside x */
        const int32_t p_tap = it.t[0] * g.D[0] * this->ps[2] + it.t[1] * g.D[1] * this->ps[3] +
                              it.t[2] * g.D[2] * this->ps[4] + c;
        const int32_t f_tap = it.t[0] * g.D[0] * this->fs[2] + it.t[1] * g.D[1] * this->fs[3] +
                              it.t[2] * g.D[2] * this->fs[4] + c;
        CONVND_UNROLL(8)
        for (int p = 0; p < S::PASSES; ++p) {
            const int row = S::row(tid, p);
            if (S::idle(row)) break;
            const uint32_t bits =
                (mask[0][p] << it.t[0]) & (mask[1][p] << it.t[1]) & (mask[2][p] << it.t[2]);
            const bool ok = c_ok && (int32_t)bits < 0;
            const bool in_prefix = (int32_t)(pmask[p] << t_io) < 0;
            const bool in_suffix = (int32_t)(smask[p] << t_io) >= 0;
            /* only formed in range (x itself otherwise): an unsigned offset, as it is then
             * >= 0, as igemm_a_vector_loader's */
            const uint32_t off = (uint32_t)(in_prefix   ? p_base[p] + p_tap
                                            : in_suffix ? f_base[p] + f_tap
                                                        : x_base[p] + x_tap);
            const T *src = in_prefix ? this->prefix : in_suffix ? this->suffix : x;
            convnd_cp_async<16>(tile + L::offset(row, col), ok ? src + off : x, ok);
        }
    }
};

/* Gather path: thread tid owns row tid % BM, as igemm_a_gather_loader; the channel stride is
 * the source's. Unlike there, the tap's row state is re-derived every k-tile: kept between
 * k-tiles (a source pointer, its channel stride, the validity) it cost 4-7 registers and took
 * the 64x64 and 32x64 instances from 20 to 16 and 18 warps/SM; kept as an offset and which
 * source, ptxas selected the source and its channel stride again per element (64x64: loop
 * 296 -> 326 instructions; bench/README.md). */
template <typename T, int BM, int BK, class L, int THREADS>
struct igemm_a_io_gather_loader : igemm_a_io_source<T> {
    using S = igemm_gather_split<BM, BK, THREADS>;

    /* n*xs0 (n*ps0, n*fs0) + first channel of the group * its channel stride */
    int32_t x_base, p_base, f_base;
    int32_t i[3]; /* o*S - P0 (logical) */

    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t m0, int32_t group,
                                         int tid) {
        const int32_t m = m0 + S::line(tid);
        x_base = p_base = f_base = 0;
        i[0] = i[1] = i[2] = CONVND_IGEMM_ABSENT_ROW;
        if (m < g.M) {
            const igemm_row r = igemm_split_row(g, m);
            for (int t = 0; t < 3; ++t)
                i[t] = r.o[t] * g.S[t] - g.P0[t];
            x_base = r.n * g.xs[0] + group * g.cin_g * g.xs[1];
            p_base = r.n * this->ps[0] + group * g.cin_g * this->ps[1];
            f_base = r.n * this->fs[0] + group * g.cin_g * this->fs[1];
        }
    }

    __device__ __forceinline__ void load(T *tile, const T *__restrict__ x, const igemm_geometry &g,
                                         const igemm_k_iter &it, int tid) const {
        const int32_t a = i[0] + it.t[0] * g.D[0];
        const int32_t b = i[1] + it.t[1] * g.D[1];
        const int32_t e = i[2] + it.t[2] * g.D[2];
        const bool in = (uint32_t)a < (uint32_t)g.I[0] && (uint32_t)b < (uint32_t)g.I[1] &&
                        (uint32_t)e < (uint32_t)g.I[2];
        int32_t cs = g.xs[1];
        /* only formed in range: an absent row's coordinates would overflow */
        const T *src = in ? this->locate(x, g, x_base, p_base, f_base, a, b, e, cs) : x;
        const int start = L::row_start(S::line(tid)); /* of the row in the tile */
        CONVND_UNROLL(4)
        for (int j = 0; j < S::PER_THREAD; ++j) {
            const int kc = S::pos(tid, j);
            const int32_t c = it.c0 + kc;
            const bool ok = in && c < g.cin_g;
            igemm_copy_elem(tile + L::at(start, kc), ok ? src + c * cs : x, ok);
        }
    }
};

/* The prefix kernel's loader pair of a path (IGEMM_GATHER or IGEMM_VECTOR; a 1x1 kernel takes
 * IGEMM_VECTOR, whose per-tap offsets cover it). */
template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS, int PATH>
struct igemm_io_loaders;

template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS>
struct igemm_io_loaders<T, BM, BN, BK, LA, LB, THREADS, IGEMM_GATHER> {
    using A = igemm_a_io_gather_loader<T, BM, BK, LA, THREADS>;
    using B = igemm_b_gather_loader<T, BN, BK, LB, THREADS>;
};
template <typename T, int BM, int BN, int BK, class LA, class LB, int THREADS>
struct igemm_io_loaders<T, BM, BN, BK, LA, LB, THREADS, IGEMM_VECTOR> {
    using A = igemm_a_io_vector_loader<T, BM, BK, LA, THREADS>;
    using B = igemm_b_vector_loader<T, BN, BK, LB, THREADS>;
};

/* The prefix/state kernel (SPEC §12), a separate instance so that the kernel above stays as it
 * is for problems without one: the same block tile over X = cat(prefix, x) (igemm_io_loaders),
 * then the state, X's last state_len positions along the io axis, written by a grid-stride loop
 * over its elements spread over every block of the grid (io_axis_state_element: the element
 * `direct` writes). The state overlaps no tensor the tile reads (validated), so the two parts
 * need no ordering. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__global__ void __launch_bounds__(Mma::THREADS, Mma::MIN_BLOCKS)
    igemm_io_kernel(const convnd_conv_params p, const igemm_geometry g, const igemm_io_geometry io,
                    const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ bias,
                    const T *z, T *y, T *__restrict__ state) {
    using loaders = igemm_io_loaders<T, BM, BN, BK, typename Mma::A_TILE, typename Mma::B_TILE,
                                     Mma::THREADS, PATH>;
    igemm_block_tile<T, Mma, BM, BN, BK, STAGES, loaders>(
        p, g, (int32_t)blockIdx.x * BM, (int32_t)blockIdx.y * BN, (int32_t)blockIdx.z, x, w, bias,
        z, y, 0, io);
    const int64_t block =
        (int64_t)blockIdx.x +
        (int64_t)gridDim.x * ((int64_t)blockIdx.y + (int64_t)gridDim.y * blockIdx.z);
    const int64_t step = (int64_t)gridDim.x * gridDim.y * gridDim.z * Mma::THREADS;
    const T *prefix = static_cast<const T *>(io.prefix),
            *suffix = static_cast<const T *>(io.suffix);
    for (int64_t i = block * Mma::THREADS + threadIdx.x; i < p.state_numel; i += step)
        io_axis_state_element<T, int32_t>(p, x, prefix, suffix, state, (int32_t)i);
}

/* ---- host side ------------------------------------------------------------------------------ */

/* Whether a prefix or suffix (its strides and pointer) allows the vector path: channels-last
 * with strides in whole 16-byte chunks, aligned, and its offsets within int32. */
template <typename T>
__host__ inline bool igemm_io_source_vectorizes(const convnd_conv_params &p,
                                                const int64_t (&strides)[5], const void *ptr) {
    const int64_t vec = 16 / (int64_t)sizeof(T);
    bool ok = strides[1] == 1 && (uintptr_t)ptr % 16 == 0;
    for (int i = 0; i < 5; ++i)
        if (i != 1) ok = ok && strides[i] % vec == 0;
    return ok && igemm_offsets_fit32(p, strides);
}

/* The prefix kernel's path: the vector one when x, the prefix and the suffix all allow it (x's:
 * igemm_pick_path), else the gather. */
template <typename T> __host__ inline int igemm_io_pick_path(const convnd_launch_args *a) {
    if (igemm_pick_path<T>(a) == IGEMM_GATHER) return IGEMM_GATHER;
    const convnd_conv_params &p = a->params;
    return igemm_io_source_vectorizes<T>(p, p.ps, a->x_prefix) &&
                   igemm_io_source_vectorizes<T>(p, p.fs, a->x_suffix)
               ? IGEMM_VECTOR
               : IGEMM_GATHER;
}

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__host__ convnd_status igemm_io_launch_path(const convnd_launch_args *a, const igemm_geometry &g,
                                            dim3 grid) {
    using layout = igemm_smem_layout<T, Mma, BM, BN, STAGES>;
    auto kernel = &igemm_io_kernel<T, Mma, BM, BN, BK, STAGES, PATH>;
    return convnd_launch(kernel, grid, dim3(Mma::THREADS), layout::BYTES, a->stream, a->params, g,
                         igemm_make_io_geometry(a->params, a->x_prefix, a->x_suffix),
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y, (T *)a->state);
}

/* A problem with a prefix or a state (the configurations with BK <= CONVND_IGEMM_IO_MAX_BK;
 * supports() refuses the others). An empty y still launches one block when there is a state. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES>
__host__ convnd_status igemm_io_launch_tile(const convnd_launch_args *a, const char *name) {
    const convnd_conv_params &p = a->params;
    if constexpr (BK > CONVND_IGEMM_IO_MAX_BK) {
        return convnd_error(CONVND_ERR_INTERNAL,
                            "%s: launched on a prefix/state problem (BK=%d has no prefix kernel)",
                            name, BK);
    } else {
        const bool gemm = p.N > 0 && p.cout_g > 0 && p.y_numel > 0;
        if (!gemm && p.state_numel == 0) return CONVND_OK;
        const igemm_geometry g = igemm_make_geometry(p, BK);
        const int64_t tiles_n = (p.cout_g + BN - 1) / BN;
        if (tiles_n > 65535 || p.groups > 65535)
            return convnd_error(CONVND_ERR_INTERNAL, "%s: grid of %lld x %lld blocks too large",
                                name, (long long)tiles_n, (long long)p.groups);
        const dim3 grid =
            gemm ? dim3((unsigned)((g.M + BM - 1) / BM), (unsigned)tiles_n, (unsigned)p.groups)
                 : dim3(1, 1, 1);
        if (igemm_io_pick_path<T>(a) == IGEMM_VECTOR)
            return igemm_io_launch_path<T, Mma, BM, BN, BK, STAGES, IGEMM_VECTOR>(a, g, grid);
        return igemm_io_launch_path<T, Mma, BM, BN, BK, STAGES, IGEMM_GATHER>(a, g, grid);
    }
}

} // namespace CONVND_NS

#endif
