/* Device properties (queried once), the device allocation count and one-run timing. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device_services.h"
#include "emu.h"
#include "error.h"

#ifdef CONVND_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static pthread_once_t props_once[2] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static convnd_device_props props[2]; /* [0] GPU, [1] emulated */

static void query_emulated(void) {
    convnd_device_props *e = &props[1];
    snprintf(e->name, sizeof e->name, "emulated sm_90");
    e->cc_major = 9;
    e->cc_minor = 0;
    e->sm_count = 132; /* the H200 whose limits the emulator enforces */
    e->smem_per_block = CONVND_EMU_MAX_SMEM;
}

static void query_gpu(void) {
    convnd_device_props *g = &props[0];
    *g = (convnd_device_props){
        .name = "CUDA GPU", .cc_major = 9, .sm_count = 132, .smem_per_block = CONVND_EMU_MAX_SMEM};
#ifdef CONVND_HAVE_CUDA
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
        snprintf(g->name, sizeof g->name, "%s", prop.name);
        g->cc_major = prop.major;
        g->cc_minor = prop.minor;
        g->sm_count = prop.multiProcessorCount;
        g->smem_per_block = prop.sharedMemPerBlockOptin;
    }
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess) g->driver_version = driver;
    (void)cudaGetLastError();
#endif
}

const convnd_device_props *convnd_device_properties(convnd_device d) {
    const int i = d == CONVND_DEVICE_GPU ? 0 : 1;
    pthread_once(&props_once[i], i == 0 ? query_gpu : query_emulated);
    return &props[i];
}

static uint64_t allocations;

uint64_t convnd_device_allocations(void) {
    return __atomic_load_n(&allocations, __ATOMIC_RELAXED);
}

void convnd_device_count_allocation(void) {
    __atomic_add_fetch(&allocations, 1, __ATOMIC_RELAXED);
}

static double host_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

convnd_status convnd_device_time(convnd_device d, void *stream, convnd_status (*run)(void *ctx),
                                 void *ctx, float *ms) {
    convnd_status st = run(ctx); /* warm-up */
    if (st != CONVND_OK) return st;
#ifdef CONVND_HAVE_CUDA
    if (d == CONVND_DEVICE_GPU) {
        cudaEvent_t start, stop;
        if (cudaEventCreate(&start) != cudaSuccess)
            return convnd_error(CONVND_ERR_DEVICE, "cudaEventCreate failed");
        if (cudaEventCreate(&stop) != cudaSuccess) {
            cudaEventDestroy(start);
            return convnd_error(CONVND_ERR_DEVICE, "cudaEventCreate failed");
        }
        cudaStream_t s = (cudaStream_t)stream;
        st = cudaEventRecord(start, s) == cudaSuccess ? run(ctx) : CONVND_ERR_DEVICE;
        if (st == CONVND_OK &&
            (cudaEventRecord(stop, s) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
             cudaEventElapsedTime(ms, start, stop) != cudaSuccess))
            st = convnd_error(CONVND_ERR_DEVICE, "timing with CUDA events failed");
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        (void)cudaGetLastError();
        return st;
    }
#endif
    (void)d;
    (void)stream;
    const double t0 = host_ms();
    st = run(ctx); /* the emulated device runs a launch to completion */
    *ms = (float)(host_ms() - t0);
    return st;
}
