/* The schedule registry's entry type. One table (registry.c) drives conv_nd's dispatch, the
 * planner, the benchmark's list and the forced-schedule tests' parameter list. */
#ifndef CONVND_SCHEDULE_H
#define CONVND_SCHEDULE_H

#include <stddef.h>
#include "convnd.h"
#include "conv_params.h"
#include "error.h"

/* Everything a launch needs. The problem is validated, y_layout resolved. */
typedef struct convnd_launch_args {
    const convnd_problem *problem;
    convnd_conv_params params;
    const void *x, *w, *bias, *z;
    void *y;
    void *workspace;
    size_t workspace_bytes;
    void *stream;
    int32_t config;
    convnd_device device; /* GPU or EMULATED */
} convnd_launch_args;

typedef struct convnd_schedule {
    const char *name;
    int32_t num_configs;
    const char *const *config_names;
    /* 1 if it can run p with this config; else 0 and a human-readable reason. */
    int32_t (*supports)(const convnd_problem *p, int32_t config, char *reason, size_t reason_len);
    /* 1 when it should beat the universal fallback on p (the planner's hint). */
    int32_t (*worth_routing)(const convnd_problem *p, int32_t config);
    /* Scratch bytes taken from the caller's workspace. NULL means none. */
    size_t (*workspace_size)(const convnd_problem *p, int32_t config);
    convnd_status (*launch)(const convnd_launch_args *a);
} convnd_schedule;

/* The table, in planner priority order. */
extern const convnd_schedule *const convnd_schedule_table[];
extern const int32_t convnd_schedule_table_size;

/* Kernel launchers live in kernels/NAME.cu, compiled twice: with nvcc (convnd_gpu_NAME) and with
 * the host C++ compiler for the emulated device (convnd_emu_NAME). */
#define CONVND_DECLARE_LAUNCHER(name)                                                              \
    convnd_status convnd_emu_##name(const convnd_launch_args *a);                                  \
    convnd_status convnd_gpu_##name(const convnd_launch_args *a)

#ifdef CONVND_HAVE_CUDA
#define CONVND_CALL_LAUNCHER(name, a)                                                              \
    ((a)->device == CONVND_DEVICE_GPU ? convnd_gpu_##name(a) : convnd_emu_##name(a))
#else
#define CONVND_CALL_LAUNCHER(name, a)                                                              \
    ((a)->device == CONVND_DEVICE_GPU ? convnd_error(CONVND_ERR_DEVICE,                            \
                                                     "%s: the active device is the GPU (%s), but " \
                                                     "convnd was built without CUDA",              \
                                                     #name, convnd_device_name())                  \
                                      : convnd_emu_##name(a))
#endif

#endif
