/* Tensor maps on the GPU: a convnd_tmap_desc encoded by the CUDA driver (cuTensorMapEncodeTiled /
 * cuTensorMapEncodeIm2col, through the runtime's driver entry point, so nothing links libcuda).
 * The emulated device encodes the same desc itself (device/emu_tmap.c), with the driver's rules;
 * convnd_gpu_conformance (tests/gpu/) checks that both accept and refuse the same descs. Host
 * code of the GPU build only. */
#ifndef CONVND_HOPPER_TMAP_GPU_CUH
#define CONVND_HOPPER_TMAP_GPU_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include "emu_tmap.h"
#include "error.h"

/* CONVND_OK, or an error naming the driver function and its CUresult (CONVND_ERR_DEVICE), or
 * the field the driver's arrays cannot hold (CONVND_ERR_INVALID_ARGUMENT); map untouched then. */
static inline convnd_status convnd_gpu_tmap_encode(convnd_tmap *map, const convnd_tmap_desc *d,
                                                   bool im2col) {
    const char *name = im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
    if (d->rank < (im2col ? 3u : 1u) || d->rank > 5)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s: tensorRank=%u is outside [%u, 5]",
                            name, d->rank, im2col ? 3u : 1u);
    CUtensorMapDataType dt;
    switch (d->dtype) {
    case CONVND_F32:
        dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        break;
    case CONVND_F16:
        dt = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        break;
    case CONVND_BF16:
        dt = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        break;
    default:
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s: tensorDataType for convnd dtype %d: f32, f16 or bf16 only", name,
                            (int)d->dtype);
    }
    cudaDriverEntryPointQueryResult q;
    void *fn = nullptr;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn)
        return convnd_error(CONVND_ERR_DEVICE, "driver entry point %s not found", name);
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], es[5];
    for (uint32_t i = 0; i < d->rank; ++i) {
        dims[i] = d->dims[i];
        box[i] = d->box[i];
        es[i] = d->element_strides[i];
        if (i + 1 < d->rank) strides[i] = d->strides[i];
    }
    const CUtensorMapSwizzle sw = (CUtensorMapSwizzle)d->swizzle;
    const CUtensorMapFloatOOBfill oob = d->oob_nan
                                            ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                            : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    CUtensorMap out;
    CUresult r;
    if (im2col) {
        typedef CUresult (*enc_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const int *, const int *,
                                  cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);
        r = ((enc_t)fn)(&out, dt, d->rank, const_cast<void *>(d->address), dims, strides,
                        d->lower_corner, d->upper_corner, d->channels_per_pixel,
                        d->pixels_per_column, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, oob);
    } else {
        typedef CUresult (*enc_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
        r = ((enc_t)fn)(&out, dt, d->rank, const_cast<void *>(d->address), dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, oob);
    }
    if (r != CUDA_SUCCESS)
        return convnd_error(CONVND_ERR_DEVICE, "%s failed with CUresult %d", name, (int)r);
    static_assert(sizeof out == sizeof map->opaque, "CUtensorMap is 128 bytes");
    memcpy(map->opaque, &out, sizeof out);
    return CONVND_OK;
}

#endif
