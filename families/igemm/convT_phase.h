/* One dimension of the phase (sub-pixel) decomposition of a transposed convolution, in plain C:
 * the derivation is in convT_geometry.cuh, whose tables (convT_*.cu) and the Hopper tier's
 * per-phase tensor maps (hopper_igemm.cu, and its supports() in families/hopper_igemm/hopper_igemm.c) are
 * both built from this.
 *
 * Output o = q*S + r of residue r gets the taps k = k_last - j*kappa, j = 0..T-1, reading input
 * i = q - P0' + j*D': a forward convolution of stride 1, dilation D' and padding P0' over the
 * phase's outputs q < O. */
#ifndef CONVND_CONVT_PHASE_H
#define CONVND_CONVT_PHASE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_convT_dim {
    int64_t O;      /* outputs of the residue (0 when r >= the output size) */
    int64_t T;      /* taps reaching it (0: its outputs get the epilogue alone) */
    int64_t k_last; /* the first tap walked; j-th is k_last - j*kappa (0 when T = 0) */
    int64_t kappa;  /* tap step S / gcd(S, D) */
    int64_t D;      /* input step between consecutive taps D' = D / gcd(S, D) */
    int64_t P0;     /* forward-view padding P0' (0 when T = 0) */
} convnd_convT_dim;

static inline int64_t convnd_gcd64(int64_t a, int64_t b) {
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Residue r of a dimension with stride S, dilation D, kernel K, padding_before P0 and output
 * size O (SPEC §3). */
static inline convnd_convT_dim convnd_convT_dim_phase(int64_t S, int64_t D, int64_t K, int64_t P0,
                                                      int64_t O, int64_t r) {
    convnd_convT_dim e;
    const int64_t g = convnd_gcd64(S, D);
    e.kappa = S / g;
    e.D = D / g;
    e.O = r < O ? (O - r + S - 1) / S : 0;
    /* the first tap reaching r: solutions repeat every kappa <= S taps */
    int64_t k0 = -1;
    for (int64_t k = 0; k < K && k < S && k0 < 0; ++k)
        if (((k * D - r - P0) % S + S) % S == 0) k0 = k;
    e.T = k0 < 0 ? 0 : (K - 1 - k0) / e.kappa + 1;
    e.k_last = e.T ? k0 + (e.T - 1) * e.kappa : 0;
    e.P0 = e.T ? (e.k_last * D - r - P0) / S : 0;
    return e;
}

#ifdef __cplusplus
}
#endif

#endif
