/* The launch ABI: what a schedule's host side hands a kernel launcher. Plain C, read by the host
 * (schedules/) and by every families/FAMILY/NAME.cu; the problem model's only face kernels see. */
#ifndef CONVND_LAUNCH_ABI_H
#define CONVND_LAUNCH_ABI_H

#include <stddef.h>
#include "conv_params.h"
#include "convnd.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything a launch needs: the launch parameters of a validated problem (y_layout resolved),
 * never the problem itself, and the buffers. */
typedef struct convnd_launch_args {
    convnd_conv_params params;
    const void *x, *w, *bias, *z;
    void *y;
    const void *x_prefix; /* SPEC §12, when params.prefix_len > 0 */
    const void *x_suffix; /* SPEC §14, when params.suffix_len > 0 */
    void *state;          /* SPEC §12, when params.state_len > 0; §13: the causal states */
    /* SPEC §13 (params.sequences): a stateful causal conv1d's int32 index tensors */
    const int32_t *seq_idx, *query_start_loc, *cache_seqlens, *state_indices;
    /* SPEC §15 (params.prologue): the f32 operands its steps read, NULL for those none reads */
    const float *pro_r, *pro_a, *pro_b;
    void *workspace;
    size_t workspace_bytes;
    void *stream;
    int32_t config;
    convnd_device device; /* GPU or EMULATED */
} convnd_launch_args;

#ifdef __cplusplus
}
#endif

/* Kernel launchers live in families/FAMILY/NAME.cu, compiled twice: with nvcc (convnd_gpu_NAME) and
 * with the host C++ compiler for the emulated device (convnd_emu_NAME). A schedule's host file
 * declares the ones it calls with CONVND_KERNEL(NAME) (schedules/schedule.h); no list of them is
 * kept anywhere else. */
#define CONVND_DECLARE_LAUNCHER(name)                                                              \
    convnd_status convnd_emu_##name(const convnd_launch_args *a);                                  \
    convnd_status convnd_gpu_##name(const convnd_launch_args *a)

#ifdef __cplusplus
/* families/FAMILY/NAME.cu: `CONVND_DEFINE_LAUNCHER(NAME) { ... }` defines this build's launcher
 * (CONVND_LAUNCHER(NAME): convnd_gpu_NAME or convnd_emu_NAME), declared first with the ABI the
 * host calls, so the compiler checks the definition against it. */
#define CONVND_DEFINE_LAUNCHER(name)                                                               \
    extern "C" {                                                                                   \
    CONVND_DECLARE_LAUNCHER(name);                                                                 \
    }                                                                                              \
    extern "C" convnd_status CONVND_LAUNCHER(name)(const convnd_launch_args *a)
#endif

/* The one answer of a launch for the GPU in a build without CUDA. */
#define CONVND_NO_CUDA_ERROR(name)                                                                 \
    convnd_error(CONVND_ERR_DEVICE,                                                                \
                 "%s: the active device is the GPU (%s), but convnd was built without CUDA", name, \
                 convnd_device_name())

/* A launcher as data: both builds of one kernel and its name, for a launch ABI `args` (the
 * schedules' convnd_launch_args, or a kernel family's own: im2col.h, causal_launchers.h). The one
 * way host code launches a kernel: CONVND_LAUNCH(&launcher, a), where a->device picks the build
 * and a build without CUDA answers CONVND_NO_CUDA_ERROR. */
#define CONVND_LAUNCHER_TYPE(type, args)                                                           \
    typedef struct type {                                                                          \
        convnd_status (*emu)(const args *a);                                                       \
        convnd_status (*gpu)(const args *a); /* NULL without CUDA */                               \
        const char *name;                                                                          \
    } type

#ifdef CONVND_HAVE_CUDA
#define CONVND_LAUNCHER_OF(name)                                                                   \
    { convnd_emu_##name, convnd_gpu_##name, #name }
#else
#define CONVND_LAUNCHER_OF(name)                                                                   \
    { convnd_emu_##name, NULL, #name }
#endif

#define CONVND_LAUNCH(l, a)                                                                        \
    ((a)->device != CONVND_DEVICE_GPU ? (l)->emu(a)                                                \
     : (l)->gpu                       ? (l)->gpu(a)                                                \
                                      : CONVND_NO_CUDA_ERROR((l)->name))

CONVND_LAUNCHER_TYPE(convnd_launcher, convnd_launch_args);

#endif
