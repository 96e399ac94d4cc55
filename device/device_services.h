/* What the layers above need from a device besides kernels and memory: its properties (queried
 * once), a count of device allocations (so tests can prove a path allocates nothing), and
 * timing one run (CUDA events on the GPU, the host clock on the emulated device). Everything
 * that talks to the CUDA runtime lives in device/. */
#ifndef CONVND_DEVICE_SERVICES_H
#define CONVND_DEVICE_SERVICES_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_device_props {
    char name[256];
    int32_t cc_major, cc_minor;
    int32_t sm_count;
    size_t smem_per_block; /* opt-in maximum */
    int32_t driver_version; /* cudaDriverGetVersion (12080 for 12.8); 0 on the emulated device */
} convnd_device_props;

/* Properties of device d (GPU: the current CUDA device; emulated: the sm_90 it emulates, an
 * H200's 132 SMs), queried once per process and read-only after. */
const convnd_device_props *convnd_device_properties(convnd_device d);

/* Device allocations made so far through convnd_malloc, on either device. */
uint64_t convnd_device_allocations(void);
void convnd_device_count_allocation(void);

/* Milliseconds of one run(ctx) on stream after a warm-up run. A run that fails returns its
 * status. */
convnd_status convnd_device_time(convnd_device d, void *stream, convnd_status (*run)(void *ctx),
                                 void *ctx, float *ms);

/* Host-overhead measurement (convnd-bench --host-overhead): 1 makes every emulated launch return
 * right after its configuration is checked, running no block. Never set outside that benchmark. */
void convnd_emu_set_skip_launches(int32_t skip);

#ifdef __cplusplus
}
#endif

#endif
