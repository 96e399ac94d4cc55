/* The stateful causal conv1d's launchers (families/causal_conv1d/causal_conv1d.cu), called by
 * families/causal_conv1d/causal_conv1d.c through CONVND_LAUNCH: their argument type is the causal launch ABI,
 * not convnd_launch_args. */
#ifndef CONVND_CAUSAL_LAUNCHERS_H
#define CONVND_CAUSAL_LAUNCHERS_H

#include "causal_params.h"
#include "launch_abi.h"

/* The forward kernel's block and tile (the host's grid limit reads them too): 128 threads over
 * tiles of 32 channels x 64 tokens. */
#define CONVND_CAUSAL_THREADS 128
#define CONVND_CAUSAL_TILE_D 32
#define CONVND_CAUSAL_TILE_L 64

#ifdef __cplusplus
extern "C" {
#endif

convnd_status convnd_emu_causal_conv1d(const convnd_causal_launch_args *a);
convnd_status convnd_gpu_causal_conv1d(const convnd_causal_launch_args *a);
convnd_status convnd_emu_causal_conv1d_update(const convnd_causal_launch_args *a);
convnd_status convnd_gpu_causal_conv1d_update(const convnd_causal_launch_args *a);

#ifdef __cplusplus
}
#endif

CONVND_LAUNCHER_TYPE(convnd_causal_launcher, convnd_causal_launch_args);

#endif
