/* The implicit-GEMM view of a forward convolution (SPEC §2), in 32-bit integers.
 *
 *   GEMM rows    m = (n, o0, o1, o2)               M = N * prod(O)
 *   GEMM columns n = output channel within a group  cout_g
 *   reduction    k = (tap k0, k1, k2; channel ci)   cin_g * prod(K), channels innermost
 *   one GEMM per group: blockIdx.z
 *
 * The reduction runs tap by tap, BK channels at a time (a "k-tile" is one tap and BK channels),
 * so a channels-last tile row is BK contiguous elements of x and of w. Padding, stride,
 * dilation, negative padding and tails are predicates on the gathered rows: an out-of-range
 * input (or a channel/row past the end) is a zero in shared memory, never a read.
 *
 * Launchers build this once on the host from convnd_conv_params; the schedule refuses problems
 * that need 64-bit indices (conv_needs_index64), so every value here fits int32. */
#ifndef CONVND_IGEMM_GEOMETRY_CUH
#define CONVND_IGEMM_GEOMETRY_CUH

#include <stdint.h>
#include "conv_params.h"
#include "io_axis.cuh"

namespace CONVND_NS {

struct igemm_geometry {
    int32_t M;             /* GEMM rows: N * O0 * O1 * O2 */
    int32_t cin_g, cout_g; /* per group */
    int32_t ktiles;        /* taps * chunks */
    int32_t O[3], I[3], S[3], D[3], P0[3], K[3];
    int32_t xs[5], ws[5], ys[5];
    /* x's offset steps between consecutive taps (igemm_k_iter::x_tap), modulo 2^32: xd[2] one
     * tap along k2, xd[1] along k1 with k2 wrapping to 0, xd[0] along k0 with k1 and k2
     * wrapping (igemm_set_x_deltas; exact in int32 where the vector path runs:
     * igemm_x_offsets_fit32). */
    uint32_t xd[3];
};

/* Widest filter extent (per dimension) that the vector A loader's tap masks cover: bit t of a
 * row's mask along dimension d says tap t is inside [0, I_d). Wider filters take the gather
 * path (igemm_pick_path, convT_pick_path), which compares coordinates instead. */
#define CONVND_IGEMM_MASK_TAPS 32

/* The tap deltas of g from its K, D and xs (host for the forward kernels, device for the
 * transposed ones, whose per-phase K is set per block). Modulo 2^32, as x_tap is stepped: a
 * problem whose tap terms exceed int32 (it never takes the vector path, which alone reads
 * them: igemm_x_offsets_fit32) wraps without overflow. */
__host__ __device__ inline void igemm_set_x_deltas(igemm_geometry &g) {
    uint32_t step[3], back[3]; /* one tap along d; from tap K_d - 1 back to tap 0 */
    for (int d = 0; d < 3; ++d) {
        step[d] = (uint32_t)g.D[d] * (uint32_t)g.xs[2 + d];
        back[d] = (uint32_t)(g.K[d] - 1) * step[d];
    }
    g.xd[2] = step[2];
    g.xd[1] = step[1] - back[2];
    g.xd[0] = step[0] - back[1] - back[2];
}

/* Whether every partial sum the vector A loader forms fits int32: a row's base (batch, group
 * and its origin o*S - P0, which padding puts outside x), the tap term and the deltas. Each is
 * a sum of coordinates times x's strides, the coordinates within the extents below (spatial:
 * the input plus both paddings, the filter span and, for the transposed phases, the output),
 * so the sum of |stride| x extent bounds them all. Problems past it gather (a uniform
 * fallback, never a refusal); conv_needs_index64 already bounds each extent by 2^30. */
__host__ inline bool igemm_offsets_fit32(const convnd_conv_params &p, const int64_t (&strides)[5]) {
    const int64_t limit = INT32_MAX;
    int64_t ext[5] = {p.N, p.cin_g * p.groups, 0, 0, 0};
    for (int d = 0; d < 3; ++d)
        ext[2 + d] = p.in[d] + (p.p0[d] < 0 ? -p.p0[d] : p.p0[d]) +
                     (p.p1[d] < 0 ? -p.p1[d] : p.p1[d]) + p.k[d] * p.d[d] + p.out[d];
    int64_t sum = 0;
    for (int i = 0; i < 5; ++i) {
        const int64_t s = strides[i] < 0 ? -strides[i] : strides[i];
        if (s != 0 && ext[i] > limit / s) return false;
        sum += s * ext[i];
        if (sum > limit) return false;
    }
    return true;
}

__host__ inline bool igemm_x_offsets_fit32(const convnd_conv_params &p) {
    return igemm_offsets_fit32(p, p.xs);
}

/* Whether the vector x loader (masks and incremental offsets) can take the problem: every filter
 * extent within CONVND_IGEMM_MASK_TAPS and every partial offset within int32. The forward
 * (igemm_pick_path) and transposed (convT_pick_path) launchers gather otherwise. */
__host__ inline bool igemm_x_loader_fits(const convnd_conv_params &p) {
    for (int t = 0; t < 3; ++t)
        if (p.k[t] > CONVND_IGEMM_MASK_TAPS) return false;
    return igemm_x_offsets_fit32(p);
}

__host__ inline igemm_geometry igemm_make_geometry(const convnd_conv_params &p, int bk) {
    igemm_geometry g;
    g.M = (int32_t)(p.N * p.out[0] * p.out[1] * p.out[2]);
    g.cin_g = (int32_t)p.cin_g;
    g.cout_g = (int32_t)p.cout_g;
    const int64_t chunks = (p.cin_g + bk - 1) / bk;
    g.ktiles = (int32_t)(chunks * p.k[0] * p.k[1] * p.k[2]);
    for (int t = 0; t < 3; ++t) {
        g.O[t] = (int32_t)p.out[t];
        g.I[t] = (int32_t)p.in[t];
        g.S[t] = (int32_t)p.s[t];
        g.D[t] = (int32_t)p.d[t];
        g.P0[t] = (int32_t)p.p0[t];
        g.K[t] = (int32_t)p.k[t];
    }
    for (int i = 0; i < 5; ++i) {
        g.xs[i] = (int32_t)p.xs[i];
        g.ws[i] = (int32_t)p.ws[i];
        g.ys[i] = (int32_t)p.ys[i];
    }
    igemm_set_x_deltas(g);
    return g;
}

/* The prefix kernel's (igemm_io_kernel) view of SPEC §12 and §14: I[io_dim] above counts X =
 * cat(prefix, x, suffix); along padded dim io_dim the first prefix_len positions are the
 * prefix's (strides ps), the next x_len x's, the rest the suffix's (strides fs). An empty struct
 * stands for "no prefix" (igemm_block_tile's default). */
struct igemm_io_geometry {
    const void *prefix, *suffix;
    int32_t io_dim, prefix_len, x_len;
    int32_t ps[5], fs[5];
};
struct igemm_no_io {};

__host__ inline igemm_io_geometry igemm_make_io_geometry(const convnd_conv_params &p,
                                                         const void *prefix, const void *suffix) {
    igemm_io_geometry io;
    io.prefix = prefix;
    io.suffix = suffix;
    io.io_dim = p.io_dim;
    io.prefix_len = (int32_t)p.prefix_len;
    io.x_len = (int32_t)io_axis_x_len(p);
    for (int i = 0; i < 5; ++i) {
        io.ps[i] = (int32_t)p.ps[i];
        io.fs[i] = (int32_t)p.fs[i];
    }
    return io;
}

/* Input coordinates that mark a row as absent (past M): far enough below zero that adding any
 * k*D (< 2^30, see conv_needs_index64) stays negative, so every tap's range check fails. */
#define CONVND_IGEMM_ABSENT_ROW (-(1 << 30))

/* A GEMM row split into its batch index and output coordinates. */
struct igemm_row {
    int32_t n, o[3];
};

__device__ __forceinline__ igemm_row igemm_split_row(const igemm_geometry &g, int32_t m) {
    igemm_row r;
    r.o[2] = m % g.O[2];
    m /= g.O[2];
    r.o[1] = m % g.O[1];
    m /= g.O[1];
    r.o[0] = m % g.O[0];
    r.n = m / g.O[0];
    return r;
}

/* Row m's origin in x, o*S - P0 along each dimension, into c, and its batch index into n; false
 * for a row past M (absent), whose origins are CONVND_IGEMM_ABSENT_ROW so that every tap's range
 * check fails (n is then unset). */
__device__ __forceinline__ bool igemm_row_origin(const igemm_geometry &g, int32_t m,
                                                 int32_t (&c)[3], int32_t &n) {
    c[0] = c[1] = c[2] = CONVND_IGEMM_ABSENT_ROW;
    if (m >= g.M) return false;
    const igemm_row r = igemm_split_row(g, m);
    for (int d = 0; d < 3; ++d)
        c[d] = r.o[d] * g.S[d] - g.P0[d];
    n = r.n;
    return true;
}

/* Where the k-tile being loaded sits: tap (t0, t1, t2) and first channel c0, and x_tap, the
 * tap's part of x's offset, t0*D0*xs2 + t1*D1*xs3 + t2*D2*xs4 modulo 2^32, stepped by the
 * geometry's deltas (xd) when the tap changes, as CUTLASS's "optimized" conv iterators step
 * theirs (loaders that do not read it leave it to dead-code elimination). The loads run
 * STAGES-1 tiles ahead of the math, so only the loaders walk this. */
struct igemm_k_iter {
    int32_t t[3], c0;
    uint32_t x_tap;

    __device__ __forceinline__ void start() {
        t[0] = t[1] = t[2] = c0 = 0;
        x_tap = 0;
    }

    /* Channels innermost, then taps k2, k1, k0 (the order of the weight's channels-last layout). */
    __device__ __forceinline__ void advance(const igemm_geometry &g, int bk) {
        c0 += bk;
        if (c0 < g.cin_g) return;
        c0 = 0;
        if (++t[2] < g.K[2]) {
            x_tap += g.xd[2];
            return;
        }
        t[2] = 0;
        if (++t[1] < g.K[1]) {
            x_tap += g.xd[1];
            return;
        }
        t[1] = 0;
        ++t[0];
        x_tap += g.xd[0];
    }
};

/* Bit 31 - t set for each tap t (t < K, at most CONVND_IGEMM_MASK_TAPS of them) of a row whose
 * origin along a dimension is c that lands inside [0, I): c + t * D, compared unsigned, so an
 * absent row's origin (far below 0) sets none. A left shift by t brings tap t's bit to the sign. */
__device__ __forceinline__ uint32_t igemm_tap_mask(int32_t c, int32_t K, int32_t D, int32_t I) {
    uint32_t bits = 0;
    for (int t = 0; t < K && t < CONVND_IGEMM_MASK_TAPS; ++t)
        if ((uint32_t)(c + t * D) < (uint32_t)I) bits |= 0x80000000u >> t;
    return bits;
}

} // namespace CONVND_NS

#endif
