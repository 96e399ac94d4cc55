/* The phase-decomposed transposed convolution (convT_geometry.cuh) on the implicit-GEMM kernel:
 * each block locates its phase, builds that phase's forward geometry and runs igemm_block_tile
 * (igemm_kernel.cuh), the forward kernel's own body, with the loaders below. Only the
 * weight's loader differs from the forward kernel's: it reads the transposed weight, per
 * element, or (channels-last weight) in 16-byte chunks into a k-major tile that the math reads
 * row-major (convT_kmajor.cuh).
 *
 * Paths, picked per launch (convT_pick_path):
 *   x (A)                                    weight (B)
 *   gather: any layout                       gather: any layout
 *   vector: channels-last, 16-byte chunks    k-major: channels-last, C_out/g in 16-byte chunks
 *   pointwise vector: also K <= S/gcd(S,D)   (only with a vector x)
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

/* B rows of the transposed weight w[ci, co mod C_out/g, k...] into the implicit GEMM's n-major
 * tile: the forward gather loader, whose row base is the group's first input channel plus the
 * output channel (the phase geometry's ws[0] steps output channels, ws[1] input channels).
 * Neither layout of the transposed weight keeps a tile row's input channels contiguous, so
 * this path copies one element at a time; channels-last weights take the k-major path. */
template <typename T, int BN, int BK, int LD, int THREADS>
struct convT_b_loader : igemm_b_gather_loader<T, BN, BK, LD, THREADS> {
    __device__ __forceinline__ void init(const igemm_geometry &g, int32_t n0, int32_t group,
                                         int tid) {
        const int32_t n = n0 + tid % BN;
        this->base =
            n < g.cout_g ? convT_of(g).w_base + n * g.ws[0] + group * g.cin_g * g.ws[1] : -1;
    }
};

enum convT_path {
    CONVT_GATHER = 0,
    CONVT_VECTOR = 1,           /* x vector, w gather */
    CONVT_POINTWISE = 2,        /* x pointwise vector, w gather */
    CONVT_VECTOR_KMAJOR = 3,    /* x vector, w k-major vector */
    CONVT_POINTWISE_KMAJOR = 4, /* x pointwise vector, w k-major vector */
};

/* The x loaders are the forward ones (x is [N, C_in, I...] in both modes). The pointwise vector
 * variant serves when every phase has at most one tap per dimension (K <= S/gcd(S, D)). */
template <typename T, int BM, int BN, int BK, int THREADS, int PATH> struct convT_loaders {
    static constexpr int LD = igemm_ld<T, BK>::value;
    static constexpr int A_PATH = PATH == CONVT_GATHER ? IGEMM_GATHER
                                  : PATH == CONVT_VECTOR || PATH == CONVT_VECTOR_KMAJOR
                                      ? IGEMM_VECTOR
                                      : IGEMM_VECTOR_POINTWISE;
    static constexpr bool KMAJOR = PATH == CONVT_VECTOR_KMAJOR || PATH == CONVT_POINTWISE_KMAJOR;
    using A = typename igemm_loaders<T, BM, BN, BK, LD, THREADS, A_PATH>::A;
    using B = typename std::conditional<
        KMAJOR, convT_b_kmajor_loader<T, BN, BK, convT_ldb<T, BN>::value, THREADS>,
        convT_b_loader<T, BN, BK, LD, THREADS>>::type;
};

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__global__ void __launch_bounds__(Mma::THREADS, Mma::MIN_BLOCKS)
    convT_kernel(const convnd_conv_params p, const convT_phases ph, const T *__restrict__ x,
                 const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y) {
    using loaders = convT_loaders<T, BM, BN, BK, Mma::THREADS, PATH>;
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

/* x's 16-byte path (the forward rule for x alone): channels-last x, cin_g and x's other strides
 * multiples of the chunk, a 16-byte aligned base; pointwise when no phase has two taps along a
 * dimension: K <= S / gcd(S, D) everywhere. The weight's k-major path, with a vector x: output
 * channels innermost (channels-last), cout_g and the weight's other strides multiples of the
 * chunk, a 16-byte aligned base. */
template <typename T> __host__ inline int convT_pick_path(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    const int64_t vec = 16 / (int64_t)sizeof(T);
    bool x_ok = p.xs[1] == 1 && p.cin_g % vec == 0 && (uintptr_t)a->x % 16 == 0;
    bool w_ok = p.ws[1] == 1 && p.cout_g % vec == 0 && (uintptr_t)a->w % 16 == 0;
    for (int i = 0; i < 5; ++i) {
        if (i != 1) x_ok = x_ok && p.xs[i] % vec == 0;
        if (i != 1) w_ok = w_ok && p.ws[i] % vec == 0;
    }
    if (!x_ok) return CONVT_GATHER;
    bool pointwise = true;
    for (int t = 0; t < 3; ++t)
        pointwise = pointwise && p.k[t] <= p.s[t] / convT_gcd(p.s[t], p.d[t]);
    if (pointwise) return w_ok ? CONVT_POINTWISE_KMAJOR : CONVT_POINTWISE;
    return w_ok ? CONVT_VECTOR_KMAJOR : CONVT_VECTOR;
}

template <typename T, class Mma, int BM, int BN, int BK, int STAGES, int PATH>
__host__ convnd_status convT_launch_path(const convnd_launch_args *a, const convT_phases &ph,
                                         dim3 grid) {
    using layout = igemm_smem_layout<T, BM, BN, BK, STAGES>;
    auto kernel = &convT_kernel<T, Mma, BM, BN, BK, STAGES, PATH>;
    return convnd_launch(kernel, grid, dim3(Mma::THREADS), layout::BYTES, a->stream, a->params, ph,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y);
}

/* Launches one configuration on a problem the schedule's supports() accepted. Mma reads the
 * implicit GEMM's n-major B tiles, MmaK the k-major ones. */
template <typename T, class Mma, class MmaK, int BM, int BN, int BK, int STAGES>
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
    case CONVT_VECTOR_KMAJOR:
        return convT_launch_path<T, MmaK, BM, BN, BK, STAGES, CONVT_VECTOR_KMAJOR>(a, ph, grid);
    case CONVT_POINTWISE_KMAJOR:
        return convT_launch_path<T, MmaK, BM, BN, BK, STAGES, CONVT_POINTWISE_KMAJOR>(a, ph, grid);
    default:
        return convT_launch_path<T, Mma, BM, BN, BK, STAGES, CONVT_GATHER>(a, ph, grid);
    }
}

} // namespace CONVND_NS

#endif
