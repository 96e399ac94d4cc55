/* The implicit-GEMM families' shared host logic: see gemm_tiles.h. */
#include "gemm_tiles.h"

#include "arch.h"
#include "device_services.h"
#include "problem_internal.h"
#include "refuse.h"

/* families/igemm/igemm_limits.cu: a tensor-core configuration's shared memory; whether this build
 * has it. */
size_t convnd_gemm_tc_smem_bytes(int32_t config, int32_t elem_bytes);
int convnd_gemm_tc_built(int32_t config);

int32_t convnd_gemm_tc_first_fitting(convnd_dtype dtype) {
    const size_t have = convnd_device_properties(convnd_active_device())->smem_per_block;
    for (int32_t c = 0; c < CONVND_GEMM_TC_COUNT; ++c)
        if (convnd_gemm_tc_built(c) &&
            convnd_gemm_tc_smem_bytes(c, dtype == CONVND_F32 ? 4 : 2) <= have)
            return c;
    return CONVND_GEMM_TC_COUNT - 1;
}

int32_t convnd_gemm_tc_built_or_refuse(int32_t config, char *reason, size_t reason_len) {
    if (convnd_gemm_tc_built(config)) return 1;
    return convnd_refuse(reason, reason_len,
                         "config %s is not built in this build (CMake CONVND_SKIP_TC_CONFIGS)",
                         convnd_gemm_tc_names[config]);
}

/* The configuration's shared memory against what a block may have on the active device. */
static int32_t gemm_tc_smem_fits(const convnd_conv_params *params, const convnd_gemm_tiles *t,
                                 int32_t config, char *reason, size_t reason_len) {
    const size_t need = convnd_gemm_tc_smem_bytes(config, params->dtype == CONVND_F32 ? 4 : 2);
    const size_t have = convnd_device_properties(convnd_active_device())->smem_per_block;
    if (need <= have) return 1;
    return convnd_refuse(reason, reason_len,
                         "config %s needs %zu bytes of shared memory per block for dtype=%s; "
                         "this device allows %zu",
                         t->names[config], need, convnd_dtype_name((convnd_dtype)params->dtype),
                         have);
}

#define GEMM_NAME(cname, ...) #cname,
#define GEMM_TILE(cname, BM, BN, BK, ...) {BM, BN, BK},
const char *const convnd_gemm_tc_names[] = {CONVND_IGEMM_TC_CONFIGS(GEMM_NAME)};
static const convnd_gemm_tile tc_tiles[] = {CONVND_IGEMM_TC_CONFIGS(GEMM_TILE)};
const char *const convnd_gemm_simt_names[] = {CONVND_IGEMM_SIMT_CONFIGS(GEMM_NAME)};
static const convnd_gemm_tile simt_tiles[] = {CONVND_IGEMM_SIMT_CONFIGS(GEMM_TILE)};
#undef GEMM_NAME
#undef GEMM_TILE

const convnd_gemm_tiles convnd_gemm_tc_tiles = {CONVND_GEMM_TC_COUNT, convnd_gemm_tc_names,
                                                tc_tiles};
const convnd_gemm_tiles convnd_gemm_simt_tiles = {CONVND_GEMM_SIMT_COUNT, convnd_gemm_simt_names,
                                                  simt_tiles};

/* 32-bit indices and the grid's limits on groups and column blocks. */
static int32_t gemm_supports_grid(const convnd_conv_params *params, const convnd_gemm_tile *tile,
                                  const char *who, char *reason, size_t reason_len) {
    if (params->index64) /* the implicit GEMMs index in 32 bits (core/conv_params.c's rule) */
        return convnd_refuse(reason, reason_len,
                             "needs 64-bit indices (x has %lld, w %lld, y %lld elements, or a "
                             "padding this large): %s indexes in 32 bits",
                             (long long)params->x_numel, (long long)params->w_numel,
                             (long long)params->y_numel, who);
    if (params->groups > 65535)
        return convnd_refuse(reason, reason_len, "groups=%lld exceeds the grid's 65535 z blocks",
                             (long long)params->groups);
    if ((params->cout_g + tile->bn - 1) / tile->bn > 65535)
        return convnd_refuse(reason, reason_len,
                             "C_out/groups=%lld needs more than 65535 column blocks of %d",
                             (long long)params->cout_g, (int)tile->bn);
    return 1;
}

int32_t convnd_gemm_supports(const convnd_conv_params *params, const convnd_gemm_tiles *t,
                             int32_t config, int32_t tensor_cores, const char *who,
                             const char *sibling, char *reason, size_t reason_len) {
    if (config < 0 || config >= t->count)
        return convnd_refuse(reason, reason_len, "config %d out of range", (int)config);
    const convnd_dtype dtype = (convnd_dtype)params->dtype;
    if (tensor_cores) {
        if (dtype == CONVND_F32 && !params->allow_tf32)
            return convnd_refuse(reason, reason_len,
                                 "dtype=f32 with math=default (exact FMA): tensor cores need "
                                 "math=ALLOW_TF32 (%s runs exact f32)",
                                 sibling);
        if (dtype != CONVND_F32 && dtype != CONVND_F16 && dtype != CONVND_BF16)
            return convnd_refuse(reason, reason_len, "dtype=%d not supported", (int)dtype);
        if (!gemm_tc_smem_fits(params, t, config, reason, reason_len)) return 0;
    } else if (dtype != CONVND_F32) {
        return convnd_refuse(reason, reason_len,
                             "dtype=%s: %s runs on CUDA cores, f32 only (%s runs f16 and bf16)",
                             convnd_dtype_name(dtype), who, sibling);
    }
    return gemm_supports_grid(params, &t->tiles[config], who, reason, reason_len);
}

int32_t convnd_gemm_worth_routing(const convnd_conv_params *params, convnd_mode mode,
                                  const convnd_gemm_tiles *t, int32_t config) {
    if (params->mode != (int32_t)mode || config < 0 || config >= t->count) return 0;
    const int64_t cin_g = params->cin_g, cout_g = params->cout_g;
    if (cin_g < 8 || cout_g < 8) return 0;
    if (config == t->count - 1) return 1;
    /* fits: validation bounded the element counts */
    const int64_t m = params->N * params->out[0] * params->out[1] * params->out[2];
    const convnd_gemm_tile *tile = &t->tiles[config];
    const double blocks = (double)((m + tile->bm - 1) / tile->bm) *
                          (double)((cout_g + tile->bn - 1) / tile->bn) * (double)params->groups;
    /* about 3/4 of a wave: 96 blocks on an H200's 132 SMs, scaled to the device's */
    return cout_g >= (int64_t)tile->bn * 3 / 4 && cin_g >= tile->bk / 2 &&
           blocks * 132.0 >= 96.0 * (double)convnd_device_sm_count();
}
