/* The emulated device's tensor-map encoder: the CUDA driver's rules for cuTensorMapEncodeTiled
 * and cuTensorMapEncodeIm2col (CUDA driver API, "Tensor Map Object Management"), checked one by
 * one with an error naming the parameter, then the map packed into the 128 opaque bytes. */
#include "emu_tmap.h"
#include "error.h"

#include <string.h>

#define TMAP_MAGIC 0x544D4150u /* "TMAP" */

_Static_assert(sizeof(convnd_emu_tmap) <= sizeof(convnd_tmap), "the decoded map fits 128 bytes");

static uint32_t elem_bytes(convnd_dtype t) {
    return t == CONVND_F32 ? 4 : (t == CONVND_F16 || t == CONVND_BF16) ? 2 : 0;
}

static const uint32_t swizzle_span[4] = {0, 32, 64, 128};

/* The rules shared by both kinds: everything but the box. */
static convnd_status check_common(const convnd_tmap *map, const convnd_tmap_desc *d,
                                  uint32_t min_rank, uint32_t esize) {
    if (!map || !d) return convnd_error(CONVND_ERR_NULL_POINTER, "tensor map: map or desc is NULL");
    if ((uintptr_t)map % 64)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "tensorMap=%p must be 64-byte aligned",
                            (const void *)map);
    if (!esize)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "tensorDataType=%d is not f32, f16 or bf16", (int)d->dtype);
    if (d->rank < min_rank || d->rank > 5)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "tensorRank=%u must be in %u..5", d->rank,
                            min_rank);
    if (!d->address || (uintptr_t)d->address % 16)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "globalAddress=%p must be non-NULL and 16-byte aligned", d->address);
    for (uint32_t i = 0; i < d->rank; ++i)
        if (d->dims[i] == 0 || d->dims[i] > (1ull << 32))
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "globalDim[%u]=%llu must be in 1..2^32", i,
                                (unsigned long long)d->dims[i]);
    for (uint32_t i = 0; i + 1 < d->rank; ++i)
        if (d->strides[i] % 16 || d->strides[i] >= (1ull << 40))
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "globalStrides[%u]=%llu must be a multiple of 16 below 2^40", i,
                                (unsigned long long)d->strides[i]);
    for (uint32_t i = 0; i < d->rank; ++i)
        if (d->element_strides[i] < 1 || d->element_strides[i] > 8)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "elementStrides[%u]=%u must be in 1..8", i, d->element_strides[i]);
    if ((unsigned)d->swizzle > CONVND_TMAP_SWIZZLE_128B)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "swizzle=%d is not a CUtensorMapSwizzle",
                            (int)d->swizzle);
    return CONVND_OK;
}

/* The innermost box extent in bytes: a multiple of 16, within the swizzle span. */
static convnd_status check_inner(const convnd_tmap_desc *d, const char *name, uint32_t elems,
                                 uint32_t esize) {
    const uint32_t bytes = elems * esize;
    if (bytes % 16)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s=%u: %u bytes is not a multiple of 16 (interleave none)", name,
                            elems, bytes);
    if (d->swizzle != CONVND_TMAP_SWIZZLE_NONE && bytes > swizzle_span[d->swizzle])
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s=%u: %u bytes exceed the %u-byte swizzle span", name, elems, bytes,
                            swizzle_span[d->swizzle]);
    return CONVND_OK;
}

static void pack(convnd_tmap *map, const convnd_tmap_desc *d, uint32_t esize, int im2col) {
    convnd_emu_tmap m;
    memset(&m, 0, sizeof m);
    m.magic = TMAP_MAGIC;
    m.im2col = (uint8_t)im2col;
    m.rank = (uint8_t)d->rank;
    m.elem_bytes = (uint8_t)esize;
    m.swizzle = (uint8_t)d->swizzle;
    m.oob_nan = (uint8_t)(d->oob_nan != 0);
    m.address = (uint64_t)(uintptr_t)d->address;
    for (uint32_t i = 0; i < d->rank; ++i) {
        m.dims[i] = d->dims[i];
        m.element_strides[i] = (uint8_t)d->element_strides[i];
        if (!im2col) m.box[i] = (uint16_t)d->box[i];
        if (i + 1 < d->rank) m.strides[i] = d->strides[i];
    }
    if (im2col) {
        m.box[0] = (uint16_t)d->channels_per_pixel;
        m.box[1] = (uint16_t)d->pixels_per_column;
        for (uint32_t i = 0; i + 2 < d->rank; ++i) {
            m.lower[i] = (int16_t)d->lower_corner[i];
            m.upper[i] = (int16_t)d->upper_corner[i];
        }
    }
    memset(map, 0, sizeof *map);
    memcpy(map->opaque, &m, sizeof m);
}

convnd_status convnd_emu_tmap_encode_tiled(convnd_tmap *map, const convnd_tmap_desc *d) {
    const uint32_t esize = d ? elem_bytes(d->dtype) : 0;
    convnd_status st = check_common(map, d, 1, esize);
    if (st != CONVND_OK) return st;
    for (uint32_t i = 0; i < d->rank; ++i)
        if (d->box[i] < 1 || d->box[i] > 256)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "boxDim[%u]=%u must be in 1..256", i,
                                d->box[i]);
    st = check_inner(d, "boxDim[0]", d->box[0], esize);
    if (st != CONVND_OK) return st;
    pack(map, d, esize, 0);
    return CONVND_OK;
}

convnd_status convnd_emu_tmap_encode_im2col(convnd_tmap *map, const convnd_tmap_desc *d) {
    const uint32_t esize = d ? elem_bytes(d->dtype) : 0;
    convnd_status st = check_common(map, d, 3, esize);
    if (st != CONVND_OK) return st;
    if (d->channels_per_pixel < 1 || d->channels_per_pixel > 256)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "channelsPerPixel=%u must be in 1..256",
                            d->channels_per_pixel);
    if (d->pixels_per_column < 1 || d->pixels_per_column > 1024)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "pixelsPerColumn=%u must be in 1..1024",
                            d->pixels_per_column);
    st = check_inner(d, "channelsPerPixel", d->channels_per_pixel, esize);
    if (st != CONVND_OK) return st;
    /* The corners are signed fields whose width shrinks with the rank: 16 bits for 3-D tensors,
     * 8 for 4-D, 5 for 5-D. */
    const int32_t bits = d->rank == 3 ? 16 : d->rank == 4 ? 8 : 5;
    const int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    for (uint32_t i = 0; i + 2 < d->rank; ++i) {
        if (d->lower_corner[i] < lo || d->lower_corner[i] > hi)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "pixelBoxLowerCorner[%u]=%d is outside [%d, %d] for rank %u", i,
                                d->lower_corner[i], lo, hi, d->rank);
        if (d->upper_corner[i] < lo || d->upper_corner[i] > hi)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "pixelBoxUpperCorner[%u]=%d is outside [%d, %d] for rank %u", i,
                                d->upper_corner[i], lo, hi, d->rank);
    }
    pack(map, d, esize, 1);
    return CONVND_OK;
}

const convnd_emu_tmap *convnd_emu_tmap_decode(const convnd_tmap *map) {
    const convnd_emu_tmap *m = (const convnd_emu_tmap *)(const void *)map->opaque;
    return m->magic == TMAP_MAGIC ? m : NULL;
}
