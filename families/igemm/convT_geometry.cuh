/* The phase (sub-pixel) decomposition of a transposed convolution into forward implicit GEMMs.
 *
 * One dimension is computed once, in plain C, by convT_phase.h.
 *
 * Derivation, per spatial dimension (SPEC §3: output o gets x[i] * w[k] for every (i, k) with
 * i*S + k*D - P0 = o). Write o = q*S + r with the phase r = o mod S. Then
 *   i*S = q*S + r + P0 - k*D,
 * so tap k reaches phase r iff k*D = r + P0 (mod S) (a true modulo: P0 may be negative), and
 * then i = q + (r + P0 - k*D) / S, an exact division. With g = gcd(S, D) the congruence has
 * solutions iff g divides r + P0 (mod S), and they are k0, k0 + kappa, k0 + 2*kappa, ... with
 * kappa = S/g: phase r has T = ceil((K - k0) / kappa) taps (T = 0 when no k in [0, min(K, S))
 * solves it, e.g. K < S, or g not dividing r + P0), and consecutive taps move the input by
 * -kappa*D/S = -D/g. Walking them from the last one, k_last = k0 + (T-1)*kappa, downwards
 * (step j = 0..T-1 takes k = k_last - j*kappa):
 *   i = q - P0' + j*D',   D' = D/g,   P0' = (k_last*D - r - P0) / S,
 * a forward convolution of stride 1, dilation D', padding P0' and T taps over the phase's
 * outputs q < O_r = ceil((O - r) / S). So each phase is the forward implicit GEMM
 * (igemm_geometry.cuh) with the weight read transposed ([C_in, C_out/g, K...]: the GEMM's
 * columns are the weight's second index) and flipped (tap stride -kappa from k_last):
 *   M = N * prod(O_r)   N = C_out/g   K = (C_in/g) * prod(T),  one GEMM per (phase, group).
 * Outputs that no tap reaches (negative P1 extending the result, phases with T = 0) read only
 * out-of-range inputs or nothing, and get the epilogue alone (SPEC §3's bias-only extension).
 *
 * Stride 1: one phase, kappa = 1, D' = D, k_last = K-1, P0' = (K-1)*D - P0 = E-1-P0: the forward
 * convolution with a flipped kernel and padding E-1-P0 (the far side E-1-P1 follows from O).
 *
 * One grid runs every phase: blockIdx.x walks the phases' row blocks, phase after phase, the
 * phases sorted by taps, most first. A block's k-loop is its own phase's (prod(T) taps), and the
 * GPU starts blocks in index order, so the long blocks start first and the short ones (down to
 * epilogue-only phases) fill the tail: longest-processing-time-first balancing.
 *
 * The tables travel in the kernel's parameters (convT_limits.h bounds them); each block finds
 * its phase with a binary search and builds its igemm_geometry from them. */
#ifndef CONVND_CONVT_GEOMETRY_CUH
#define CONVND_CONVT_GEOMETRY_CUH

#include <stdint.h>
#include "conv_params.h"
#include "convT_limits.h"
#include "convT_phase.h"
#include "igemm_geometry.cuh"

namespace CONVND_NS {

/* One residue r of one dimension. */
struct convT_dim_phase {
    int32_t O;     /* outputs o = q*S + r, q < O */
    int32_t P0;    /* forward-view padding P0' */
    int32_t T;     /* taps */
    int32_t w_off; /* weight offset of tap k_last along this dim (0 when T = 0) */
    int32_t y_off; /* y offset of o = r along this dim */
};

struct convT_phases {
    /* What every phase shares: S = 1, D', I, x strides, the weight's strides as the forward
     * B loader walks them (ws[0]: next output channel, ws[1]: next input channel, ws[2+t]: next
     * tap, -kappa*w_stride), y's strides times S. M, O, P0, K and ktiles are per phase. */
    igemm_geometry g;
    int32_t N, chunks; /* chunks of BK input channels */
    int32_t count;     /* phases with outputs */
    /* heavy first: blocks [first_block[i], first_block[i+1]) run phase residue[i] */
    int32_t first_block[CONVND_CONVT_MAX_PHASES + 1];
    int32_t residue[CONVND_CONVT_MAX_PHASES]; /* r0 | r1 << 8 | r2 << 16 */
    convT_dim_phase dim[3][CONVND_CONVT_MAX_STRIDE];
};

/* ---- host side ------------------------------------------------------------------------------ */

/* The residue r of one dimension t. */
__host__ inline convT_dim_phase convT_make_dim_phase(const convnd_conv_params &p, int t,
                                                     int64_t r) {
    const convnd_convT_dim d = convnd_convT_dim_phase(p.s[t], p.d[t], p.k[t], p.p0[t], p.out[t], r);
    convT_dim_phase e;
    e.O = (int32_t)d.O;
    e.T = (int32_t)d.T;
    e.P0 = (int32_t)d.P0;
    e.w_off = (int32_t)(d.k_last * p.ws[2 + t]);
    e.y_off = (int32_t)(r * p.ys[2 + t]);
    return e;
}

/* The tables for tiles of BM rows and BK channels. The caller checked the limits
 * (convT_limits.h) and 32-bit indexing (conv_needs_index64). */
__host__ inline convT_phases convT_make_phases(const convnd_conv_params &p, int bm, int bk) {
    convT_phases ph;
    memset(&ph, 0, sizeof ph);
    igemm_geometry &g = ph.g;
    g.cin_g = (int32_t)p.cin_g;
    g.cout_g = (int32_t)p.cout_g;
    g.ws[0] = (int32_t)p.ws[1];
    g.ws[1] = (int32_t)p.ws[0];
    g.xs[0] = (int32_t)p.xs[0];
    g.xs[1] = (int32_t)p.xs[1];
    g.ys[0] = (int32_t)p.ys[0];
    g.ys[1] = (int32_t)p.ys[1];
    for (int t = 0; t < 3; ++t) {
        const int64_t gcd = convnd_gcd64(p.s[t], p.d[t]);
        g.S[t] = 1;
        g.D[t] = (int32_t)(p.d[t] / gcd);
        g.I[t] = (int32_t)p.in[t];
        g.xs[2 + t] = (int32_t)p.xs[2 + t];
        g.ws[2 + t] = (int32_t)(-(p.s[t] / gcd) * p.ws[2 + t]);
        g.ys[2 + t] = (int32_t)(p.s[t] * p.ys[2 + t]);
        for (int64_t r = 0; r < p.s[t]; ++r)
            ph.dim[t][r] = convT_make_dim_phase(p, t, r);
    }
    ph.N = (int32_t)p.N;
    ph.chunks = (int32_t)((p.cin_g + bk - 1) / bk);

    /* the phases with outputs, with their tap counts and row blocks */
    int32_t taps[CONVND_CONVT_MAX_PHASES], blocks[CONVND_CONVT_MAX_PHASES];
    for (int64_t r0 = 0; r0 < p.s[0]; ++r0)
        for (int64_t r1 = 0; r1 < p.s[1]; ++r1)
            for (int64_t r2 = 0; r2 < p.s[2]; ++r2) {
                const convT_dim_phase &a = ph.dim[0][r0], &b = ph.dim[1][r1], &c = ph.dim[2][r2];
                const int64_t m = p.N * a.O * b.O * c.O;
                if (m == 0) continue;
                const int32_t i = ph.count++;
                ph.residue[i] = (int32_t)(r0 | r1 << 8 | r2 << 16);
                taps[i] = a.T * b.T * c.T;
                blocks[i] = (int32_t)((m + bm - 1) / bm);
            }
    /* heavy first (insertion sort: at most 64, stable) */
    for (int32_t i = 1; i < ph.count; ++i)
        for (int32_t j = i; j > 0 && taps[j - 1] < taps[j]; --j) {
            const int32_t t = taps[j], b = blocks[j], r = ph.residue[j];
            taps[j] = taps[j - 1], blocks[j] = blocks[j - 1], ph.residue[j] = ph.residue[j - 1];
            taps[j - 1] = t, blocks[j - 1] = b, ph.residue[j - 1] = r;
        }
    for (int32_t i = 0; i < ph.count; ++i)
        ph.first_block[i + 1] = ph.first_block[i] + blocks[i];
    return ph;
}

/* Blocks of the whole grid along x. */
__host__ inline int32_t convT_row_blocks(const convT_phases &ph) {
    return ph.first_block[ph.count];
}

/* ---- device side ---------------------------------------------------------------------------- */

/* A phase's geometry: what igemm_block_tile reads, and the weight offset of the phase's first
 * tap (k_last), which only convT's B loaders read (convT_of: they receive this object as the
 * igemm_geometry it derives from). Folding it into each thread's row base, as y's offset is
 * folded into the row offsets, keeps w, y and z the kernel's parameters rather than registers. */
struct convT_geometry : igemm_geometry {
    int32_t w_base;
};

__device__ __forceinline__ const convT_geometry &convT_of(const igemm_geometry &g) {
    return static_cast<const convT_geometry &>(g);
}

/* Block bx's phase: its geometry, first GEMM row, and the offset of its first output in y. */
struct convT_block {
    convT_geometry g;
    int32_t m0, y_off;
};

__device__ __forceinline__ convT_block convT_locate(const convT_phases &ph, int32_t bx, int bm) {
    /* the last phase whose first block is <= bx (first_block[0] = 0) */
    int32_t lo = 0, hi = ph.count - 1;
    while (lo < hi) {
        const int32_t mid = (lo + hi + 1) / 2;
        if (ph.first_block[mid] <= bx)
            lo = mid;
        else
            hi = mid - 1;
    }
    convT_block b;
    static_cast<igemm_geometry &>(b.g) = ph.g;
    b.m0 = (bx - ph.first_block[lo]) * bm;
    b.g.w_base = b.y_off = 0;
    const int32_t residue = ph.residue[lo];
    int32_t m = ph.N, taps = ph.chunks;
    CONVND_UNROLL(3)
    for (int t = 0; t < 3; ++t) {
        const convT_dim_phase &e = ph.dim[t][(residue >> (8 * t)) & 0xff];
        b.g.O[t] = e.O;
        b.g.P0[t] = e.P0;
        b.g.K[t] = e.T;
        b.g.w_base += e.w_off;
        b.y_off += e.y_off;
        m *= e.O;
        taps *= e.T;
    }
    b.g.M = m;
    b.g.ktiles = taps;
    igemm_set_x_deltas(b.g); /* from the phase's K */
    return b;
}

} // namespace CONVND_NS

#endif
