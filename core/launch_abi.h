/* The launch ABI: what a schedule's host side hands a kernel launcher. Plain C, read by the host
 * (schedules/) and by every kernels/NAME.cu; the problem model's only face kernels see. */
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
    void *state;          /* SPEC §12, when params.state_len > 0 */
    void *workspace;
    size_t workspace_bytes;
    void *stream;
    int32_t config;
    convnd_device device; /* GPU or EMULATED */
} convnd_launch_args;

#ifdef __cplusplus
}
#endif

/* Kernel launchers live in kernels/NAME.cu, compiled twice: with nvcc (convnd_gpu_NAME) and with
 * the host C++ compiler for the emulated device (convnd_emu_NAME). */
#define CONVND_DECLARE_LAUNCHER(name)                                                              \
    convnd_status convnd_emu_##name(const convnd_launch_args *a);                                  \
    convnd_status convnd_gpu_##name(const convnd_launch_args *a)

/* The one answer of a launch for the GPU in a build without CUDA (CONVND_CALL_LAUNCHER and
 * schedules/schedule.h's convnd_launch_on both give it). */
#define CONVND_NO_CUDA_ERROR(name)                                                                 \
    convnd_error(CONVND_ERR_DEVICE,                                                                \
                 "%s: the active device is the GPU (%s), but convnd was built without CUDA", name, \
                 convnd_device_name())

#ifdef CONVND_HAVE_CUDA
#define CONVND_CALL_LAUNCHER(name, a)                                                              \
    ((a)->device == CONVND_DEVICE_GPU ? convnd_gpu_##name(a) : convnd_emu_##name(a))
#else
#define CONVND_CALL_LAUNCHER(name, a)                                                              \
    ((a)->device == CONVND_DEVICE_GPU ? CONVND_NO_CUDA_ERROR(#name) : convnd_emu_##name(a))
#endif

#endif
