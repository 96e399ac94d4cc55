/* The tensor-core register epilogue of the implicit GEMMs (igemm_kernel.cuh, and through it the
 * transposed convT_kernel.cuh): y = act(alpha * acc + bias + beta * z) applied to the mma.sync
 * accumulators where they are, with the activation a template parameter.
 *
 * tc_epilogue dispatches once, on p.activation (uniform across the grid: one compare chain per
 * thread, no indirect branch), to tc_epilogue_act<ACT>, whose body has no per-element choice of
 * activation (conv_activate_t<ACT>, conv_index.cuh).
 *
 * Stores: where y's channels are innermost (ys[1] == 1: channels-last y, or a channel slice of a
 * larger channels-last buffer, SPEC §11) the accumulators are transposed within each quad of
 * lanes (Mma::each_octet, warp shuffles) so that each lane holds 8 consecutive output channels
 * of one row, and stores them with 16-byte vector stores (one for f16/bf16, two for f32) when
 * the 8 channels exist (not past C_out/g) and y's address (and z's, when read) is 16-byte
 * aligned; otherwise - a tail of channels, a misaligned slice or base pointer - it stores them
 * one element at a time. Channels-first y keeps one store per element (Mma::each). */
#ifndef CONVND_TC_EPILOGUE_CUH
#define CONVND_TC_EPILOGUE_CUH

#include <stdint.h>
#include <string.h>
#include "conv_index.cuh"
#include "igemm_geometry.cuh"

namespace CONVND_NS {

/* One output element: the epilogue and the single rounding store. */
template <typename T, int ACT>
__device__ __forceinline__ void tc_finish_one(const convnd_conv_params &p, float acc, const T *bias,
                                              const T *z, T *y, int32_t co, int32_t off) {
    const float b = p.has_bias ? conv_load(bias, co) : 0.0f;
    const float zv = conv_reads_z(p) ? conv_load(z, off) : 0.0f;
    conv_store(y, off, conv_epilogue_values_t<ACT>(p, acc, b, zv));
}

/* 8 consecutive channels co.. at y offset off (channel stride 1) of one row, 16 bytes at a
 * time: the caller checked that all 8 exist and that y + off (and z + off when read) are
 * 16-byte aligned. */
template <typename T, int ACT>
__device__ __forceinline__ void tc_finish_octet_vec(const convnd_conv_params &p,
                                                    const float (&v)[8], const T *bias, const T *z,
                                                    T *y, int32_t co, int32_t off) {
    constexpr int VEC = 16 / (int)sizeof(T); /* elements per 16-byte vector */
    constexpr int CHUNKS = 8 / VEC;
    T zs[8];
    if (conv_reads_z(p)) {
        CONVND_UNROLL_GPU(2)
        for (int ch = 0; ch < CHUNKS; ++ch) {
            const uint4 zv = convnd_ld_vec(reinterpret_cast<const uint4 *>(z + off + ch * VEC));
            memcpy(zs + ch * VEC, &zv, 16);
        }
    }
    T out[8];
    CONVND_UNROLL_GPU(8)
    for (int e = 0; e < 8; ++e) {
        const float b = p.has_bias ? conv_load(bias, co + e) : 0.0f;
        const float zv = conv_reads_z(p) ? convnd_to_f32(zs[e]) : 0.0f;
        out[e] = convnd_from_f32<T>(conv_epilogue_values_t<ACT>(p, v[e], b, zv));
    }
    CONVND_UNROLL_GPU(2)
    for (int ch = 0; ch < CHUNKS; ++ch) {
        uint4 u;
        memcpy(&u, out + ch * VEC, 16);
        convnd_st_vec(reinterpret_cast<uint4 *>(y + off + ch * VEC), u);
    }
}

template <typename T, int ACT, class Mma>
__device__ __forceinline__ void
tc_epilogue_act(const Mma &mma, const convnd_conv_params &p, const igemm_geometry &g,
                const int32_t *y_rows, int32_t n0, int32_t co0, const T *bias, const T *z, T *y) {
    if (g.ys[1] == 1) {
        /* channels innermost: 8 consecutive channels a lane (every lane calls each_octet) */
        const bool reads_z = conv_reads_z(p);
        mma.each_octet([&](int r, int c, const float(&v)[8]) {
            const int32_t row_off = y_rows[r];
            if (row_off < 0) return;
            const int32_t co = co0 + n0 + c;
            const int32_t off = row_off + co;
            const bool whole = n0 + c + 8 <= g.cout_g;
            const bool aligned = (reinterpret_cast<uintptr_t>(y + off) % 16 == 0) &&
                                 (!reads_z || reinterpret_cast<uintptr_t>(z + off) % 16 == 0);
            if (whole && aligned) {
                tc_finish_octet_vec<T, ACT>(p, v, bias, z, y, co, off);
            } else {
                CONVND_UNROLL_GPU(8)
                for (int e = 0; e < 8; ++e)
                    if (n0 + c + e < g.cout_g)
                        tc_finish_one<T, ACT>(p, v[e], bias, z, y, co + e, off + e);
            }
        });
    } else {
        mma.each([&](int r, int c, float v) {
            const int32_t row_off = y_rows[r];
            if (row_off < 0 || n0 + c >= g.cout_g) return;
            const int32_t co = co0 + n0 + c;
            tc_finish_one<T, ACT>(p, v, bias, z, y, co, row_off + co * g.ys[1]);
        });
    }
}

/* The activation chosen once per thread (p.activation is the same for the whole grid). The
 * emulated device compiles one body that reads p.activation per element instead (the same
 * conv_activate_t bodies behind conv_activate's switch) and leaves its loops to the host
 * compiler: four force-unrolled bodies per kernel instance took one tensor-core file's emulated
 * build from under a minute to more than eight, for no difference in what is computed. */
template <typename T, class Mma>
__device__ __forceinline__ void
tc_epilogue(const Mma &mma, const convnd_conv_params &p, const igemm_geometry &g,
            const int32_t *y_rows, int32_t n0, int32_t co0, const T *bias, const T *z, T *y) {
#if defined(CONVND_EMU) && CONVND_EMU
    tc_epilogue_act<T, CONVND_ACT_RUNTIME>(mma, p, g, y_rows, n0, co0, bias, z, y);
#else
    if (p.activation == CONVND_ACT_RELU)
        tc_epilogue_act<T, CONVND_ACT_RELU>(mma, p, g, y_rows, n0, co0, bias, z, y);
    else if (p.activation == CONVND_ACT_SILU)
        tc_epilogue_act<T, CONVND_ACT_SILU>(mma, p, g, y_rows, n0, co0, bias, z, y);
    else if (p.activation == CONVND_ACT_GELU)
        tc_epilogue_act<T, CONVND_ACT_GELU>(mma, p, g, y_rows, n0, co0, bias, z, y);
    else
        tc_epilogue_act<T, CONVND_ACT_NONE>(mma, p, g, y_rows, n0, co0, bias, z, y);
#endif
}

} // namespace CONVND_NS

#endif
