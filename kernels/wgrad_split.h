/* The wgrad_splitk schedule's split count, shared by its registry entry (schedules/wgrad.c, which
 * sizes the workspace) and its launcher (kernels/wgrad.cu, which cuts the reduction). */
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

#ifdef __cplusplus
}
#endif

#endif
