/* The universal direct schedule: one thread per output element, a grid-stride loop over y in
 * y's memory order, f32 accumulation with fmaf in a fixed order (taps k0, k1, k2 outermost,
 * then the group's input channels). It supports every valid problem of the SPEC — both modes,
 * 1/2/3-D, groups, dilation, negative padding, any x/w/y layouts and views (via strides, SPEC
 * §11), a prefix input and a state output (SPEC §12; the mapping in io_axis.cuh, shared with
 * the implicit GEMM's prefix kernel), an input prologue (SPEC §15: primitives/prologue.cuh, a
 * switch per step), f32/f16/bf16, the fused epilogue and z == y in place — and is the planner's
 * fallback. Not fast: it reads
 * each input once per output that uses it; the fast schedules are elsewhere. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "io_axis.cuh"
#include "prologue.cuh"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

/* The input prologue's operands (SPEC §15; NULL for those no step reads). */
struct direct_prologue_args {
    const float *r, *a, *b;
};

/* One tap's products over the group's input channels: x (channel ci0 at xs, channel stride
 * xc) times w (wp, stride wc); with an input prologue, x's values through it (x's own frame
 * position i0..i2: the tap lies in x, not in a prefix or suffix). */
template <typename T, typename Idx>
__device__ __forceinline__ float
direct_tap(const convnd_conv_params &p, const T *xs, Idx xc, const T *wp, Idx wc, float acc,
           bool prologue, const direct_prologue_args &pa, Idx n, Idx ci0, Idx i0, Idx i1, Idx i2) {
    const Idx cin_g = (Idx)p.cin_g;
    if (!prologue) {
        for (Idx cl = 0; cl < cin_g; ++cl)
            acc = fmaf(conv_load(xs, cl * xc), conv_load(wp, cl * wc), acc);
        return acc;
    }
    prologue_operands o;
    o.r = prologue_r_at<Idx>(p, pa.r, n, i0, i1, i2);
    for (Idx cl = 0; cl < cin_g; ++cl) {
        prologue_ab_at<Idx>(p, pa.a, pa.b, n, ci0 + cl, o);
        const float v = conv_prologue_apply<T>(p.prologue, conv_load(xs, cl * xc), o);
        acc = fmaf(v, conv_load(wp, cl * wc), acc);
    }
    return acc;
}

/* Forward (SPEC §2) accumulator of output (n, co, o). */
template <typename T, typename Idx>
__device__ __forceinline__ float
direct_forward_acc(const convnd_conv_params &p, const T *__restrict__ x, const T *__restrict__ w,
                   const T *__restrict__ prefix, const T *__restrict__ suffix,
                   const direct_prologue_args &pa, const conv_out_index<Idx> &at) {
    const Idx cin_g = (Idx)p.cin_g;
    const Idx ci0 = (at.c / (Idx)p.cout_g) * cin_g; /* first input channel of co's group */
    const Idx w_c = at.c * (Idx)p.ws[0];
    const Idx ws_c = (Idx)p.ws[1];
    float acc = 0.0f;
    for (Idx k0 = 0; k0 < (Idx)p.k[0]; ++k0) {
        Idx i0;
        if (!conv_forward_input<Idx>(at.o[0], k0, p.s[0], p.d[0], p.p0[0], p.in[0], i0)) continue;
        for (Idx k1 = 0; k1 < (Idx)p.k[1]; ++k1) {
            Idx i1;
            if (!conv_forward_input<Idx>(at.o[1], k1, p.s[1], p.d[1], p.p0[1], p.in[1], i1))
                continue;
            for (Idx k2 = 0; k2 < (Idx)p.k[2]; ++k2) {
                Idx i2;
                if (!conv_forward_input<Idx>(at.o[2], k2, p.s[2], p.d[2], p.p0[2], p.in[2], i2))
                    continue;
                const io_axis_tap<T, Idx> xp =
                    io_axis_input_tap<T, Idx>(p, x, prefix, suffix, at.n, ci0, i0, i1, i2);
                const T *wp = w + w_c + conv_spatial_offset<Idx>(p.ws, k0, k1, k2);
                acc = direct_tap<T, Idx>(p, xp.at, xp.c_stride, wp, ws_c, acc,
                                         p.prologue.num_steps > 0 && xp.in_x, pa, at.n, ci0, xp.i0,
                                         xp.i1, xp.i2);
            }
        }
    }
    return acc;
}

/* Transposed (SPEC §3) accumulator of output (n, co, o): the taps k whose input
 * i = (o + P0 - k*D) / S is an integer in [0, I). */
template <typename T, typename Idx>
__device__ __forceinline__ float
direct_transposed_acc(const convnd_conv_params &p, const T *__restrict__ x, const T *__restrict__ w,
                      const direct_prologue_args &pa, const conv_out_index<Idx> &at) {
    const Idx cin_g = (Idx)p.cin_g, cout_g = (Idx)p.cout_g;
    const Idx group = at.c / cout_g;
    const Idx ci0 = group * cin_g;
    const Idx x_nc = at.n * (Idx)p.xs[0] + ci0 * (Idx)p.xs[1];
    const Idx w_c = ci0 * (Idx)p.ws[0] + (at.c - group * cout_g) * (Idx)p.ws[1];
    const Idx xs_c = (Idx)p.xs[1], ws_c = (Idx)p.ws[0];
    float acc = 0.0f;
    for (Idx k0 = 0; k0 < (Idx)p.k[0]; ++k0) {
        Idx i0;
        if (!conv_transposed_input<Idx>(at.o[0], k0, p.s[0], p.d[0], p.p0[0], p.in[0], i0))
            continue;
        for (Idx k1 = 0; k1 < (Idx)p.k[1]; ++k1) {
            Idx i1;
            if (!conv_transposed_input<Idx>(at.o[1], k1, p.s[1], p.d[1], p.p0[1], p.in[1], i1))
                continue;
            for (Idx k2 = 0; k2 < (Idx)p.k[2]; ++k2) {
                Idx i2;
                if (!conv_transposed_input<Idx>(at.o[2], k2, p.s[2], p.d[2], p.p0[2], p.in[2], i2))
                    continue;
                const T *xp = x + x_nc + conv_spatial_offset<Idx>(p.xs, i0, i1, i2);
                const T *wp = w + w_c + conv_spatial_offset<Idx>(p.ws, k0, k1, k2);
                acc = direct_tap<T, Idx>(p, xp, xs_c, wp, ws_c, acc, p.prologue.num_steps > 0, pa,
                                         at.n, ci0, i0, i1, i2);
            }
        }
    }
    return acc;
}

/* z may be y (in place), so neither carries __restrict__. The grid-stride loop covers y, then
 * the state (SPEC §12), in one launch; the prefix and the suffix (SPEC §14) are read in place. */
template <typename T, typename Idx>
__global__ void direct_conv_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                   const T *__restrict__ w, const T *__restrict__ bias, const T *z,
                                   T *y, const T *__restrict__ prefix, const T *__restrict__ suffix,
                                   T *__restrict__ state, const direct_prologue_args pa) {
    const Idx outputs = (Idx)p.y_numel, total = outputs + (Idx)p.state_numel;
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        if (linear >= outputs) {
            io_axis_state_element<T, Idx, true>(p, x, prefix, suffix, state, linear - outputs, pa.r,
                                                pa.a, pa.b);
            continue;
        }
        const conv_out_index<Idx> at = conv_output_index<Idx>(p, linear);
        const float acc = p.mode == CONVND_TRANSPOSED
                              ? direct_transposed_acc<T, Idx>(p, x, w, pa, at)
                              : direct_forward_acc<T, Idx>(p, x, w, prefix, suffix, pa, at);
        const Idx y_off = conv_offset<Idx>(p.ys, at.n, at.c, at.o[0], at.o[1], at.o[2]);
        const Idx z_off = conv_offset<Idx>(p.zs, at.n, at.c, at.o[0], at.o[1], at.o[2]);
        conv_store(y, y_off, conv_epilogue<T, Idx>(p, acc, bias, z, at.c, z_off));
    }
}

/* Threads per block of each configuration (families/direct/direct.c names them "t128", "t256"). */
static const int direct_block_threads[] = {128, 256};
/* Enough blocks to fill an H200 many times over; beyond that the grid-stride loop takes over. */
static const int64_t direct_max_blocks = 8192;

template <typename T, typename Idx>
static convnd_status direct_launch_typed(const convnd_launch_args *a, int threads) {
    const convnd_conv_params &p = a->params;
    int64_t blocks = (p.y_numel + p.state_numel + threads - 1) / threads;
    if (blocks > direct_max_blocks) blocks = direct_max_blocks;
    auto kernel = &direct_conv_kernel<T, Idx>;
    return convnd_launch(kernel, dim3((unsigned)blocks), dim3((unsigned)threads), 0, a->stream, p,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y, (const T *)a->x_prefix, (const T *)a->x_suffix, (T *)a->state,
                         direct_prologue_args{a->pro_r, a->pro_a, a->pro_b});
}

template <typename T>
static convnd_status direct_launch_dtype(const convnd_launch_args *a, int threads) {
    return conv_needs_index64(a->params) ? direct_launch_typed<T, int64_t>(a, threads)
                                         : direct_launch_typed<T, int32_t>(a, threads);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(direct) {
    using namespace CONVND_NS;
    const int nconfigs = (int)(sizeof(direct_block_threads) / sizeof(direct_block_threads[0]));
    if (a->config < 0 || a->config >= nconfigs)
        return convnd_error(CONVND_ERR_INTERNAL, "direct: config %d out of range [0, %d)",
                            (int)a->config, nconfigs);
    if (a->params.y_numel == 0 && a->params.state_numel == 0) return CONVND_OK;
    const int threads = direct_block_threads[a->config];
    return convnd_launch_by_dtype(a->params.dtype, "direct", [&](auto t) {
        return direct_launch_dtype<typename decltype(t)::type>(a, threads);
    });
}
