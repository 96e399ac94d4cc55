/* The Hopper implicit GEMM (kernels/hopper_igemm.cu), seen from its host side
 * (schedules/hopper_igemm.c). Plain C. */
#ifndef CONVND_HOPPER_IGEMM_H
#define CONVND_HOPPER_IGEMM_H

#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configurations: BM x BN x BK (BK = 128 bytes of channels: 64 f16/bf16, 32 tf32), stages. */
typedef enum convnd_hopper_config {
    CONVND_HOPPER_128x256 = 0, /* 4 stages, for wide C_out */
    CONVND_HOPPER_128x128 = 1, /* 6 stages, C_out <= 128 */
    CONVND_HOPPER_COUNT = 2
} convnd_hopper_config;

#define CONVND_HOPPER_BM 128
#define CONVND_HOPPER_THREADS 384   /* 1 producer + 2 consumer warpgroups */
#define CONVND_HOPPER_ROW_BYTES 128 /* a K block of one row: the 128B swizzle span */
static inline int32_t convnd_hopper_bn(int32_t config) {
    return config == CONVND_HOPPER_128x256 ? 256 : 128;
}
static inline int32_t convnd_hopper_stages(int32_t config) {
    return config == CONVND_HOPPER_128x256 ? 4 : 6;
}
/* Dynamic shared memory: the A and B ring, two 64-row epilogue staging tiles, the full and empty
 * mbarriers, and 1 KiB to align the base for the 128B swizzle. */
static inline uint32_t convnd_hopper_smem_bytes(int32_t config) {
    const uint32_t stage =
        (CONVND_HOPPER_BM + (uint32_t)convnd_hopper_bn(config)) * CONVND_HOPPER_ROW_BYTES;
    return (uint32_t)convnd_hopper_stages(config) * (stage + 16) +
           2 * 64 * CONVND_HOPPER_ROW_BYTES + 1024;
}

#ifdef __cplusplus
}
#endif

#endif
