/* The split counts of the split-K weight-gradient schedules, shared by their registry entries
 * (schedules/wgrad*.c, which size the workspace) and their launchers (families/wgrad/wgrad*.cu, which cut
 * the reduction). */
#ifndef CONVND_WGRAD_SPLIT_H
#define CONVND_WGRAD_SPLIT_H

#include <stdint.h>
#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of reduction chunks of configuration `config` for p (a WGRAD problem): the config's
 * split count, capped by the reduction length N * prod(O) (at least 1). 0 for an unknown config. */
int64_t convnd_wgrad_splits(const convnd_conv_params *p, int32_t config);

/* Number of reduction chunks of the implicit-GEMM wgrad (a WGRAD problem, BK reduction positions
 * per k-tile): max_splits capped by the number of k-tiles, at least 1. */
static inline int64_t convnd_wgrad_igemm_splits(const convnd_conv_params *p, int64_t max_splits,
                                                int64_t bk) {
    const int64_t R = p->N * p->out[0] * p->out[1] * p->out[2];
    const int64_t ktiles = (R + bk - 1) / bk;
    const int64_t s = max_splits < ktiles ? max_splits : ktiles;
    return s < 1 ? 1 : s;
}

/* wgrad_depthwise's configurations X(name, most chunks), listed once for the registry
 * (families/wgrad/wgrad_depthwise.c) and the launcher (families/wgrad/wgrad_depthwise.cu). */
#define CONVND_WGRAD_DEPTHWISE_CONFIGS(X) X(s1, 1) X(s16, 16) X(s64, 64)

/* Number of reduction chunks of wgrad_depthwise configuration `config`: its count capped by the
 * reduction length N * prod(O), at least 1; 0 for an unknown config. */
static inline int64_t convnd_wgrad_depthwise_splits(const convnd_conv_params *p, int32_t config) {
    int64_t s = 0;
    int32_t index = 0;
#define CONVND_WGRAD_DEPTHWISE_COUNT(name, count)                                                  \
    if (config == index++) s = count;
    CONVND_WGRAD_DEPTHWISE_CONFIGS(CONVND_WGRAD_DEPTHWISE_COUNT)
#undef CONVND_WGRAD_DEPTHWISE_COUNT
    if (s == 0) return 0;
    const int64_t R = p->N * p->out[0] * p->out[1] * p->out[2];
    return R < 1 ? 1 : (s < R ? s : R);
}

#ifdef __cplusplus
}
#endif

#endif
