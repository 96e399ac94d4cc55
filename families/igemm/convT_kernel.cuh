/* The phase-decomposed transposed convolution (convT_geometry.cuh) on the implicit-GEMM kernel:
 * each block locates its phase, builds that phase's forward geometry and runs igemm_block_tile
 * (igemm_kernel.cuh), the forward kernel's own body, with the loaders below. x is loaded as the
 * forward kernel loads it; the transposed weight goes into a k-major tile that the math reads
 * row-major (convT_kmajor.cuh).
 *
 * Paths, picked per launch (convT_pick_path): gather (any layouts, one element at a time), or
 * vector (x and the weight channels-last, 16-byte cp.async chunks), whose pointwise variant
 * serves when no phase has two taps along a dimension.
 *
 * Stride 1 (every dimension): one phase, whose geometry is the forward convolution with the
 * flipped kernel and padding E-1-P0 (convT_geometry.cuh), so that case is the forward implicit
 * GEMM with the weight read transposed and flipped, through this same entry. */
#ifndef CONVND_CONVT_KERNEL_CUH
#define CONVND_CONVT_KERNEL_CUH

#include <stdint.h>
#include "conv_index.cuh"
#include "convT_geometry.cuh"
#include "convT_kmajor.cuh"
#include "igemm_kernel.cuh"
#include "error.h"

namespace CONVND_NS {

/* x and the weight both 16 bytes at a time, or both per element: a vector x with a gathered
 * weight needs more than the 128 registers that two blocks per SM leave the large tiles (ptxas
 * spills), and only mixed layouts or C_out/g off the 16-byte grain need it. */
enum convT_path {
    CONVT_GATHER = 0,    /* x gather, w gather */
    CONVT_VECTOR = 1,    /* x vector, w vector */
    CONVT_POINTWISE = 2, /* x pointwise vector, w vector */
};

/* The x loaders are the forward ones (x is [N, C_in, I...] in both modes); the pointwise
 * variant serves when every phase has at most one tap per dimension (K <= S/gcd(S, D)). The
 * weight's loaders fill a k-major tile (convT_kmajor.cuh). */
template <typename T, class Mma, int BM, int BN, int BK, int PATH> struct convT_loaders {
    static constexpr int THREADS = Mma::THREADS;
    using LA = typename Mma::A_TILE;
    using LB = typename Mma::B_TILE;
    static constexpr int A_PATH = PATH == CONVT_GATHER   ? IGEMM_GATHER
                                  : PATH == CONVT_VECTOR ? IGEMM_VECTOR
                                                         : IGEMM_VECTOR_POINTWISE;
    using A = typename igemm_loaders<T, BM, BN, BK, LA, LA, THREADS, A_PATH>::A;
    using B = typename std::conditional<PATH == CONVT_GATHER,
                                        convT_b_gather_loader<T, BN, BK, LB, THREADS>,
                                        convT_b_vector_loader<T, BN, BK, LB, THREADS>>::type;
};

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__global__ void __launch_bounds__(Mma::THREADS, Mma::MIN_BLOCKS)
    convT_kernel(const convnd_conv_params p, const convT_phases ph, const T *__restrict__ x,
                 const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y) {
    using loaders = convT_loaders<T, Mma, BM, BN, BK, PATH>;
    const convT_block b = convT_locate(ph, (int32_t)blockIdx.x, BM);
    igemm_block_tile<T, Mma, BM, BN, BK, STAGES, loaders>(
        p, b.g, b.m0, (int32_t)blockIdx.y * BN, (int32_t)blockIdx.z, x, w, bias, z, y, b.y_off);
}

/* ---- host side ------------------------------------------------------------------------------ */

/* Per-dimension stride and phase-count limits (convT_limits.h). */
__host__ inline bool convT_within_limits(const convnd_conv_params &p) {
    int64_t phases = 1;
    for (int t = 0; t < 3; ++t) {
        if (p.s[t] > CONVND_CONVT_MAX_STRIDE) return false;
        phases *= p.s[t];
    }
    return phases <= CONVND_CONVT_MAX_PHASES;
}

/* The 16-byte paths: channels-last x with cin_g and x's other strides multiples of the chunk
 * (the forward rule for x), channels-last weight (output channels innermost) with cout_g and
 * its other strides multiples of the chunk, 16-byte aligned bases. Pointwise when no phase has
 * two taps along a dimension: K <= S / gcd(S, D) everywhere; otherwise vector only for filter
 * extents up to CONVND_IGEMM_MASK_TAPS (the x loader's tap masks), else gather. */
template <typename T> __host__ inline int convT_pick_path(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    const int64_t vec = 16 / (int64_t)sizeof(T);
    bool ok = p.xs[1] == 1 && p.cin_g % vec == 0 && (uintptr_t)a->x % 16 == 0 && p.ws[1] == 1 &&
              p.cout_g % vec == 0 && (uintptr_t)a->w % 16 == 0;
    for (int i = 0; i < 5; ++i)
        if (i != 1) ok = ok && p.xs[i] % vec == 0 && p.ws[i] % vec == 0;
    if (!ok) return CONVT_GATHER;
    bool pointwise = true;
    for (int t = 0; t < 3; ++t)
        pointwise = pointwise && p.k[t] <= p.s[t] / convnd_gcd64(p.s[t], p.d[t]);
    if (pointwise) return CONVT_POINTWISE;
    /* a phase has at most K taps per dimension */
    return igemm_x_loader_fits(p) ? CONVT_VECTOR : CONVT_GATHER;
}

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__host__ convnd_status convT_launch_path(const convnd_launch_args *a, const convT_phases &ph,
                                         dim3 grid) {
    using layout = igemm_smem_layout<T, Mma, BM, BN, STAGES>;
    auto kernel = &convT_kernel<T, Mma, BM, BN, BK, STAGES, PATH>;
    return convnd_launch(kernel, grid, dim3(Mma::THREADS), layout::BYTES, a->stream, a->params, ph,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y);
}

/* Launches one configuration on a problem the schedule's supports() accepted. */
template <typename T, class Mma, int BM, int BN, int BK, int STAGES>
__host__ convnd_status convT_launch_tile(const convnd_launch_args *a, const char *name) {
    const convnd_conv_params &p = a->params;
    if (p.mode != CONVND_TRANSPOSED || conv_needs_index64(p) || !convT_within_limits(p))
        return convnd_error(CONVND_ERR_INTERNAL,
                            "%s: launched on a problem it does not support (mode %d, 64-bit "
                            "indices %d, strides %lld,%lld,%lld)",
                            name, (int)p.mode, (int)conv_needs_index64(p), (long long)p.s[0],
                            (long long)p.s[1], (long long)p.s[2]);
    if (p.N == 0 || p.cout_g == 0 || p.y_numel == 0) return CONVND_OK;
    const convT_phases ph = convT_make_phases(p, BM, BK);
    const int64_t tiles_n = (p.cout_g + BN - 1) / BN;
    if (tiles_n > 65535 || p.groups > 65535)
        return convnd_error(CONVND_ERR_INTERNAL, "%s: grid of %lld x %lld blocks too large", name,
                            (long long)tiles_n, (long long)p.groups);
    const dim3 grid((unsigned)convT_row_blocks(ph), (unsigned)tiles_n, (unsigned)p.groups);
    switch (convT_pick_path<T>(a)) {
    case CONVT_VECTOR:
        return convT_launch_path<T, Mma, BM, BN, BK, STAGES, CONVT_VECTOR>(a, ph, grid);
    case CONVT_POINTWISE:
        return convT_launch_path<T, Mma, BM, BN, BK, STAGES, CONVT_POINTWISE>(a, ph, grid);
    default:
        return convT_launch_path<T, Mma, BM, BN, BK, STAGES, CONVT_GATHER>(a, ph, grid);
    }
}

} // namespace CONVND_NS

#endif
