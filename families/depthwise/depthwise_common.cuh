/* Device helpers shared by the depthwise and grouped kernels: 16-byte channel vectors, the
 * vector epilogue, spatial items (n, o0, o1, a run along W) and the staging of weights by kernel
 * rows into shared memory. Include after "portability.cuh" and "conv_index.cuh". */
#ifndef CONVND_DEPTHWISE_COMMON_CUH
#define CONVND_DEPTHWISE_COMMON_CUH

#include "conv_index.cuh"
#include "depthwise_configs.h"

namespace CONVND_NS {

/* Elements of T in 16 bytes: the channels a depthwise thread owns (convnd_dw_vec on the host). */
template <typename T> struct dw_vec_width { static constexpr int value = 16 / (int)sizeof(T); };

/* ---- 16-byte vectors ------------------------------------------------------------------------ */

/* Elements from and to their bits, so 16-byte vectors are unpacked in registers (a memcpy
 * into a local array puts the array in local memory on the GPU). */
#if defined(CONVND_EMU) && CONVND_EMU
inline float dw_from_bits(unsigned b, float *) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
inline convnd_half dw_from_bits(unsigned b, convnd_half *) {
    return convnd_half{(uint16_t)b};
}
inline convnd_bf16 dw_from_bits(unsigned b, convnd_bf16 *) {
    return convnd_bf16{(uint16_t)b};
}
inline unsigned dw_to_bits(float f) {
    unsigned b;
    memcpy(&b, &f, sizeof b);
    return b;
}
inline unsigned dw_to_bits(convnd_half h) {
    return h.bits;
}
inline unsigned dw_to_bits(convnd_bf16 h) {
    return h.bits;
}
#else
__device__ __forceinline__ float dw_from_bits(unsigned b, float *) {
    return __uint_as_float(b);
}
__device__ __forceinline__ convnd_half dw_from_bits(unsigned b, convnd_half *) {
    return __ushort_as_half((unsigned short)b);
}
__device__ __forceinline__ convnd_bf16 dw_from_bits(unsigned b, convnd_bf16 *) {
    return __ushort_as_bfloat16((unsigned short)b);
}
__device__ __forceinline__ unsigned dw_to_bits(float f) {
    return __float_as_uint(f);
}
__device__ __forceinline__ unsigned dw_to_bits(convnd_half h) {
    return __half_as_ushort(h);
}
__device__ __forceinline__ unsigned dw_to_bits(convnd_bf16 h) {
    return __bfloat16_as_ushort(h);
}
#endif

/* One 16-byte store of 4 words at p (16-byte aligned). On the GPU as inline PTX: given a uint4
 * store, nvcc 13.0 splits it into four 4-byte stores in the 64-bit-index kernels. */
#if defined(CONVND_EMU) && CONVND_EMU
template <typename T> inline void dw_store_words(T *p, const unsigned (&words)[4]) {
    convnd_st_vec(reinterpret_cast<uint4 *>(p), make_uint4(words[0], words[1], words[2], words[3]));
}
#else
template <typename T>
__device__ __forceinline__ void dw_store_words(T *p, const unsigned (&words)[4]) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(words[0]),
                 "r"(words[1]), "r"(words[2]), "r"(words[3])
                 : "memory");
}
#endif

/* Element i of a 16-byte vector held as 4 words (little endian: element 2q is word q's low
 * half for 16-bit T). */
template <typename T>
__device__ __forceinline__ float dw_unpack(const unsigned (&words)[4], int i) {
    if constexpr (sizeof(T) == 4) {
        return dw_from_bits(words[i], (float *)nullptr);
    } else {
        const unsigned b = i % 2 ? words[i / 2] >> 16 : words[i / 2] & 0xFFFFu;
        return convnd_to_f32(dw_from_bits(b, (T *)nullptr));
    }
}

/* VEC elements of T at p (16-byte aligned) as f32: one 128-bit load. */
template <typename T, int VEC>
__device__ __forceinline__ void dw_load16(const T *p, float (&v)[VEC]) {
    static_assert(VEC * sizeof(T) == 16, "a 16-byte vector");
    const uint4 raw = convnd_ld_vec(reinterpret_cast<const uint4 *>(p));
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
    CONVND_UNROLL(16)
    for (int j = 0; j < VEC; ++j)
        v[j] = dw_unpack<T>(words, j);
}

/* v rounded once to T, stored with one 128-bit store at p (16-byte aligned). */
template <typename T, int VEC>
__device__ __forceinline__ void dw_store16(T *p, const float (&v)[VEC]) {
    static_assert(VEC * sizeof(T) == 16, "a 16-byte vector");
    unsigned words[4];
    CONVND_UNROLL(4)
    for (int q = 0; q < 4; ++q) {
        if constexpr (sizeof(T) == 4)
            words[q] = dw_to_bits(v[q]);
        else
            words[q] = dw_to_bits(convnd_from_f32<T>(v[2 * q])) |
                       dw_to_bits(convnd_from_f32<T>(v[2 * q + 1])) << 16;
    }
    dw_store_words(p, words);
}

/* N floats of shared memory at p (16-byte aligned, N a multiple of 4) with 128-bit loads. */
template <int N> __device__ __forceinline__ void dw_lds(const float *p, float (&v)[N]) {
    static_assert(N % 4 == 0, "whole float4s");
    CONVND_UNROLL(16)
    for (int q = 0; q < N / 4; ++q) {
        const float4 f = convnd_ld_vec(reinterpret_cast<const float4 *>(p) + q);
        v[4 * q] = f.x;
        v[4 * q + 1] = f.y;
        v[4 * q + 2] = f.z;
        v[4 * q + 3] = f.w;
    }
}

/* ---- a thread's channel vector in x ------------------------------------------------------- */

/* Where a thread's lanes (output channels co0 + j) read x: input channel (co0 + j) / M for a
 * channel multiplier M, i.e. x offset base + delta[j] * (x's channel stride). 32-bit deltas keep
 * the per-lane state small in 64-bit index kernels. */
template <typename Idx, int VEC> struct dw_lane_channels {
    Idx base;
    int delta[VEC];
    int lanes; /* lanes with a channel (< VEC only in the last vector) */
};

template <typename Idx, int VEC>
__device__ __forceinline__ dw_lane_channels<Idx, VEC>
dw_lane_channels_for(const convnd_conv_params &p, Idx co0) {
    dw_lane_channels<Idx, VEC> r;
    const Idx M = (Idx)p.cout_g, ci0 = co0 / M, C_out = (Idx)p.C_out;
    r.base = ci0 * (Idx)p.xs[1];
    CONVND_UNROLL(16)
    for (int j = 0; j < VEC; ++j)
        r.delta[j] = (int)((co0 + (Idx)j) / M - ci0);
    r.lanes = co0 < C_out ? (int)(C_out - co0 < VEC ? C_out - co0 : (Idx)VEC) : 0;
    return r;
}

/* The lanes' input vector at W position i2 of row xrow: zeros in the padding, or when xrow is
 * null (a row in the padding of the leading dims). VECIO: one 16-byte load. */
template <typename T, typename Idx, int VEC, bool VECIO>
__device__ __forceinline__ void dw_load_lanes(const convnd_conv_params &p, const T *xrow,
                                              const dw_lane_channels<Idx, VEC> &lc, Idx i2,
                                              float (&v)[VEC]) {
    if (!xrow || i2 < 0 || i2 >= (Idx)p.in[2]) {
        CONVND_UNROLL(16)
        for (int j = 0; j < VEC; ++j)
            v[j] = 0.0f;
        return;
    }
    const T *q = xrow + i2 * (Idx)p.xs[4] + lc.base;
    if constexpr (VECIO) {
        dw_load16<T, VEC>(q, v);
    } else {
        CONVND_UNROLL(16)
        for (int j = 0; j < VEC; ++j)
            v[j] = j < lc.lanes ? conv_load(q, (Idx)lc.delta[j] * (Idx)p.xs[1]) : 0.0f;
    }
}

/* ---- the epilogue on a channel vector -------------------------------------------------------- */

/* Finishes VEC consecutive output channels c0.. at y_off (lanes >= n are not stored). VECIO:
 * bias, z and y are read and written with 16-byte accesses (the launcher checked alignment and
 * that all VEC lanes exist); else element by element through conv_finish. */
template <typename T, typename Idx, int VEC, bool VECIO>
__device__ __forceinline__ void dw_finish_vec(const convnd_conv_params &p, const float (&acc)[VEC],
                                              const T *bias, const T *z, T *y, Idx c0, Idx y_off,
                                              int n) {
    if constexpr (VECIO) {
        float b[VEC], zv[VEC], out[VEC];
        if (p.has_bias)
            dw_load16<T, VEC>(bias + c0, b);
        else
            for (int j = 0; j < VEC; ++j)
                b[j] = 0.0f;
        if (conv_reads_z(p))
            dw_load16<T, VEC>(z + y_off, zv);
        else
            for (int j = 0; j < VEC; ++j)
                zv[j] = 0.0f;
        CONVND_UNROLL(16)
        for (int j = 0; j < VEC; ++j)
            out[j] = conv_epilogue_values(p, acc[j], b[j], zv[j]);
        dw_store16<T, VEC>(y + y_off, out);
    } else {
        const Idx cs = (Idx)p.ys[1];
        CONVND_UNROLL(16)
        for (int j = 0; j < VEC; ++j)
            if (j < n) conv_finish<T, Idx>(p, acc[j], bias, z, y, c0 + (Idx)j, y_off + (Idx)j * cs);
    }
}

/* ---- spatial items -------------------------------------------------------------------------- */

/* A run of outputs along W starting at ow0, in row (n, o0, o1). */
template <typename Idx> struct dw_item { Idx n, o0, o1, ow0; };

/* Item number `item` of N * O0 * O1 * runs, runs of run_len along W fastest (neighbouring
 * threads touch neighbouring memory). */
template <typename Idx>
__device__ __forceinline__ dw_item<Idx> dw_decode_item(const convnd_conv_params &p, Idx item,
                                                       Idx runs, Idx run_len) {
    dw_item<Idx> r;
    r.ow0 = (item % runs) * run_len;
    item /= runs;
    r.o1 = item % (Idx)p.out[1];
    item /= (Idx)p.out[1];
    r.o0 = item % (Idx)p.out[0];
    r.n = item / (Idx)p.out[0];
    return r;
}

/* ---- weights staged by kernel rows ----------------------------------------------------------- */

/* Stages the weights of kernel rows [row0, row0 + nrows) (row = k0 * K1 + k1, all K2 taps) of
 * the block's units into smem as [row - row0][k2][ci][unit][lane] floats: cin_per_unit input
 * channels, `lanes` output channels per unit. Units::co(unit, lane) is the output channel of a
 * lane, or -1 where the unit has none (zero weight). Block-wide; the caller synchronizes. */
template <typename T, typename Idx, typename Units>
__device__ __forceinline__ void dw_stage_weight_rows(const convnd_conv_params &p,
                                                     const T *__restrict__ w, float *smem, int row0,
                                                     int nrows, const Units &units, Idx unit0,
                                                     int block_units, int lanes, int cin_per_unit) {
    const int K1 = (int)p.k[1], K2 = (int)p.k[2];
    const int total = nrows * K2 * cin_per_unit * block_units * lanes;
    const int nthreads = (int)(blockDim.x * blockDim.y);
    for (int i = (int)(threadIdx.y * blockDim.x + threadIdx.x); i < total; i += nthreads) {
        int rest = i;
        const int lane = rest % lanes;
        rest /= lanes;
        const int u = rest % block_units;
        rest /= block_units;
        const int ci = rest % cin_per_unit;
        rest /= cin_per_unit;
        const int k2 = rest % K2;
        const int row = row0 + rest / K2;
        const Idx co = units.co(unit0 + (Idx)u, lane);
        smem[i] = co >= 0 ? conv_load(w, conv_offset<Idx>(p.ws, co, (Idx)ci, (Idx)(row / K1),
                                                          (Idx)(row % K1), (Idx)k2))
                          : 0.0f;
    }
}

/* ---- the staged-rows skeleton of depthwise_cl and grouped ----------------------------------- */

/* What both kernels are launched with: N * O0 * O1 * runs spatial items (runs = ceil(O2 / R)),
 * and how the weights are staged (convnd_unit_geometry). */
struct dw_rows_args {
    int64_t items, runs;
    int32_t rows_per_stage, staged_once;
};

/* The launch values for runs of R along W on geo, and the grid's item groups (at most 65535:
 * the item loop strides over the rest). Host side. */
template <int R>
inline dw_rows_args dw_rows_args_for(const convnd_conv_params &p, const convnd_unit_geometry &geo,
                                     unsigned *item_groups) {
    dw_rows_args g;
    g.runs = (p.out[2] + R - 1) / R;
    g.items = p.N * p.out[0] * p.out[1] * g.runs;
    g.rows_per_stage = geo.rows_per_stage;
    g.staged_once = geo.staged_once;
    const int64_t groups = (g.items + geo.ty - 1) / geo.ty;
    *item_groups = (unsigned)(groups > 65535 ? 65535 : groups);
    return g;
}

/* Block (tx units) x (ty items); grid (unit chunks) x (item groups, strided). Stages the block's
 * weights by kernel rows (all at once, or rows_per_stage at a time between barriers), and for
 * each item of R outputs along W accumulates into acc[R][NCH]: row(rl, xrow_offset, at, acc) for
 * each kernel row (rl: its index in the stage) that lands inside the input, xrow_offset being
 * x's offset of (n, i0, i1); then finish(at, acc). The item loop is block-uniform so that every
 * thread reaches the stage barriers; inactive threads (no item, no lanes) skip the work only.
 * PASSES > 1: each item is accumulated PASSES times over all kernel rows, NCH channels per pass
 * (row(pass, rl, ...), finish(pass, at, acc)); a stage that does not hold every row is staged
 * again for each pass. */
template <typename T, typename Idx, int R, int NCH, int PASSES = 1, typename Units, typename Row,
          typename Finish>
__device__ __forceinline__ void
dw_staged_rows(const convnd_conv_params &p, const T *__restrict__ w, float *wsm,
               const dw_rows_args &g, const Units &units, Idx unit0, int lanes_per_unit,
               int cin_per_unit, bool has_lanes, Row row, Finish finish) {
    const int txn = (int)blockDim.x;
    const int rows = (int)(p.k[0] * p.k[1]), K1 = (int)p.k[1];
    if (g.staged_once) {
        dw_stage_weight_rows<T, Idx>(p, w, wsm, 0, rows, units, unit0, txn, lanes_per_unit,
                                     cin_per_unit);
        __syncthreads();
    }
    const Idx items = (Idx)g.items, runs = (Idx)g.runs;
    const Idx step = (Idx)gridDim.y * (Idx)blockDim.y;
    for (Idx base = (Idx)blockIdx.y * (Idx)blockDim.y; base < items; base += step) {
        const Idx item = base + (Idx)threadIdx.y;
        const bool active = item < items && has_lanes;
        const dw_item<Idx> at = dw_decode_item<Idx>(p, active ? item : 0, runs, R);
        CONVND_UNROLL(2)
        for (int pass = 0; pass < PASSES; ++pass) {
            float acc[R][NCH];
            CONVND_UNROLL(16)
            for (int r = 0; r < R; ++r) {
                CONVND_UNROLL(16)
                for (int j = 0; j < NCH; ++j)
                    acc[r][j] = 0.0f;
            }
            for (int row0 = 0; row0 < rows; row0 += g.rows_per_stage) {
                const int nrows = rows - row0 < g.rows_per_stage ? rows - row0 : g.rows_per_stage;
                if (!g.staged_once) {
                    __syncthreads(); /* the previous stage is no longer read */
                    dw_stage_weight_rows<T, Idx>(p, w, wsm, row0, nrows, units, unit0, txn,
                                                 lanes_per_unit, cin_per_unit);
                    __syncthreads();
                }
                if (!active) continue;
                for (int rl = 0; rl < nrows; ++rl) {
                    const int kr = row0 + rl;
                    Idx i0, i1;
                    if (!conv_forward_input<Idx>(at.o0, kr / K1, p.s[0], p.d[0], p.p0[0], p.in[0],
                                                 i0) ||
                        !conv_forward_input<Idx>(at.o1, kr % K1, p.s[1], p.d[1], p.p0[1], p.in[1],
                                                 i1))
                        continue;
                    const Idx x_off = at.n * (Idx)p.xs[0] + i0 * (Idx)p.xs[2] + i1 * (Idx)p.xs[3];
                    if constexpr (PASSES == 1)
                        row(rl, x_off, at, acc);
                    else
                        row(pass, rl, x_off, at, acc);
                }
            }
            if (active) {
                if constexpr (PASSES == 1)
                    finish(at, acc);
                else
                    finish(pass, at, acc);
            }
        }
    }
}

} // namespace CONVND_NS

#endif
