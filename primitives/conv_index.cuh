/* Index math, dtype conversion and the fused epilogue shared by every convnd kernel.
 *
 * Include after "portability.cuh" (it provides CONVND_NS, __host__/__device__, convnd_half,
 * convnd_bf16, convnd_to_f32 and convnd_from_f32). Everything here is __host__ __device__ so the
 * same code runs in the nvcc build and in the emulated-device build.
 *
 * Conventions (core/conv_params.h): every problem is padded to 3 spatial dims; tensors are
 * addressed through element strides over logical indices, so one kernel serves both layouts
 * (and mixed x/w layouts):
 *   x (n, c_in, i0, i1, i2)      w forward (c_out, c_in/g, k0, k1, k2)
 *   y, z (n, c_out, o0, o1, o2)  w transposed (c_in, c_out/g, k0, k1, k2)
 *
 * Index width: kernels are templates on Idx (int32_t or int64_t). 32-bit integer math is much
 * cheaper on the GPU (a 64-bit multiply is several 32-bit instructions), so launchers pick
 * int32_t unless conv_needs_index64() says some offset or coordinate could overflow it. */
#ifndef CONVND_CONV_INDEX_CUH
#define CONVND_CONV_INDEX_CUH

#include <stdint.h>
#include <type_traits>
#include "convnd.h"
#include "conv_params.h"

namespace CONVND_NS {

/* ---- index width -------------------------------------------------------------------------- */

/* True when a kernel must use 64-bit indices: the problem's rule, decided once in core
 * (core/conv_params.c: every tensor, view span and spatial extent below 2^30, so that offsets,
 * coordinates and sums of two of them fit int32). A launch adds only its own grid's limits
 * (a grid-stride loop's thread count). */
__host__ inline bool conv_needs_index64(const convnd_conv_params &p) {
    return p.index64 != 0;
}

/* ---- logical indices and offsets ---------------------------------------------------------- */

/* Element offset of logical index (a, b, i0, i1, i2) under 5 element strides. */
template <typename Idx>
__host__ __device__ __forceinline__ Idx conv_offset(const int64_t s[5], Idx a, Idx b, Idx i0,
                                                    Idx i1, Idx i2) {
    return a * (Idx)s[0] + b * (Idx)s[1] + i0 * (Idx)s[2] + i1 * (Idx)s[3] + i2 * (Idx)s[4];
}

/* Offset of the spatial part only (i0, i1, i2). */
template <typename Idx>
__host__ __device__ __forceinline__ Idx conv_spatial_offset(const int64_t s[5], Idx i0, Idx i1,
                                                            Idx i2) {
    return i0 * (Idx)s[2] + i1 * (Idx)s[3] + i2 * (Idx)s[4];
}

/* A logical output position. */
template <typename Idx> struct conv_out_index { Idx n, c, o[3]; };

/* Splits a linear output number into (n, c_out, o0, o1, o2), enumerating y in its memory order
 * (c_out innermost when y is channels-last) so that consecutive threads store to consecutive
 * addresses. */
template <typename Idx>
__host__ __device__ __forceinline__ conv_out_index<Idx>
conv_output_index(const convnd_conv_params &p, Idx linear) {
    conv_out_index<Idx> r;
    const Idx O0 = (Idx)p.out[0], O1 = (Idx)p.out[1], O2 = (Idx)p.out[2];
    const Idx C = (Idx)p.C_out;
    if (p.y_cl) {
        r.c = linear % C;
        linear /= C;
    }
    r.o[2] = linear % O2;
    linear /= O2;
    r.o[1] = linear % O1;
    linear /= O1;
    r.o[0] = linear % O0;
    linear /= O0;
    if (!p.y_cl) {
        r.c = linear % C;
        linear /= C;
    }
    r.n = linear;
    return r;
}

/* Forward mode (SPEC §2): input coordinate i = o*S - P0 + k*D read by output o through tap k.
 * Returns false when it falls outside [0, I): the implicit zero padding (or, for negative P0,
 * the cropped part), never read. */
template <typename Idx>
__host__ __device__ __forceinline__ bool conv_forward_input(Idx o, Idx k, Idx S, Idx D, Idx P0,
                                                            Idx I, Idx &i) {
    i = o * S - P0 + k * D;
    return i >= 0 && i < I;
}

/* Output o of a run or tile whose tail may pass the last output (out - 1): clamped to it, so that
 * input positions (o * S ...) are only ever formed for real outputs; with strides or paddings
 * near 2^62 a position past the end overflows int64. The tail's results are never stored. */
template <typename Idx> __host__ __device__ __forceinline__ Idx conv_clamp_out(Idx o, Idx out) {
    return o < out ? o : out - 1;
}

/* o * S + c formed in unsigned (wrapping) arithmetic: exact whenever the result is a real input
 * position of a real output; for the outputs of a run's masked tail, which a sliding window
 * also loads, it may wrap instead of overflowing int64 (undefined behaviour), and the caller's
 * bounds check then rejects it. */
template <typename Idx> __host__ __device__ __forceinline__ Idx conv_wrap_pos(Idx o, Idx S, Idx c) {
    typedef typename std::make_unsigned<Idx>::type U;
    return (Idx)((U)o * (U)S + (U)c);
}

/* Transposed mode (SPEC §3): the input i with i*S + k*D - P0 = o, i.e. i = (o + P0 - k*D) / S,
 * which exists only when the numerator is a non-negative multiple of S with quotient < I.
 * Outputs past the full result (negative P1) simply find no tap. */
template <typename Idx>
__host__ __device__ __forceinline__ bool conv_transposed_input(Idx o, Idx k, Idx S, Idx D, Idx P0,
                                                               Idx I, Idx &i) {
    const Idx num = o + P0 - k * D;
    if (num < 0) return false;
    i = num / S;
    return i * S == num && i < I;
}

/* ---- dtypes -------------------------------------------------------------------------------- */

/* Element `off` of a tensor of T, as f32 (exact for all three dtypes). */
template <typename T, typename Idx>
__host__ __device__ __forceinline__ float conv_load(const T *p, Idx off) {
    return convnd_to_f32(p[off]);
}

/* Stores v rounded once (to nearest even) to T. */
template <typename T, typename Idx>
__host__ __device__ __forceinline__ void conv_store(T *p, Idx off, float v) {
    p[off] = convnd_from_f32<T>(v);
}

/* ---- fused epilogue (SPEC §5): y = act(alpha * acc + bias + beta * z), all in f32 ------------ */

/* 1/sqrt(2), for the exact (erf) GELU. */
#define CONVND_RSQRT2_F 0.70710678118654752440f

/* The activation ACT (a convnd_activation) as a template parameter: kernels that pick it once at
 * their boundary (the tensor-core register epilogue, tc_epilogue.cuh) run one body per
 * instance, with no per-element switch. */
template <int ACT> __host__ __device__ __forceinline__ float conv_activate_t(float v) {
    if constexpr (ACT == CONVND_ACT_RELU)
        return v > 0.0f ? v : 0.0f;
    else if constexpr (ACT == CONVND_ACT_SILU)
        return v / (1.0f + expf(-v));
    else if constexpr (ACT == CONVND_ACT_GELU)
        return 0.5f * v * (1.0f + erff(v * CONVND_RSQRT2_F));
    else
        return v;
}

/* The activation chosen at run time (one switch per call). */
__host__ __device__ __forceinline__ float conv_activate(int32_t act, float v) {
    switch (act) {
    case CONVND_ACT_RELU:
        return conv_activate_t<CONVND_ACT_RELU>(v);
    case CONVND_ACT_SILU:
        return conv_activate_t<CONVND_ACT_SILU>(v);
    case CONVND_ACT_GELU:
        return conv_activate_t<CONVND_ACT_GELU>(v);
    default:
        return v;
    }
}

/* z is only read when beta != 0, as cuDNN does, so an unset y used in place with beta = 0
 * cannot leak NaN into the result. */
__host__ __device__ __forceinline__ bool conv_reads_z(const convnd_conv_params &p) {
    return p.has_z && p.beta != 0.0f;
}

/* alpha * acc + bias + beta * z, the epilogue before its activation, on values the caller
 * already loaded (bias_v: bias[c] when has_bias; z_v: z at y's offset when conv_reads_z). */
__host__ __device__ __forceinline__ float conv_epilogue_linear(const convnd_conv_params &p,
                                                               float acc, float bias_v, float z_v) {
    float v = p.alpha * acc;
    if (p.has_bias) v += bias_v;
    if (conv_reads_z(p)) v = fmaf(p.beta, z_v, v);
    return v;
}

/* The epilogue on values the caller already loaded, for kernels that load bias and z in
 * vectors. */
__host__ __device__ __forceinline__ float conv_epilogue_values(const convnd_conv_params &p,
                                                               float acc, float bias_v, float z_v) {
    return conv_activate(p.activation, conv_epilogue_linear(p, acc, bias_v, z_v));
}

/* ACT for "read p.activation at run time" (conv_activate): the emulated device's one epilogue
 * body (tc_epilogue.cuh). */
#define CONVND_ACT_RUNTIME (-1)

/* The same with the activation a template parameter (p.activation == ACT, checked by the
 * caller's dispatch; CONVND_ACT_RUNTIME: the switch on p.activation). */
template <int ACT>
__host__ __device__ __forceinline__ float
conv_epilogue_values_t(const convnd_conv_params &p, float acc, float bias_v, float z_v) {
    if constexpr (ACT == CONVND_ACT_RUNTIME)
        return conv_epilogue_values(p, acc, bias_v, z_v);
    else
        return conv_activate_t<ACT>(conv_epilogue_linear(p, acc, bias_v, z_v));
}

/* The epilogue's value for output channel c at element offset y_off (z shares y's strides, and
 * may be y itself: it is read here, before the caller's store). */
template <typename T, typename Idx>
__host__ __device__ __forceinline__ float
conv_epilogue(const convnd_conv_params &p, float acc, const T *bias, const T *z, Idx c, Idx y_off) {
    return conv_epilogue_values(p, acc, p.has_bias ? conv_load(bias, c) : 0.0f,
                                conv_reads_z(p) ? conv_load(z, y_off) : 0.0f);
}

/* Epilogue then the single rounding store: what every kernel does with a finished accumulator. */
template <typename T, typename Idx>
__host__ __device__ __forceinline__ void conv_finish(const convnd_conv_params &p, float acc,
                                                     const T *bias, const T *z, T *y, Idx c,
                                                     Idx y_off) {
    conv_store(y, y_off, conv_epilogue(p, acc, bias, z, c, y_off));
}

} // namespace CONVND_NS

#endif
