/* stmatrix (sm_90), the store twin of ldmatrix (primitives/mma_sync.cuh):
 *
 *   convnd_stmatrix<NUM, TRANS>(r, row)   stmatrix.sync.aligned.m8n8.x{NUM}{.trans}.shared.b16:
 *       lane 8*i + j passes the address of row j of 8x8 matrix i (16 bytes, 16-byte aligned,
 *       shared memory; lanes >= 8*NUM pass anything); lane 4*row + w gives in r[i] the 32-bit
 *       word w of that row (columns 2w, 2w+1, low half first), or with TRANS of that column.
 *
 * That is the layout of an mma / wgmma f32 accumulator's 8x8 blocks once packed to 16 bits
 * (lane 4*g + t holds row g, columns 2t and 2t+1), so an epilogue stores 16 bytes per lane and
 * instruction. The emulated device implements the same table (device/stmatrix_emu.cuh). Include
 * after portability.cuh. */
#ifndef CONVND_STMATRIX_CUH
#define CONVND_STMATRIX_CUH

#include "mma_sync.cuh"

#if defined(CONVND_EMU) && CONVND_EMU
#include "stmatrix_emu.cuh"
#else

template <int NUM, bool TRANS>
__device__ __forceinline__ void convnd_stmatrix(const uint32_t (&r)[NUM], void *row) {
    static_assert(NUM == 1 || NUM == 2 || NUM == 4, "stmatrix stores 1, 2 or 4 matrices");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(row);
    if constexpr (NUM == 1 && !TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n" ::"r"(a), "r"(r[0])
                     : "memory");
    else if constexpr (NUM == 1)
        asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};\n" ::"r"(a),
                     "r"(r[0])
                     : "memory");
    else if constexpr (NUM == 2 && !TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(a),
                     "r"(r[0]), "r"(r[1])
                     : "memory");
    else if constexpr (NUM == 2)
        asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(a),
                     "r"(r[0]), "r"(r[1])
                     : "memory");
    else if constexpr (!TRANS)
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a),
                     "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                     : "memory");
    else
        asm volatile(
            "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(a),
            "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
            : "memory");
#else
    (void)r, (void)row;
    __trap(); /* stmatrix needs sm_90; callers are sm_90 kernels */
#endif
}

#endif
#endif
