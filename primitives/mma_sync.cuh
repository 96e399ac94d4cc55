/* Tensor-core primitives on documented PTX, for kernels that index fragment registers directly:
 *
 *   convnd_ldmatrix<NUM, TRANS>(r, row)   ldmatrix.sync.aligned.m8n8.x{NUM}{.trans}.shared.b16:
 *       lane 8*i + j passes the address of row j of 8x8 matrix i (16 bytes, 16-byte aligned,
 *       shared memory; lanes >= 8*NUM pass anything); lane 4*row + w receives in r[i] the 32-bit
 *       word w of that row (columns 2w, 2w+1, low half first), or with TRANS of that column.
 *   convnd_ldmatrix_at<NUM, TRANS>(r, base, byte_off)   the same at base + byte_off: a loop that
 *       reads many fragments from one tile forms the tile's shared address once, not per read.
 *   convnd_mma_m16n8k16<T>(d, a, b, c)    mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32,
 *       T convnd_half or convnd_bf16 (a: 4 registers of 2 elements, b: 2, c/d: 4 floats).
 *   convnd_mma_m16n8k8_tf32(d, a, b, c)   mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
 *       (a: 4 tf32 bit patterns, b: 2; round with convnd_float_to_tf32 first).
 *
 * Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8"), with g = lane / 4
 * and t = lane % 4:
 *   m16n8k16 A (16x16): a[i] holds A[g + 8*(i&1)][2t + 8*(i>>1) + h] for halves h = 0, 1
 *            B (16x8):  b[i] holds B[2t + 8*i + h][g]
 *   m16n8k8  A (16x8):  a[i] holds A[g + 8*(i&1)][t + 4*(i>>1)]
 *            B (8x8):   b[i] holds B[t + 4*i][g]
 *   C, D (16x8, f32):   c[i] holds C[g + 8*(i>>1)][2t + (i&1)]
 * The emulated device implements exactly these tables (device/mma_sync_emu.cuh). Include after
 * portability.cuh. */
#ifndef CONVND_MMA_SYNC_CUH
#define CONVND_MMA_SYNC_CUH

/* Two 16-bit values in one fragment register, lo in the low half (lower column or row). */
template <typename T> __device__ __forceinline__ uint32_t convnd_pack2(T lo, T hi) {
    static_assert(sizeof(T) == 2, "convnd_pack2 packs 16-bit values");
    uint16_t l, h;
    memcpy(&l, &lo, 2);
    memcpy(&h, &hi, 2);
    return (uint32_t)l | ((uint32_t)h << 16);
}

#if defined(CONVND_EMU) && CONVND_EMU
#include "mma_sync_emu.cuh"
#else

template <int NUM, bool TRANS>
__device__ __forceinline__ void convnd_ldmatrix_at(uint32_t (&r)[NUM], const void *base,
                                                   int byte_off) {
    static_assert(NUM == 1 || NUM == 2 || NUM == 4, "ldmatrix loads 1, 2 or 4 matrices");
    /* cvta(base) is formed once per tile and byte_off added; cvta(base + off) was not hoisted */
    const unsigned a = (unsigned)__cvta_generic_to_shared(base) + (unsigned)byte_off;
    if constexpr (NUM == 1 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                     : "=r"(r[0])
                     : "r"(a));
    else if constexpr (NUM == 1)
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                     : "=r"(r[0])
                     : "r"(a));
    else if constexpr (NUM == 2 && !TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1])
                     : "r"(a));
    else if constexpr (NUM == 2)
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                     : "=r"(r[0]), "=r"(r[1])
                     : "r"(a));
    else if constexpr (!TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
}

template <int NUM, bool TRANS>
__device__ __forceinline__ void convnd_ldmatrix(uint32_t (&r)[NUM], const void *row) {
    convnd_ldmatrix_at<NUM, TRANS>(r, row, 0);
}

template <typename T>
__device__ __forceinline__ void convnd_mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                                    const uint32_t (&b)[2], const float (&c)[4]) {
    static_assert(std::is_same<T, convnd_half>::value || std::is_same<T, convnd_bf16>::value,
                  "m16n8k16 takes f16 or bf16 inputs");
    if constexpr (std::is_same<T, convnd_half>::value)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                       "f"(c[1]), "f"(c[2]), "f"(c[3]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                       "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ void convnd_mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4],
                                                        const uint32_t (&b)[2],
                                                        const float (&c)[4]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                   "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

#endif
#endif
