/* Tensor maps (CUtensorMap) for TMA: a 128-byte, 64-byte-aligned opaque object passed to kernels
 * by value. On the emulated device convnd encodes it itself (device/emu_tmap.c) with the CUDA
 * driver's validation rules for cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col; the errors
 * name the parameter and its value. Plain C. */
#ifndef CONVND_EMU_TMAP_H
#define CONVND_EMU_TMAP_H

#include <stdint.h>
#include <string.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_tmap {
#ifdef __cplusplus
    alignas(64)
#else
    _Alignas(64)
#endif
        unsigned char opaque[128];
} convnd_tmap;

/* The values of CUtensorMapSwizzle. */
typedef enum convnd_tmap_swizzle {
    CONVND_TMAP_SWIZZLE_NONE = 0,
    CONVND_TMAP_SWIZZLE_32B = 1,
    CONVND_TMAP_SWIZZLE_64B = 2,
    CONVND_TMAP_SWIZZLE_128B = 3
} convnd_tmap_swizzle;

/* What one map describes; dims[0] is the innermost (contiguous) dimension, strides[i] the byte
 * stride of dims[i + 1]. Tiled maps use box; im2col maps use the corners (one per spatial dim,
 * rank - 2 of them) and channels_per_pixel x pixels_per_column. */
typedef struct convnd_tmap_desc {
    convnd_dtype dtype; /* f32 (also for tf32 operands), f16, bf16 */
    uint32_t rank;
    const void *address;
    uint64_t dims[5];
    uint64_t strides[4];
    uint32_t box[5];
    uint32_t element_strides[5];
    int32_t lower_corner[3], upper_corner[3];
    uint32_t channels_per_pixel, pixels_per_column;
    convnd_tmap_swizzle swizzle;
    int32_t oob_nan; /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA instead of zeros */
} convnd_tmap_desc;

/* A desc with no box, unit element strides and no swizzle; dims, strides, box or im2col fields
 * still to set. */
static inline convnd_tmap_desc convnd_tmap_desc_make(convnd_dtype dtype, uint32_t rank,
                                                     const void *address) {
    convnd_tmap_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.rank = rank;
    d.address = address;
    for (int i = 0; i < 5; ++i) {
        d.box[i] = 1;
        d.element_strides[i] = 1;
    }
    return d;
}

/* cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col for the emulated device. CONVND_OK, or
 * CONVND_ERR_INVALID_ARGUMENT with convnd_last_error() naming the rule; map untouched then. */
convnd_status convnd_emu_tmap_encode_tiled(convnd_tmap *map, const convnd_tmap_desc *d);
convnd_status convnd_emu_tmap_encode_im2col(convnd_tmap *map, const convnd_tmap_desc *d);

/* The decoded map (emulator-internal layout of the 128 bytes). */
typedef struct convnd_emu_tmap {
    uint32_t magic;
    uint8_t im2col, rank, elem_bytes, swizzle;
    uint8_t oob_nan, element_strides[5];
    uint16_t box[5]; /* tiled box; im2col: box[0] channels per pixel, box[1] pixels per column */
    int16_t lower[3], upper[3];
    uint64_t address;
    uint64_t dims[5];
    uint64_t strides[4];
} convnd_emu_tmap;

/* NULL when map was not encoded by convnd_emu_tmap_encode_*. */
const convnd_emu_tmap *convnd_emu_tmap_decode(const convnd_tmap *map);

#ifdef __cplusplus
}
#endif

#endif
