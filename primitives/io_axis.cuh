/* SPEC §12 and §14 in the kernels, once: along padded spatial dim p.io_dim the conv reads the
 * logical input X = cat(prefix, x, suffix) (p.in[io_dim] counts all three; the first
 * p.prefix_len positions are the prefix's, the last p.suffix_len the suffix's), and the state
 * receives X's last p.state_len positions. The mapping from a logical position to its source,
 * and the state element, are shared by `direct` (families/direct/direct.cu) and the implicit GEMM's
 * prefix kernel (igemm_io_kernel, families/igemm/igemm_io.cuh), so both read the same element for
 * every tap and write the same state. */
#ifndef CONVND_IO_AXIS_CUH
#define CONVND_IO_AXIS_CUH

#include <stdint.h>
#include "conv_index.cuh"
#include "conv_params.h"
#include "prologue.cuh"

namespace CONVND_NS {

/* Which tensor a logical position of X lies in. */
enum io_axis_source { IO_AXIS_X = 0, IO_AXIS_PREFIX = 1, IO_AXIS_SUFFIX = 2 };

/* Logical position (i0, i1, i2) of X: the tensor it lies in, and the io axis' coordinate made
 * that tensor's (X = cat(prefix, x, suffix): x starts prefix_len positions into X, the suffix
 * prefix_len + x_len). Selects, not an indexed array, so the coordinates stay in registers. */
template <typename Idx>
__device__ __forceinline__ io_axis_source io_axis_locate(int32_t io_dim, Idx prefix_len, Idx x_len,
                                                         Idx &i0, Idx &i1, Idx &i2) {
    const Idx along = io_dim == 0 ? i0 : io_dim == 1 ? i1 : i2;
    if (along < prefix_len) return IO_AXIS_PREFIX;
    const bool suffix = along >= prefix_len + x_len;
    const Idx shift = suffix ? prefix_len + x_len : prefix_len;
    i0 -= io_dim == 0 ? shift : 0;
    i1 -= io_dim == 1 ? shift : 0;
    i2 -= io_dim == 2 ? shift : 0;
    return suffix ? IO_AXIS_SUFFIX : IO_AXIS_X;
}

/* x's own extent along the io axis: X's less the prefix and the suffix. */
__host__ __device__ __forceinline__ int64_t io_axis_x_len(const convnd_conv_params &p) {
    return p.in[p.io_dim] - p.prefix_len - p.suffix_len;
}

/* Where tap (i0, i1, i2) of input channels [ci0, ...) lives: in x, or, for a position before
 * (after) x along the io axis, in the prefix (suffix); the pointer of channel ci0 and the
 * channel stride; whether it is x's (an input prologue applies to x only, SPEC §15) and the
 * position in its tensor's own frame. */
template <typename T, typename Idx> struct io_axis_tap {
    const T *at;
    Idx c_stride;
    bool in_x;
    Idx i0, i1, i2;
};

template <typename T, typename Idx>
__device__ __forceinline__ io_axis_tap<T, Idx>
io_axis_input_tap(const convnd_conv_params &p, const T *x, const T *prefix, const T *suffix, Idx n,
                  Idx ci0, Idx i0, Idx i1, Idx i2) {
    if (p.io_dim >= 0) {
        const io_axis_source src =
            io_axis_locate<Idx>(p.io_dim, (Idx)p.prefix_len, (Idx)io_axis_x_len(p), i0, i1, i2);
        if (src == IO_AXIS_PREFIX)
            return {prefix + conv_offset<Idx>(p.ps, n, ci0, i0, i1, i2),
                    (Idx)p.ps[1],
                    false,
                    i0,
                    i1,
                    i2};
        if (src == IO_AXIS_SUFFIX)
            return {suffix + conv_offset<Idx>(p.fs, n, ci0, i0, i1, i2),
                    (Idx)p.fs[1],
                    false,
                    i0,
                    i1,
                    i2};
    }
    return {x + conv_offset<Idx>(p.xs, n, ci0, i0, i1, i2), (Idx)p.xs[1], true, i0, i1, i2};
}

/* State element `linear`: state[..., j, ...] = X[..., I_X - T_s + j, ...] along the io axis,
 * zero before X's start; with PROLOGUE (kernels that apply one; the others' code then has no
 * trace of it), for a position of x the input prologue's value (SPEC §15; pro_r, pro_a, pro_b:
 * its operands). The state has x's shape with T_s on that
 * axis and is enumerated row-major over its logical dims. */
template <typename T, typename Idx, bool PROLOGUE = false>
__device__ __forceinline__ void
io_axis_state_element(const convnd_conv_params &p, const T *x, const T *prefix, const T *suffix,
                      T *state, Idx linear, const float *pro_r = nullptr,
                      const float *pro_a = nullptr, const float *pro_b = nullptr) {
    Idx pos[3], len[3];
    for (int t = 0; t < 3; ++t)
        len[t] = t == p.io_dim ? (Idx)p.state_len : (Idx)p.in[t];
    for (int t = 2; t >= 0; --t) {
        pos[t] = linear % len[t];
        linear /= len[t];
    }
    const Idx c = linear % (Idx)p.C_in, n = linear / (Idx)p.C_in;
    const Idx s_off = conv_offset<Idx>(p.ss, n, c, pos[0], pos[1], pos[2]);
    const Idx src = pos[p.io_dim] + (Idx)p.in[p.io_dim] - (Idx)p.state_len; /* position in X */
    float v = 0.0f;
    if (src >= 0) {
        pos[p.io_dim] = src;
        const io_axis_tap<T, Idx> tap =
            io_axis_input_tap<T, Idx>(p, x, prefix, suffix, n, c, pos[0], pos[1], pos[2]);
        v = conv_load(tap.at, (Idx)0);
        if (PROLOGUE && p.prologue.num_steps > 0 && tap.in_x) {
            prologue_operands o;
            o.r = prologue_r_at<Idx>(p, pro_r, n, tap.i0, tap.i1, tap.i2);
            prologue_ab_at<Idx>(p, pro_a, pro_b, n, c, o);
            v = conv_prologue_apply<T>(p.prologue, v, o);
        }
    }
    conv_store(state, s_off, v);
}

} // namespace CONVND_NS

#endif
