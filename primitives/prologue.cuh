/* SPEC §15 in the kernels: the input prologue, a chain of elementwise f32 steps applied to an
 * element of x as a tap reads it (never to padding, a prefix or a suffix), each optionally
 * rounded to x's dtype. Every step is one IEEE operation rounded to f32 (fma_ab: one fused
 * multiply-add), written with the _rn intrinsics on the GPU so the compiler cannot contract a
 * multiply into the next step's add, which would change the value a lossless chain must
 * reproduce (docs/prologue.md). On the emulated device the host compiler's float operations
 * are already single IEEE operations (no FMA contraction without an FMA target).
 *
 * conv_prologue_apply runs the chain the params carry (a switch per step: the direct
 * schedule's form); kernels that specialise a chain call the step functions themselves. */
#ifndef CONVND_PROLOGUE_CUH
#define CONVND_PROLOGUE_CUH

#include <stdint.h>
#include "conv_index.cuh"
#include "conv_params.h"

namespace CONVND_NS {

__host__ __device__ __forceinline__ float prologue_mul(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ __forceinline__ float prologue_add(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ __forceinline__ float prologue_div(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

/* v rounded to T once (to nearest even) and back: exact for f32. */
template <typename T> __host__ __device__ __forceinline__ float prologue_round(float v) {
    return convnd_to_f32(convnd_from_f32<T>(v));
}

/* The operands of one element's steps: r at its position, a and b at its (sample, channel). */
struct prologue_operands {
    float r, a, b;
};

/* The chain of p.prologue on v. */
template <typename T>
__host__ __device__ __forceinline__ float conv_prologue_apply(const convnd_prologue &pro, float v,
                                                              const prologue_operands &o) {
    for (int32_t i = 0; i < pro.num_steps; ++i) {
        const convnd_prologue_step &st = pro.steps[i];
        switch (st.op) {
        case CONVND_PRO_DIV_R:
            v = prologue_div(v, o.r);
            break;
        case CONVND_PRO_MUL_R:
            v = prologue_mul(v, o.r);
            break;
        case CONVND_PRO_MUL_SCALAR:
            v = prologue_mul(v, st.scalar);
            break;
        case CONVND_PRO_MUL_A:
            v = prologue_mul(v, o.a);
            break;
        case CONVND_PRO_ADD_B:
            v = prologue_add(v, o.b);
            break;
        case CONVND_PRO_FMA_AB:
            v = fmaf(v, o.a, o.b);
            break;
        case CONVND_PRO_ACT:
            v = conv_activate((int32_t)st.act, v);
            break;
        }
        if (st.round) v = prologue_round<T>(v);
    }
    return v;
}

/* r at sample n, position (i0, i1, i2) of x's own frame (0 when no step reads it). */
template <typename Idx>
__host__ __device__ __forceinline__ float prologue_r_at(const convnd_conv_params &p, const float *r,
                                                        Idx n, Idx i0, Idx i1, Idx i2) {
    return r ? r[conv_offset<Idx>(p.rs, n, (Idx)0, i0, i1, i2)] : 0.0f;
}

/* a and b of (n, c) into o (each 0 when no step reads it). */
template <typename Idx>
__host__ __device__ __forceinline__ void prologue_ab_at(const convnd_conv_params &p, const float *a,
                                                        const float *b, Idx n, Idx c,
                                                        prologue_operands &o) {
    const Idx at = p.prologue.ab_per_sample ? n * (Idx)p.C_in + c : c;
    o.a = a ? a[at] : 0.0f;
    o.b = b ? b[at] : 0.0f;
}

} // namespace CONVND_NS

#endif
