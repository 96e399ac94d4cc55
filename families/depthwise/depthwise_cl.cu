/* Depthwise convolution (groups = C_in, C_out = multiplier * C_in), forward, 1/2/3-D: the
 * channels-last path of the depthwise schedule (configs cl_r4, cl_r8).
 *
 * A thread owns VEC consecutive output channels (16 bytes of T) and a run of R outputs along W
 * of one row (n, o0, o1). Channels-last x and y with a multiplier of 1 and 16-byte aligned
 * channel vectors move 16 bytes per load and store; anything else (other layouts, multipliers,
 * odd channel counts) takes the same loops element by element, so every depthwise problem runs.
 * For each kernel row (k0, k1) the R outputs' inputs slide through registers: with dilation 1
 * the taps k2 = ph, ph + S, ph + 2S... of a stride phase ph read inputs one step apart, so each
 * step loads one new input vector instead of R. The weights of the block's channels live in
 * shared memory as [tap][channel] floats (one 128-bit read per tap and 4 channels); large
 * kernels are staged a few rows at a time (families/depthwise/depthwise_configs.h).
 *
 * The common widths (CONVND_DW_CL_WIDTHS: 3, 5, 7, 9, 31 and the causal 2-4) with stride 1,
 * dilation 1 and 16-byte vectors have kernels of their own, the width KW a template argument
 * (dw_cl_row_fixed): the row's inputs pass through a ring of raw 16-byte registers whose slots
 * are fixed at compile time, so the window slides without moves, and each tap's next input is
 * loaded before the tap's FMAs. Other problems take the generic row (KW = 0). The 16-bit
 * 8-output kernels run in two halves of 4 channels (dw_cl_halves), element-wise ones too. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "depthwise_common.cuh"
#include "depthwise_configs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

/* Channel vectors as units: unit u is output channels u*VEC ... u*VEC + VEC - 1. */
template <typename Idx> struct dw_vector_units {
    Idx C_out;
    int vec;
    __device__ __forceinline__ Idx co(Idx unit, int lane) const {
        const Idx c = unit * (Idx)vec + (Idx)lane;
        return c < C_out ? c : (Idx)-1;
    }
};

/* Accumulates one kernel row: the K2 taps of R outputs ow0 .. ow0 + R - 1. wrow: the row's
 * staged weights of this thread's lanes, taps cb floats apart. */
template <typename T, typename Idx, int R, int VEC, bool VECIO>
__device__ __forceinline__ void dw_cl_row(const convnd_conv_params &p, const T *xrow,
                                          const dw_lane_channels<Idx, VEC> &lc, const float *wrow,
                                          int cb, Idx ow0, float (&acc)[R][VEC]) {
    const int K2 = (int)p.k[2];
    const Idx S = (Idx)p.s[2], D = (Idx)p.d[2], P = (Idx)p.p0[2], O = (Idx)p.out[2];
    float wv[VEC];
    if (D == 1) {
        /* stride phase ph: taps ph + S*t read input (ow0 + r + t)*S - P + ph for output r, so
         * step t's window is step t-1's shifted by one output */
        const int step = S < (Idx)K2 ? (int)S : K2; /* any step >= K2 ends a phase */
        for (int ph = 0; ph < step; ++ph) {
            float win[R][VEC];
            CONVND_UNROLL(8)
            for (int r = 0; r < R; ++r)
                dw_load_lanes<T, Idx, VEC, VECIO>(p, xrow, lc, conv_wrap_pos(ow0 + r, S, ph - P),
                                                  win[r]);
            for (int k2 = ph; k2 < K2; k2 += step) {
                if (k2 != ph) {
                    CONVND_UNROLL(8)
                    for (int r = 0; r + 1 < R; ++r) {
                        CONVND_UNROLL(16)
                        for (int j = 0; j < VEC; ++j)
                            win[r][j] = win[r + 1][j];
                    }
                    dw_load_lanes<T, Idx, VEC, VECIO>(
                        p, xrow, lc, conv_wrap_pos(ow0 + R - 1, S, k2 - P), win[R - 1]);
                }
                dw_lds<VEC>(wrow + k2 * cb, wv);
                CONVND_UNROLL(8)
                for (int r = 0; r < R; ++r) {
                    CONVND_UNROLL(16)
                    for (int j = 0; j < VEC; ++j)
                        acc[r][j] = fmaf(win[r][j], wv[j], acc[r][j]);
                }
            }
        }
    } else {
        float xv[VEC];
        for (int k2 = 0; k2 < K2; ++k2) {
            dw_lds<VEC>(wrow + k2 * cb, wv);
            CONVND_UNROLL(8)
            for (int r = 0; r < R; ++r) {
                dw_load_lanes<T, Idx, VEC, VECIO>(
                    p, xrow, lc, conv_clamp_out(ow0 + r, O) * S - P + (Idx)k2 * D, xv);
                CONVND_UNROLL(16)
                for (int j = 0; j < VEC; ++j)
                    acc[r][j] = fmaf(xv[j], wv[j], acc[r][j]);
            }
        }
    }
}

/* The lanes' raw 16-byte input vector at W position i2 of xrow (zeros in the padding): the
 * fixed-width rows keep inputs packed, 4 registers whatever T, and unpack them at the FMA. */
template <typename T, typename Idx, int VEC>
__device__ __forceinline__ uint4 dw_load_raw(const convnd_conv_params &p, const T *xrow,
                                             const dw_lane_channels<Idx, VEC> &lc, Idx i2) {
    if (i2 < 0 || i2 >= (Idx)p.in[2]) return make_uint4(0u, 0u, 0u, 0u);
    return convnd_ld_vec(reinterpret_cast<const uint4 *>(xrow + i2 * (Idx)p.xs[4] + lc.base));
}

/* Element j of a raw 16-byte vector as f32, recomputed at every use: on the GPU the 16-bit
 * unpack is opaque inline PTX, so the compiler cannot keep unpacked copies of the window alive
 * across taps (that would double the window's registers); f32 needs no unpack. */
template <typename T> __device__ __forceinline__ float dw_unpack_at_use(unsigned word, int j) {
#if defined(CONVND_EMU) && CONVND_EMU
    const unsigned words[4] = {word, word, word, word};
    return dw_unpack<T>(words, j % 2); /* element j of its word */
#else
    if constexpr (sizeof(T) == 4) {
        return __uint_as_float(word);
    } else if constexpr (std::is_same<T, convnd_bf16>::value) {
        unsigned f;
        if (j % 2)
            asm volatile("and.b32 %0, %1, 0xffff0000;" : "=r"(f) : "r"(word));
        else
            asm volatile("shl.b32 %0, %1, 16;" : "=r"(f) : "r"(word));
        return __uint_as_float(f);
    } else {
        float f;
        if (j % 2)
            asm volatile("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }"
                         : "=f"(f)
                         : "r"(word));
        else
            asm volatile("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }"
                         : "=f"(f)
                         : "r"(word));
        return f;
    }
#endif
}

/* Full unrolling is what keeps the ring in fixed registers on the GPU. The emulated device runs
 * the same loops rolled (the same arithmetic, slot indices computed at run time): GCC spends
 * many minutes unrolling the 31-wide instances and the CPU gains nothing from it. */
#if defined(CONVND_EMU) && CONVND_EMU
#define CONVND_DW_UNROLL_ON_GPU(n)
#else
#define CONVND_DW_UNROLL_ON_GPU(n) CONVND_UNROLL(n)
#endif

/* Calls tap(t, u) for the taps t = 0 .. KW-1 of a ring of SLOTS registers, u = t % SLOTS (a
 * compile-time slot on the GPU). Up to 2 * SLOTS taps the loop unrolls fully; wider kernels
 * (width 31) run a rolled loop of SLOTS-tap chunks, whose slots repeat from chunk to chunk, then
 * an unrolled tail: fully unrolled, 31 taps let the compiler hoist loads far ahead and need
 * 210-250 registers. */
template <int KW, int SLOTS, class F> __device__ __forceinline__ void dw_for_taps(F &&tap) {
    if constexpr (KW <= 2 * SLOTS) {
        CONVND_DW_UNROLL_ON_GPU(32)
        for (int t = 0; t < KW; ++t)
            tap(t, t % SLOTS);
    } else {
        CONVND_UNROLL(1)
        for (int c = 0; c < KW / SLOTS; ++c) {
            CONVND_DW_UNROLL_ON_GPU(16)
            for (int u = 0; u < SLOTS; ++u)
                tap(c * SLOTS + u, u);
        }
        CONVND_DW_UNROLL_ON_GPU(16)
        for (int u = 0; u < KW % SLOTS; ++u)
            tap(KW / SLOTS * SLOTS + u, u);
    }
}

/* One kernel row of width KW (stride 1, dilation 1, 16-byte vectors) for R outputs: tap t of
 * output r reads input position t + r of the row, j = 0 .. R + KW - 2 from ow0 - P. Position j
 * lives in ring slot j % (R + 1); with the loops unrolled every slot is a fixed register, so
 * nothing shifts. Tap t reads positions t .. t + R - 1; position t + R (tap t + 1's newest) goes
 * into the one free slot before tap t's FMAs, so its load overlaps them. */
template <typename T, typename Idx, int R, int VEC, int KW>
__device__ __forceinline__ void
dw_cl_row_fixed(const convnd_conv_params &p, const T *xrow, const dw_lane_channels<Idx, VEC> &lc,
                const float *wrow, int cb, Idx ow0, float (&acc)[R][VEC]) {
    constexpr int SLOTS = R + 1;
    const Idx i0 = ow0 - (Idx)p.p0[2];
    uint4 ring[SLOTS];
    CONVND_DW_UNROLL_ON_GPU(16)
    for (int r = 0; r < R; ++r)
        ring[r] = dw_load_raw<T, Idx, VEC>(p, xrow, lc, i0 + r);
    dw_for_taps<KW, SLOTS>([&](int t, int u) {
        if (t + 1 < KW) ring[(u + R) % SLOTS] = dw_load_raw<T, Idx, VEC>(p, xrow, lc, i0 + t + R);
        float wv[VEC];
        dw_lds<VEC>(wrow + t * cb, wv);
        CONVND_DW_UNROLL_ON_GPU(16)
        for (int r = 0; r < R; ++r) {
            const uint4 v = ring[(u + r) % SLOTS];
            const unsigned words[4] = {v.x, v.y, v.z, v.w};
            CONVND_DW_UNROLL_ON_GPU(16)
            for (int j = 0; j < VEC; ++j)
                acc[r][j] = fmaf(dw_unpack_at_use<T>(words[j * 4 / VEC], j), wv[j], acc[r][j]);
        }
    });
}

/* The 8-output 16-bit kernels walk the channels in two halves of
 * HALF = VEC / 2 (8 bytes of input, 4 channels): each half is its own pass over all kernel rows,
 * with 32 accumulators and a ring (the fixed widths) or sliding window (the generic row, any
 * stride and dilation) of 8-byte raw inputs, so about half the registers of a whole vector are
 * live: <= 128 registers without spills (2 blocks, 16 warps per SM; sm_90 nvcc/ptxas: 110-128,
 * the generic row 118 with 32-bit indices and 127 with 64-bit, width 31 125 / 126) where the
 * whole vector needs 156-223 (the generic row 184 / 210, width 31 156 / 168, 8 warps per SM).
 * With 16-byte vectors the first half's outputs are finished in f32 and kept packed (2 words
 * per output); the second half completes them and stores each output's channel vector with one
 * 16-byte store, as the single pass does, the 64-bit index kernels too. Up to width 9 and in the
 * generic row the kept words stay in registers. Width 31 keeps them in shared memory, after the
 * staged weights (dw_cl_halves::kept_smem, 16 KiB a block: thread t's output r at uint2 r * 256 +
 * t, so a warp's 8-byte accesses are consecutive, free of bank conflicts, and r's offset a
 * constant; private to the thread, so no barrier): in registers, live through the whole second
 * pass, the 16 words made width 31 spill at 128 registers (72 bytes). The weights take at most 48
 * KiB, so a width-31 block asks for at most 64 KiB (above 48 KiB the launch opts in), and 2 blocks
 * fit an SM. The loads walk the row with a pointer (one add per load: 64-bit indices fit 128
 * registers too). The price: the input is read as two 8-byte loads (same bytes, each sector
 * reached twice through L1), and the row set-up (and staging, where the weights are staged in
 * parts) is done once per half. The element-wise kernels (VECIO = false: multipliers, odd
 * channel counts, channels-first or misaligned tensors) run in halves too, through the generic
 * row: each half's 4 lanes are loaded element by element (the lanes past lc.lanes read nothing
 * and hold zero, as in the whole vector) and packed raw into 2 words, and each half stores its
 * own lanes element by element (the lanes past lc.lanes not stored): sm_90 117 registers with
 * 32-bit indices and 128 with 64-bit, no spills, 16 warps per SM, where the whole vector needed
 * 206 / 241 (8 warps per SM). */
template <typename T, typename Idx, int R, bool VECIO, int KW> struct dw_cl_halves {
    static constexpr bool value = R == 8 && sizeof(T) == 2;
    /* the first half's outputs are kept (packed) for one 16-byte store per output: in
     * registers, or (width 31) in shared memory after the staged weights */
    static constexpr bool keep_in_smem = value && VECIO && KW > 9;
    /* the kept outputs' shared memory: 8 bytes per output of each of a block's threads */
    static constexpr size_t kept_smem = keep_in_smem ? (size_t)CONVND_DW_THREADS * R * 8 : 0;
    /* blocks per SM the launch bounds ask for: 2 holds the kernel to 128 registers */
    static constexpr int min_blocks = value ? 2 : 1;
};

/* Half h's raw 8-byte input at W position i2 of a row, element offset off from the row's half
 * base xh (zeros in the padding). off is formed only here, in range: the walks below carry it
 * modulo 2^N (unsigned), since a masked tail output's or a padding position's offset may not
 * exist (nor fit Idx) at all. */
template <typename T, typename Idx>
__device__ __forceinline__ uint2 dw_load_half(const T *xh,
                                              typename std::make_unsigned<Idx>::type off, Idx i2,
                                              Idx in2) {
    using U = typename std::make_unsigned<Idx>::type;
    uint2 raw = make_uint2(0u, 0u);
    if ((U)i2 < (U)in2) raw = convnd_ld_vec(reinterpret_cast<const uint2 *>(xh + (Idx)off));
    return raw;
}

/* The element-wise kernels' half h (VECIO = false): lane jj of the half (channel lane
 * j = h * HALF + jj of the thread) reads x at the position's offset + lane[jj] (its input
 * channel: lc.delta[j] * x's channel stride); the lanes past lc.lanes (n of the half have a
 * channel) read nothing and hold zero, as in dw_load_lanes. */
template <typename Idx> struct dw_half_lanes {
    Idx lane[4];
    int n;
};

/* dw_load_half element by element: the half's 4 elements at W position i2 packed raw into 2
 * words (element jj in word jj / 2, low half first), as an 8-byte load would hold them. */
template <typename T, typename Idx>
__device__ __forceinline__ uint2 dw_load_half_lanes(const T *xh,
                                                    typename std::make_unsigned<Idx>::type off,
                                                    Idx i2, Idx in2, const dw_half_lanes<Idx> &hl) {
    using U = typename std::make_unsigned<Idx>::type;
    unsigned e[4] = {0u, 0u, 0u, 0u};
    if ((U)i2 < (U)in2) {
        const T *q = xh + (Idx)off;
        CONVND_UNROLL(4)
        for (int jj = 0; jj < 4; ++jj)
            if (jj < hl.n) e[jj] = dw_to_bits(q[hl.lane[jj]]);
    }
    return make_uint2(e[0] | e[1] << 16, e[2] | e[3] << 16);
}

/* dw_cl_row on half h of the channels: HALF = VEC / 2 channels read with 8-byte loads (VECIO),
 * or element by element (dw_load_half_lanes). The window holds the R outputs' inputs raw (2 words
 * each, unpacked at the FMA as in the fixed-width rows): 16 registers where R x HALF floats take
 * 32, which spilled at 128 registers (292 bytes with 32-bit indices, 1060 with 64-bit; sm_90).
 * Output ow0 + r's input for tap offset c = k2 * D - P is position (ow0 + r) * S + c: the loads
 * walk its element offset and the position (for the padding test) in steps of S along r, and of D
 * along k2, adds per load where a multiply made the 64-bit kernels spill (148 bytes). Both are
 * carried in unsigned arithmetic: a masked tail output's position may wrap (conv_wrap_pos), a huge
 * stride's offset step may not fit Idx, and the padding test rejects those positions before an
 * address is formed (dw_load_half). */
template <typename T, typename Idx, int R, int VEC, bool VECIO>
__device__ __forceinline__ void
dw_cl_row_half(const convnd_conv_params &p, const T *xrow, const dw_lane_channels<Idx, VEC> &lc,
               const float *wrow, int cb, Idx ow0, int h, float (&acc)[R][VEC / 2]) {
    using U = typename std::make_unsigned<Idx>::type;
    constexpr int HALF = VEC / 2;
    static_assert(HALF == 4, "16-bit halves");
    const int K2 = (int)p.k[2];
    const Idx S = (Idx)p.s[2], D = (Idx)p.d[2], P = (Idx)p.p0[2];
    const Idx in2 = (Idx)p.in[2], xs = (Idx)p.xs[4];
    const T *xh = xrow + (lc.base + (Idx)(h * HALF));
    const float *wh = wrow + h * HALF;
    dw_half_lanes<Idx> hl; /* element-wise: the half's lanes, from lc.base */
    if constexpr (!VECIO) {
        xh = xrow + lc.base;
        hl.n = lc.lanes - h * HALF;
        CONVND_UNROLL(4)
        for (int jj = 0; jj < HALF; ++jj)
            hl.lane[jj] = (Idx)lc.delta[h * HALF + jj] * (Idx)p.xs[1];
    }
    auto load = [&](U q, Idx i2) {
        if constexpr (VECIO)
            return dw_load_half<T, Idx>(xh, q, i2, in2);
        else
            return dw_load_half_lanes<T, Idx>(xh, q, i2, in2, hl);
    };
    const U dq = (U)S * (U)xs; /* the offset step from one output to the next */
    /* the position of output ow0's input for tap offset c, and its offset */
    auto start = [&](Idx c, Idx &i2, U &q) {
        i2 = conv_wrap_pos(ow0, S, c);
        q = (U)i2 * (U)xs;
    };
    auto fma_row = [&](const uint2 &v, const float(&wv)[HALF], float(&a)[HALF]) {
        const unsigned words[2] = {v.x, v.y};
        CONVND_UNROLL(4)
        for (int j = 0; j < HALF; ++j)
            a[j] = fmaf(dw_unpack_at_use<T>(words[j / 2], j), wv[j], a[j]);
    };
    float wv[HALF];
    if (D == 1) {
        /* as dw_cl_row: step t of stride phase ph is step t-1's window shifted by one output,
         * its new input the next output's */
        const int step = S < (Idx)K2 ? (int)S : K2;
        for (int ph = 0; ph < step; ++ph) {
            Idx i2;
            U q;
            start((Idx)ph - P, i2, q);
            auto load_next = [&]() {
                const uint2 v = load(q, i2);
                q += dq;
                i2 = (Idx)((U)i2 + (U)S);
                return v;
            };
            uint2 win[R];
            CONVND_UNROLL(8)
            for (int r = 0; r < R; ++r)
                win[r] = load_next();
            for (int k2 = ph; k2 < K2; k2 += step) {
                if (k2 != ph) {
                    CONVND_UNROLL(8)
                    for (int r = 0; r + 1 < R; ++r)
                        win[r] = win[r + 1];
                    win[R - 1] = load_next();
                }
                dw_lds<HALF>(wh + k2 * cb, wv);
                CONVND_UNROLL(8)
                for (int r = 0; r < R; ++r)
                    fma_row(win[r], wv, acc[r]);
            }
        }
    } else {
        const U dk = (U)D * (U)xs; /* the offset step from one tap to the next */
        Idx i0;
        U q0;
        start(-P, i0, q0);
        for (int k2 = 0; k2 < K2; ++k2) {
            dw_lds<HALF>(wh + k2 * cb, wv);
            Idx i2 = i0;
            U q = q0;
            CONVND_UNROLL(8)
            for (int r = 0; r < R; ++r) {
                fma_row(load(q, i2), wv, acc[r]);
                q += dq;
                i2 = (Idx)((U)i2 + (U)S);
            }
            q0 += dk;
            i0 = (Idx)((U)i0 + (U)D);
        }
    }
}

/* dw_cl_row_fixed on half h of the channels (8 bytes, HALF = VEC / 2 of them): the same ring of
 * R + 1 slots, 8-byte slots. Position k of the row (input i0 + k) is read at q0 + k * xs: one
 * multiply-add on a row pointer per load, and one unsigned compare for the padding. */
template <typename T, typename Idx, int R, int VEC, int KW>
__device__ __forceinline__ void dw_cl_row_fixed_half(const convnd_conv_params &p, const T *xrow,
                                                     const dw_lane_channels<Idx, VEC> &lc,
                                                     const float *wrow, int cb, Idx ow0, int h,
                                                     float (&acc)[R][VEC / 2]) {
    using U = typename std::make_unsigned<Idx>::type;
    constexpr int SLOTS = R + 1, HALF = VEC / 2;
    const Idx i0 = ow0 - (Idx)p.p0[2], xs = (Idx)p.xs[4];
    const U in2 = (U)p.in[2];
    const T *q0 = xrow + (lc.base + (Idx)(h * HALF) + i0 * xs);
    /* the loads walk the row in order: position k_next (input i0 + k_next) at q */
    Idx k_next = i0;
    const T *q = q0;
    auto load_next = [&]() {
        uint2 v = make_uint2(0u, 0u); /* padding, either side */
        if ((U)k_next < in2) v = convnd_ld_vec(reinterpret_cast<const uint2 *>(q));
        q += xs;
        ++k_next;
        return v;
    };
    uint2 ring[SLOTS];
    CONVND_DW_UNROLL_ON_GPU(16)
    for (int r = 0; r < R; ++r)
        ring[r] = load_next();
    dw_for_taps<KW, SLOTS>([&](int t, int u) {
        if (t + 1 < KW) ring[(u + R) % SLOTS] = load_next();
        float wv[HALF];
        dw_lds<HALF>(wrow + t * cb + h * HALF, wv);
        CONVND_DW_UNROLL_ON_GPU(16)
        for (int r = 0; r < R; ++r) {
            const uint2 v = ring[(u + r) % SLOTS];
            const unsigned words[2] = {v.x, v.y};
            CONVND_DW_UNROLL_ON_GPU(16)
            for (int j = 0; j < HALF; ++j)
                acc[r][j] = fmaf(dw_unpack_at_use<T>(words[j / 2], j), wv[j], acc[r][j]);
        }
    });
}

/* The epilogue of half a 16-bit channel vector (channels c0 .., 4 of them, y offset y_off):
 * bias and z read with 8-byte loads, the result rounded to T and packed into 2 words. */
template <typename T, typename Idx>
__device__ __forceinline__ void dw_finish_half(const convnd_conv_params &p, const float (&acc)[4],
                                               const T *bias, const T *z, Idx c0, Idx y_off,
                                               unsigned (&out)[2]) {
    uint2 b = make_uint2(0u, 0u), zv = make_uint2(0u, 0u);
    if (p.has_bias) b = convnd_ld_vec(reinterpret_cast<const uint2 *>(bias + c0));
    if (conv_reads_z(p)) zv = convnd_ld_vec(reinterpret_cast<const uint2 *>(z + y_off));
    const unsigned bw[4] = {b.x, b.y, 0u, 0u}, zw[4] = {zv.x, zv.y, 0u, 0u};
    CONVND_UNROLL(2)
    for (int q = 0; q < 2; ++q) {
        const float lo =
            conv_epilogue_values(p, acc[2 * q], dw_unpack<T>(bw, 2 * q), dw_unpack<T>(zw, 2 * q));
        const float hi = conv_epilogue_values(p, acc[2 * q + 1], dw_unpack<T>(bw, 2 * q + 1),
                                              dw_unpack<T>(zw, 2 * q + 1));
        out[q] = dw_to_bits(convnd_from_f32<T>(lo)) | dw_to_bits(convnd_from_f32<T>(hi)) << 16;
    }
}

/* One thread: VEC channels (a unit) x R outputs along W, on dw_staged_rows's item loop. The
 * halves kernels are held to 128 registers (2 blocks, 16 warps per SM). */
template <typename T, typename Idx, int R, bool VECIO, int KW>
__global__ void __launch_bounds__(CONVND_DW_THREADS, dw_cl_halves<T, Idx, R, VECIO, KW>::min_blocks)
    depthwise_cl_kernel(const convnd_conv_params p, const T *__restrict__ x,
                        const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y,
                        const dw_rows_args g) {
    constexpr int VEC = dw_vec_width<T>::value;
    CONVND_DYNAMIC_SHARED(float, wsm);
    const int tx = (int)threadIdx.x, cb = (int)blockDim.x * VEC;
    const Idx unit0 = (Idx)blockIdx.x * (Idx)blockDim.x;
    const Idx co0 = (unit0 + (Idx)tx) * VEC;
    const dw_lane_channels<Idx, VEC> lc = dw_lane_channels_for<Idx, VEC>(p, co0);
    const dw_vector_units<Idx> units{(Idx)p.C_out, VEC};
    using halves = dw_cl_halves<T, Idx, R, VECIO, KW>;
    if constexpr (halves::value) {
        constexpr int HALF = VEC / 2;
        unsigned kept[R][2]; /* the first half's outputs, packed (in registers) */
        (void)kept;
        /* or in shared memory after the staged weights (halves::keep_in_smem): thread t's
         * output r at uint2 r * CONVND_DW_THREADS + t, so a warp's accesses are consecutive
         * (no bank conflicts) and r's offset is a constant; private to the thread, no barrier */
        const int tid = (int)(threadIdx.y * blockDim.x) + tx;
        uint2 *const kept_sm =
            reinterpret_cast<uint2 *>(wsm + g.rows_per_stage * (int)p.k[2] * cb) + tid;
        (void)kept_sm;
        dw_staged_rows<T, Idx, R, HALF, 2>(
            p, w, wsm, g, units, unit0, VEC, 1, lc.lanes > 0,
            [&](int h, int rl, Idx x_off, const dw_item<Idx> &at, float(&acc)[R][HALF]) {
                const float *wrow = wsm + rl * (int)p.k[2] * cb + tx * VEC;
                if constexpr (KW > 0)
                    dw_cl_row_fixed_half<T, Idx, R, VEC, KW>(p, x + x_off, lc, wrow, cb, at.ow0, h,
                                                             acc);
                else
                    dw_cl_row_half<T, Idx, R, VEC, VECIO>(p, x + x_off, lc, wrow, cb, at.ow0, h,
                                                          acc);
            },
            [&](int h, const dw_item<Idx> &at, float(&acc)[R][HALF]) {
                CONVND_UNROLL(16)
                for (int r = 0; r < R; ++r) {
                    const Idx ow = at.ow0 + r;
                    if (ow >= (Idx)p.out[2]) continue; /* not break: the loop must unroll */
                    const Idx y_off = conv_offset<Idx>(p.ys, at.n, co0, at.o0, at.o1, ow);
                    if constexpr (!VECIO) {
                        /* element by element, the lanes past lc.lanes not stored */
                        CONVND_UNROLL(4)
                        for (int jj = 0; jj < HALF; ++jj) {
                            const int j = h * HALF + jj;
                            if (j < lc.lanes)
                                conv_finish<T, Idx>(p, acc[r][jj], bias, z, y, co0 + (Idx)j,
                                                    y_off + (Idx)j * (Idx)p.ys[1]);
                        }
                        continue;
                    }
                    unsigned half[2];
                    dw_finish_half<T, Idx>(p, acc[r], bias, z, co0 + (Idx)(h * HALF),
                                           y_off + (Idx)(h * HALF), half);
                    if (h == 0) {
                        if constexpr (halves::keep_in_smem) {
                            convnd_st_vec(kept_sm + r * CONVND_DW_THREADS,
                                          make_uint2(half[0], half[1]));
                        } else {
                            kept[r][0] = half[0];
                            kept[r][1] = half[1];
                        }
                    } else if constexpr (halves::keep_in_smem) {
                        const uint2 first = convnd_ld_vec(kept_sm + r * CONVND_DW_THREADS);
                        const unsigned words[4] = {first.x, first.y, half[0], half[1]};
                        dw_store_words(y + y_off, words);
                    } else {
                        const unsigned words[4] = {kept[r][0], kept[r][1], half[0], half[1]};
                        dw_store_words(y + y_off, words);
                    }
                }
            });
    } else {
        dw_staged_rows<T, Idx, R, VEC>(
            p, w, wsm, g, units, unit0, VEC, 1, lc.lanes > 0,
            [&](int rl, Idx x_off, const dw_item<Idx> &at, float(&acc)[R][VEC]) {
                const float *wrow = wsm + rl * (int)p.k[2] * cb + tx * VEC;
                if constexpr (KW > 0)
                    dw_cl_row_fixed<T, Idx, R, VEC, KW>(p, x + x_off, lc, wrow, cb, at.ow0, acc);
                else
                    dw_cl_row<T, Idx, R, VEC, VECIO>(p, x + x_off, lc, wrow, cb, at.ow0, acc);
            },
            [&](const dw_item<Idx> &at, float(&acc)[R][VEC]) {
                CONVND_UNROLL(16)
                for (int r = 0; r < R; ++r) {
                    const Idx ow = at.ow0 + r;
                    if (ow <
                        (Idx)p.out[2]) /* no break: the loop must unroll to keep acc in registers */
                        dw_finish_vec<T, Idx, VEC, VECIO>(
                            p, acc[r], bias, z, y, co0,
                            conv_offset<Idx>(p.ys, at.n, co0, at.o0, at.o1, ow), lc.lanes);
                }
            });
    }
}

/* 16-byte vectors apply: multiplier 1, whole vectors of channels, channels innermost in x, y
 * (and z), every other stride a whole number of vectors, 16-byte aligned pointers. */
static bool dw_cl_vector_io(const convnd_launch_args *a, int vec) {
    const convnd_conv_params &p = a->params;
    if (p.cout_g != 1 || p.C_out % vec != 0 || p.xs[1] != 1 || p.ys[1] != 1) return false;
    for (int t = 0; t < 5; ++t)
        if (t != 1 && (p.xs[t] % vec != 0 || p.ys[t] % vec != 0)) return false;
    const uintptr_t ptrs = (uintptr_t)a->x | (uintptr_t)a->y |
                           (p.has_bias ? (uintptr_t)a->bias : 0) | (p.has_z ? (uintptr_t)a->z : 0);
    return ptrs % 16 == 0;
}

template <typename T, typename Idx, int R, bool VECIO, int KW>
static convnd_status dw_cl_launch_typed(const convnd_launch_args *a,
                                        const convnd_unit_geometry &geo) {
    const convnd_conv_params &p = a->params;
    unsigned groups;
    const dw_rows_args g = dw_rows_args_for<R>(p, geo, &groups);
    auto kernel = &depthwise_cl_kernel<T, Idx, R, VECIO, KW>;
    /* the staged weights, then the kept outputs of the halves kernels that keep them there */
    const size_t smem = geo.smem + dw_cl_halves<T, Idx, R, VECIO, KW>::kept_smem;
    return convnd_launch(kernel, dim3((unsigned)geo.chunks, groups),
                         dim3((unsigned)geo.tx, (unsigned)geo.ty), smem, a->stream, p,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y, g);
}

template <typename T, int R> static convnd_status dw_cl_launch_dtype(const convnd_launch_args *a) {
    constexpr int VEC = dw_vec_width<T>::value;
    const convnd_conv_params &p = a->params;
    convnd_unit_geometry geo;
    if (!convnd_unit_geometry_for(&p, (p.C_out + VEC - 1) / VEC, VEC, &geo))
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_cl: kernel width %lld does not fit",
                            (long long)p.k[2]);
    if (geo.chunks > 0x7fffffff)
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_cl: %lld channel blocks",
                            (long long)geo.chunks);
    const bool vec = dw_cl_vector_io(a, VEC), wide = conv_needs_index64(p);
    if (vec && p.s[2] == 1 && p.d[2] == 1) {
        switch (p.k[2]) {
#define CONVND_DW_CL_FIXED_CASE(kw)                                                                \
    case kw:                                                                                       \
        if (!wide) return dw_cl_launch_typed<T, int32_t, R, true, kw>(a, geo);                     \
        return dw_cl_launch_typed<T, int64_t, R, true, kw>(a, geo);
            CONVND_DW_CL_WIDTHS(CONVND_DW_CL_FIXED_CASE)
#undef CONVND_DW_CL_FIXED_CASE
        default:
            break;
        }
    }
    if (vec)
        return wide ? dw_cl_launch_typed<T, int64_t, R, true, 0>(a, geo)
                    : dw_cl_launch_typed<T, int32_t, R, true, 0>(a, geo);
    return wide ? dw_cl_launch_typed<T, int64_t, R, false, 0>(a, geo)
                : dw_cl_launch_typed<T, int32_t, R, false, 0>(a, geo);
}

template <int R> static convnd_status dw_cl_launch_run(const convnd_launch_args *a) {
    return convnd_launch_by_dtype(a->params.dtype, "depthwise_cl", [&](auto t) {
        return dw_cl_launch_dtype<typename decltype(t)::type, R>(a);
    });
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(depthwise_cl) {
    using namespace CONVND_NS;
    if (a->config < 0 || a->config >= CONVND_DW_CONFIG_COUNT ||
        convnd_dw_config_at(a->config).path != CONVND_DW_PATH_CL)
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_cl: config %d is not a cl config",
                            (int)a->config);
    if (a->params.y_numel == 0) return CONVND_OK;
    switch (convnd_dw_config_at(a->config).param) {
    case 4:
        return dw_cl_launch_run<4>(a);
    case 8:
        return dw_cl_launch_run<8>(a);
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_cl: no kernel for a run of %d",
                            (int)convnd_dw_config_at(a->config).param);
    }
}
