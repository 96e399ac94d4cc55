/* The Hopper implicit GEMM (families/hopper_igemm/hopper_igemm.cu), seen from its host side
 * (families/hopper_igemm/hopper_igemm.c). Plain C. */
#ifndef CONVND_HOPPER_IGEMM_H
#define CONVND_HOPPER_IGEMM_H

#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The configurations, one line each: X(ENUM, NAME, BN, STAGES); BM = 128, BK = 128 bytes of
 * channels (64 f16/bf16, 32 tf32). The enum, the names, the kernel's instances and the tests
 * come from this list. */
#define CONVND_HOPPER_CONFIGS(X)                                                                   \
    X(CONVND_HOPPER_128x256, "128x256x64_s4", 256, 4) /* for wide C_out */                         \
    X(CONVND_HOPPER_128x128, "128x128x64_s6", 128, 6) /* C_out <= 128 */

#define CONVND_HOPPER_ENUM(e, name, bn, stages) e,
typedef enum convnd_hopper_config {
    CONVND_HOPPER_CONFIGS(CONVND_HOPPER_ENUM) CONVND_HOPPER_COUNT
} convnd_hopper_config;
#undef CONVND_HOPPER_ENUM

#define CONVND_HOPPER_BM 128
#define CONVND_HOPPER_THREADS 384   /* 1 producer + 2 consumer warpgroups */
#define CONVND_HOPPER_ROW_BYTES 128 /* a K block of one row: the 128B swizzle span */
#define CONVND_HOPPER_BN_OF(e, name, bn, stages) config == e ? bn:
#define CONVND_HOPPER_STAGES_OF(e, name, bn, stages) config == e ? stages:
static inline int32_t convnd_hopper_bn(int32_t config) {
    return CONVND_HOPPER_CONFIGS(CONVND_HOPPER_BN_OF) 0;
}
static inline int32_t convnd_hopper_stages(int32_t config) {
    return CONVND_HOPPER_CONFIGS(CONVND_HOPPER_STAGES_OF) 0;
}
#undef CONVND_HOPPER_BN_OF
#undef CONVND_HOPPER_STAGES_OF
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
