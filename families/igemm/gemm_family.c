/* The GEMM families' shared parts (gemm_family.h): the forward-GEMM tile skeleton, the launch by
 * dtype. */
#include "gemm_family.h"

#include <inttypes.h>

#include "igemm_configs.h"
#include "refuse.h"

static const convnd_gemm_tiles *tiles_of(convnd_gemm_variant v) {
    return v == CONVND_GEMM_TC ? &convnd_gemm_tc_tiles : &convnd_gemm_simt_tiles;
}

/* A prefix, a suffix or a state (SPEC §12, §14; views_support.c has checked that the family
 * reads them): only the configurations with the prefix kernel instance (igemm_io_kernel). */
static int32_t gemm_prefix_state_fits(const convnd_gemm_family *f, convnd_gemm_variant v,
                                      const convnd_conv_params *params, int32_t config,
                                      char *reason, size_t reason_len) {
    if (params->io_dim < 0 || !f->prefix_state) return 1;
    const convnd_gemm_tiles *t = tiles_of(v);
    if (t->tiles[config].bk <= CONVND_IGEMM_IO_MAX_BK) return 1;
    return convnd_refuse(
        reason, reason_len,
        "config %s (BK=%d) has no prefix/state kernel (prefix_size=%" PRId64
        ", suffix_size=%" PRId64 ", state_size=%" PRId64 "): %s builds it for BK <= %d",
        t->names[config], (int)t->tiles[config].bk, params->prefix_len, params->suffix_len,
        params->state_len, f->names[v], CONVND_IGEMM_IO_MAX_BK);
}

int32_t convnd_gemm_tiles_supports(const convnd_gemm_family *f, convnd_gemm_variant v,
                                   const convnd_conv_params *params, int32_t config, char *reason,
                                   size_t reason_len) {
    return f->refuses(params, reason, reason_len) &&
           convnd_gemm_supports(params, tiles_of(v), config, v == CONVND_GEMM_TC, f->names[v],
                                f->names[1 - v], reason, reason_len) &&
           gemm_prefix_state_fits(f, v, params, config, reason, reason_len) &&
           (v != CONVND_GEMM_TC || convnd_gemm_tc_built_or_refuse(config, reason, reason_len));
}

int32_t convnd_gemm_tiles_worth_routing(const convnd_gemm_family *f, convnd_gemm_variant v,
                                        const convnd_conv_params *params, int32_t config) {
    return convnd_gemm_worth_routing(params, f->mode, tiles_of(v), config);
}

convnd_status convnd_gemm_family_launch(const convnd_gemm_family *f, convnd_gemm_variant v,
                                        const convnd_launch_args *a) {
    if (f->launch) return f->launch(f, v, a);
    const int32_t by_dtype = a->params.dtype == CONVND_F16    ? 0
                             : a->params.dtype == CONVND_BF16 ? 1
                                                              : 2;
    return CONVND_LAUNCH(&f->kernels[v][by_dtype], a);
}
