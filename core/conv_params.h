/* The conv problem as kernels see it: every problem padded to 3 spatial dims (leading size-1
 * dims), layouts reduced to element strides over logical indices. Plain C so the host side
 * (schedules/, bind/) fills it and the .cu kernels read it; passed to kernels by value. */
#ifndef CONVND_CONV_PARAMS_H
#define CONVND_CONV_PARAMS_H

#include <stdint.h>

#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_conv_params {
    int32_t mode;       /* convnd_mode */
    int32_t dtype;      /* convnd_dtype */
    int32_t activation; /* convnd_activation */
    int32_t has_bias, has_z, allow_tf32;
    float alpha, beta;
    int64_t N, C_in, C_out, groups;
    int64_t cin_g, cout_g; /* C_in / groups, C_out / groups */
    /* spatial, padded to 3 dims: index 0 = D, 1 = H, 2 = W */
    int64_t in[3], out[3], k[3], s[3], d[3], p0[3], p1[3];
    /* element strides over logical indices:
     *   x: (n, c_in, i0, i1, i2)
     *   w: forward (c_out, c_in/g, k0, k1, k2); transposed (c_in, c_out/g, k0, k1, k2)
     *   y and z: (n, c_out, o0, o1, o2) */
    int64_t xs[5], ws[5], ys[5];
    int64_t zs[5]; /* z's, equal to ys unless z has its own view (SPEC §11) */
    int64_t x_numel, w_numel, y_numel;
    int32_t x_cl, w_cl, y_cl; /* 1 when channels-last */
    int32_t index64; /* 1: 64-bit indices (core/conv_params.c's rule: 2^30 elements or extents) */
    /* bits of core/problem_internal.h's CONVND_STRIDED_*: x, y or z not in its packed layout */
    int32_t strided;
    /* SPEC §12/§14: along padded spatial dim io_dim (0..2; -1: none) the conv reads X =
     * cat(prefix, x, suffix): in[io_dim] counts all three, the first prefix_len the prefix's, the
     * last suffix_len the suffix's; the state receives X's last state_len positions. Each
     * tensor is x's shape with its size there, strides ps, fs and ss. */
    int32_t io_dim;
    int64_t prefix_len, suffix_len, state_len, state_numel;
    int64_t ps[5], fs[5], ss[5];
    int32_t dims; /* the problem's spatial dims (1..3): its dim d is index 3 - dims + d here */
    /* SPEC §13: a stateful causal conv1d's sequences (kind 0: none; the causal_conv1d
     * schedule's) */
    convnd_sequences sequences;
    /* SPEC §15: the input prologue (num_steps 0: none), and r's element strides over (n, -, i0,
     * i1, i2) of x's own positions (r [N, I...] packed; along io_dim x starts prefix_len into
     * X); a and b are [C_in] or, with prologue.ab_per_sample, [N, C_in] */
    convnd_prologue prologue;
    int64_t rs[5];
} convnd_conv_params;

#ifdef __cplusplus
}
#endif

#endif
