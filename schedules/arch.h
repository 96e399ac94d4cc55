/* The GPU architectures a schedule runs on (SPEC-independent, issue #13 item 6).
 *
 * Each schedule declares the oldest compute capability its kernels need (min_sm, e.g. 80 for
 * sm_80) and what they need from it; a GPU runs the schedule when it is at least that new and
 * the build carries code it can load: SASS of the same major version and an older or equal minor,
 * or PTX for an older or equal virtual architecture (CONVND_CUDA_ARCHS, from CMake's
 * CMAKE_CUDA_ARCHITECTURES). The emulated device runs every kernel (sm 0 below). */
#ifndef CONVND_ARCH_H
#define CONVND_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compute capability x 10 of the device kernels run on now (90 for sm_90), 0 on the emulated
 * device (device_services.h's properties). */
int32_t convnd_device_sm(void);

/* Streaming multiprocessors of the device kernels run on now (the emulated device: the H200's
 * 132 it emulates); what the planner's "fills the GPU" rules count against. */
int32_t convnd_device_sm_count(void);

/* 1 when the build's architectures (CMake's list, ';' or ',' separated: "80-real,89-real,90")
 * carry code a device of compute capability sm can load; else 0 and why. */
int32_t convnd_build_runs_on(const char *cuda_archs, int32_t sm, char *reason, size_t reason_len);

/* 1 when schedule s runs on a device of compute capability sm (0: the emulated device) with a
 * build for cuda_archs; else 0 and a reason naming the schedule, the device and what it needs. */
int32_t convnd_schedule_arch_ok(const convnd_schedule *s, int32_t sm, const char *cuda_archs,
                                char *reason, size_t reason_len);

/* The architectures this library was built for (CONVND_CUDA_ARCHS; "" without CUDA) and the
 * build's default list (CMakeLists.txt's CONVND_DEFAULT_CUDA_ARCHITECTURES). */
const char *convnd_built_cuda_archs(void);
const char *convnd_default_cuda_archs(void);

/* s->supports(), refused first on a device the schedule does not run on: what the planner,
 * forced schedules and autotune ask. */
int32_t convnd_schedule_supports_here(const convnd_schedule *s, const convnd_problem *p,
                                      const convnd_conv_params *params, int32_t config,
                                      char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif
