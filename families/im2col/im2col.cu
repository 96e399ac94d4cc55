/* Kernels of the cublas_im2col schedule: explicit im2col (forward), the epilogue over the GEMM's
 * f32 result, col2im as a gather (transposed), and a widening copy for the host BLAS. Layouts
 * of col and acc: families/im2col/im2col.h. These are deliberately plain (one thread per element,
 * grid-stride loops): the schedule is the "what cuBLAS alone gives" reference, and its time is
 * dominated by the GEMM and by moving the K-times larger col matrix through memory. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "im2col.h"
#include "error.h"

namespace CONVND_NS {

/* Threads per block and a grid cap; the grid-stride loops cover the rest. */
static const int im2col_threads = 256;
static const int64_t im2col_max_blocks = 65536;

/* Row r of a forward weight row (the GEMM's K index) -> (c_in/g index, k0, k1, k2), in the
 * weight's memory order: channels-last [K...][C_in/g], channels-first [C_in/g][K...]. */
template <typename Idx>
__device__ __forceinline__ void im2col_split_row(const convnd_conv_params &p, Idx r, Idx &c,
                                                 Idx k[3]) {
    const Idx K0 = (Idx)p.k[0], K1 = (Idx)p.k[1], K2 = (Idx)p.k[2];
    if (p.w_cl) {
        const Idx cin_g = (Idx)p.cin_g;
        c = r % cin_g;
        r /= cin_g;
        k[2] = r % K2;
        r /= K2;
        k[1] = r % K1;
        k[0] = r / K1;
    } else {
        k[2] = r % K2;
        r /= K2;
        k[1] = r % K1;
        r /= K1;
        k[0] = r % K0;
        c = r / K0;
    }
}

/* Linear spatial position -> (s0, s1, s2) for sizes sz (outermost first). */
template <typename Idx>
__device__ __forceinline__ void im2col_split_spatial(const int64_t sz[3], Idx q, Idx s[3]) {
    s[2] = q % (Idx)sz[2];
    q /= (Idx)sz[2];
    s[1] = q % (Idx)sz[1];
    s[0] = q / (Idx)sz[1];
}

template <typename Idx>
__device__ __forceinline__ Idx im2col_spatial_linear(const int64_t sz[3], const Idx s[3]) {
    return (s[0] * (Idx)sz[1] + s[1]) * (Idx)sz[2] + s[2];
}

/* One thread per col element, enumerated in col's memory order (coalesced stores). */
template <typename T, typename Tc, typename Idx>
__global__ void im2col_forward_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                      Tc *__restrict__ col, Idx n0, Idx M, Idx total) {
    const Idx Kg = (Idx)p.cin_g * (Idx)p.k[0] * (Idx)p.k[1] * (Idx)p.k[2];
    const Idx P = (Idx)p.out[0] * (Idx)p.out[1] * (Idx)p.out[2];
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        Idx g, r, j;
        if (p.x_cl) { /* col[g][j][r] */
            r = linear % Kg;
            const Idx t = linear / Kg;
            j = t % M;
            g = t / M;
        } else { /* col[g][r][j] */
            j = linear % M;
            const Idx t = linear / M;
            r = t % Kg;
            g = t / Kg;
        }
        Idx c, k[3], o[3], i[3];
        im2col_split_row<Idx>(p, r, c, k);
        const Idx nl = j / P;
        im2col_split_spatial<Idx>(p.out, j - nl * P, o);
        float v = 0.0f;
        if (conv_forward_input<Idx>(o[0], k[0], p.s[0], p.d[0], p.p0[0], p.in[0], i[0]) &&
            conv_forward_input<Idx>(o[1], k[1], p.s[1], p.d[1], p.p0[1], p.in[1], i[1]) &&
            conv_forward_input<Idx>(o[2], k[2], p.s[2], p.d[2], p.p0[2], p.in[2], i[2]))
            v = conv_load(x,
                          conv_offset<Idx>(p.xs, n0 + nl, g * (Idx)p.cin_g + c, i[0], i[1], i[2]));
        conv_store(col, linear, v); /* exact: Tc is T or f32 */
    }
}

/* y (images n0..n0+nb) from the GEMM's f32 result, in y's memory order. */
template <typename T, typename Idx>
__global__ void im2col_epilogue_kernel(const convnd_conv_params p, const float *__restrict__ acc,
                                       const T *__restrict__ bias, const T *z, T *y, Idx n0, Idx M,
                                       Idx total) {
    const Idx cout_g = (Idx)p.cout_g;
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        const conv_out_index<Idx> at = conv_output_index<Idx>(p, linear); /* at.n: in chunk */
        const Idx g = at.c / cout_g, cg = at.c - g * cout_g;
        const Idx j = at.n * ((Idx)p.out[0] * (Idx)p.out[1] * (Idx)p.out[2]) +
                      im2col_spatial_linear<Idx>(p.out, at.o);
        const Idx acc_off = p.x_cl ? (g * M + j) * cout_g + cg : (g * cout_g + cg) * M + j;
        const Idx y_off = conv_offset<Idx>(p.ys, n0 + at.n, at.c, at.o[0], at.o[1], at.o[2]);
        conv_finish<T, Idx>(p, acc[acc_off], bias, z, y, at.c, y_off);
    }
}

/* Transposed: each output gathers the taps k whose input i = (o + P0 - k*D)/S exists (SPEC §3),
 * reading col[g][n][(c_out/g, k)][i]; a gather keeps the sum order fixed and needs no atomics. */
template <typename T, typename Idx>
__global__ void col2im_epilogue_kernel(const convnd_conv_params p, const float *__restrict__ col,
                                       const T *__restrict__ bias, const T *z, T *y, Idx n0, Idx M,
                                       Idx total) {
    const Idx cout_g = (Idx)p.cout_g;
    const Idx Nn = cout_g * (Idx)p.k[0] * (Idx)p.k[1] * (Idx)p.k[2];
    const Idx P_in = (Idx)p.in[0] * (Idx)p.in[1] * (Idx)p.in[2];
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        const conv_out_index<Idx> at = conv_output_index<Idx>(p, linear);
        const Idx g = at.c / cout_g, cg = at.c - g * cout_g;
        const Idx base = g * Nn * M + at.n * Nn * P_in;
        float acc = 0.0f;
        Idx i[3];
        for (Idx k0 = 0; k0 < (Idx)p.k[0]; ++k0) {
            if (!conv_transposed_input<Idx>(at.o[0], k0, p.s[0], p.d[0], p.p0[0], p.in[0], i[0]))
                continue;
            for (Idx k1 = 0; k1 < (Idx)p.k[1]; ++k1) {
                if (!conv_transposed_input<Idx>(at.o[1], k1, p.s[1], p.d[1], p.p0[1], p.in[1],
                                                i[1]))
                    continue;
                for (Idx k2 = 0; k2 < (Idx)p.k[2]; ++k2) {
                    if (!conv_transposed_input<Idx>(at.o[2], k2, p.s[2], p.d[2], p.p0[2], p.in[2],
                                                    i[2]))
                        continue;
                    const Idx r = cg * (Idx)p.ws[1] + conv_spatial_offset<Idx>(p.ws, k0, k1, k2);
                    const Idx il = im2col_spatial_linear<Idx>(p.in, i);
                    acc += col[base + (p.x_cl ? il * Nn + r : r * P_in + il)];
                }
            }
        }
        const Idx y_off = conv_offset<Idx>(p.ys, n0 + at.n, at.c, at.o[0], at.o[1], at.o[2]);
        conv_finish<T, Idx>(p, acc, bias, z, y, at.c, y_off);
    }
}

template <typename T, typename Idx>
__global__ void im2col_to_f32_kernel(const T *__restrict__ src, float *__restrict__ dst,
                                     Idx count) {
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx i = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; i < count; i += step)
        dst[i] = conv_load(src, i);
}

static dim3 im2col_grid(int64_t total) {
    int64_t blocks = (total + im2col_threads - 1) / im2col_threads;
    if (blocks > im2col_max_blocks) blocks = im2col_max_blocks;
    return dim3((unsigned)(blocks > 0 ? blocks : 1));
}

/* 64-bit indices when a tensor's offsets or this launch's element count could pass 2^30. */
static bool im2col_index64(const convnd_conv_params &p, int64_t largest) {
    return conv_needs_index64(p) || largest >= ((int64_t)1 << 30);
}

/* Chunk geometry shared by the launchers. */
struct im2col_chunk {
    int64_t M;        /* GEMM columns of the chunk */
    int64_t col_size; /* col elements */
    int64_t y_size;   /* y elements of the chunk */
};

static im2col_chunk im2col_chunk_of(const convnd_im2col_args *a) {
    const convnd_conv_params &p = a->launch->params;
    const int64_t kk = p.k[0] * p.k[1] * p.k[2];
    const int64_t P_out = p.out[0] * p.out[1] * p.out[2];
    const int64_t P_in = p.in[0] * p.in[1] * p.in[2];
    im2col_chunk c;
    if (p.mode == CONVND_TRANSPOSED) {
        c.M = a->nb * P_in;
        c.col_size = p.C_out * kk * c.M;
    } else {
        c.M = a->nb * P_out;
        c.col_size = p.C_in * kk * c.M;
    }
    c.y_size = a->nb * p.C_out * P_out;
    return c;
}

template <typename T, typename Tc, typename Idx>
static convnd_status im2col_forward_typed(const convnd_im2col_args *a, const im2col_chunk &c) {
    auto kernel = &im2col_forward_kernel<T, Tc, Idx>;
    return convnd_launch(kernel, im2col_grid(c.col_size), dim3(im2col_threads), 0,
                         a->launch->stream, a->launch->params, (const T *)a->launch->x,
                         (Tc *)a->col, (Idx)a->n0, (Idx)c.M, (Idx)c.col_size);
}

template <typename T, typename Tc>
static convnd_status im2col_forward_idx(const convnd_im2col_args *a, const im2col_chunk &c) {
    return im2col_index64(a->launch->params, c.col_size)
               ? im2col_forward_typed<T, Tc, int64_t>(a, c)
               : im2col_forward_typed<T, Tc, int32_t>(a, c);
}

template <typename T>
static convnd_status im2col_forward_col(const convnd_im2col_args *a, const im2col_chunk &c) {
    if (a->col_dtype == CONVND_F32) return im2col_forward_idx<T, float>(a, c);
    if (a->col_dtype == a->launch->params.dtype) return im2col_forward_idx<T, T>(a, c);
    return convnd_error(CONVND_ERR_INTERNAL, "cublas_im2col: col dtype %d for input dtype %d",
                        (int)a->col_dtype, (int)a->launch->params.dtype);
}

template <typename T, typename Idx>
static convnd_status im2col_epilogue_typed(const convnd_im2col_args *a, const im2col_chunk &c) {
    const convnd_launch_args *l = a->launch;
    if (l->params.mode == CONVND_TRANSPOSED) {
        auto kernel = &col2im_epilogue_kernel<T, Idx>;
        return convnd_launch(kernel, im2col_grid(c.y_size), dim3(im2col_threads), 0, l->stream,
                             l->params, (const float *)a->col, (const T *)l->bias, (const T *)l->z,
                             (T *)l->y, (Idx)a->n0, (Idx)c.M, (Idx)c.y_size);
    }
    auto kernel = &im2col_epilogue_kernel<T, Idx>;
    return convnd_launch(kernel, im2col_grid(c.y_size), dim3(im2col_threads), 0, l->stream,
                         l->params, a->acc, (const T *)l->bias, (const T *)l->z, (T *)l->y,
                         (Idx)a->n0, (Idx)c.M, (Idx)c.y_size);
}

template <typename T> static convnd_status im2col_epilogue_idx(const convnd_im2col_args *a) {
    const im2col_chunk c = im2col_chunk_of(a);
    const int64_t largest = c.col_size > c.y_size ? c.col_size : c.y_size;
    return im2col_index64(a->launch->params, largest) ? im2col_epilogue_typed<T, int64_t>(a, c)
                                                      : im2col_epilogue_typed<T, int32_t>(a, c);
}

template <typename T> static convnd_status im2col_to_f32_typed(const convnd_im2col_args *a) {
    if (a->count >= ((int64_t)1 << 30)) {
        auto kernel = &im2col_to_f32_kernel<T, int64_t>;
        return convnd_launch(kernel, im2col_grid(a->count), dim3(im2col_threads), 0,
                             a->launch->stream, (const T *)a->src, a->dst, (int64_t)a->count);
    }
    auto kernel = &im2col_to_f32_kernel<T, int32_t>;
    return convnd_launch(kernel, im2col_grid(a->count), dim3(im2col_threads), 0, a->launch->stream,
                         (const T *)a->src, a->dst, (int32_t)a->count);
}

/* Forward and transposed share the launcher: params.mode picks the kernel. */
static convnd_status im2col_epilogue_any(const convnd_im2col_args *a) {
    if (im2col_chunk_of(a).y_size == 0) return CONVND_OK;
    return convnd_launch_by_dtype(a->launch->params.dtype, "cublas_im2col epilogue", [&](auto t) {
        return im2col_epilogue_idx<typename decltype(t)::type>(a);
    });
}

} // namespace CONVND_NS

extern "C" convnd_status CONVND_LAUNCHER(im2col_forward)(const convnd_im2col_args *a) {
    using namespace CONVND_NS;
    const im2col_chunk c = im2col_chunk_of(a);
    if (c.col_size == 0) return CONVND_OK;
    return convnd_launch_by_dtype(a->launch->params.dtype, "cublas_im2col im2col", [&](auto t) {
        return im2col_forward_col<typename decltype(t)::type>(a, c);
    });
}

extern "C" convnd_status CONVND_LAUNCHER(im2col_epilogue)(const convnd_im2col_args *a) {
    return CONVND_NS::im2col_epilogue_any(a);
}

extern "C" convnd_status CONVND_LAUNCHER(col2im_epilogue)(const convnd_im2col_args *a) {
    return CONVND_NS::im2col_epilogue_any(a);
}

extern "C" convnd_status CONVND_LAUNCHER(im2col_to_f32)(const convnd_im2col_args *a) {
    using namespace CONVND_NS;
    if (a->count == 0) return CONVND_OK;
    return convnd_launch_by_dtype(a->launch->params.dtype, "cublas_im2col to_f32", [&](auto t) {
        return im2col_to_f32_typed<typename decltype(t)::type>(a);
    });
}
