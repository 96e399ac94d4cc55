/* Helpers shared by the emulated-device tests (tests/test_emu_*.cpp). Each test file defines
 * CONVND_EMU before including portability.cuh, so its kernels run on the emulated device.
 *
 * The primitive tests whose kernels are plain CUDA (mma_sync, stmatrix, wgmma, mbarrier, tma) are
 * also built with nvcc into convnd_gpu_conformance (tests/gpu/), with CONVND_CONFORMANCE_GPU
 * defined and CONVND_EMU not: the same kernels and the same checks then run on a GPU, so the
 * emulator's tables and the hardware are checked against each other. Their launches go through
 * emu_launch (synchronous on both devices) and their buffers through emu_buffer (mirrored in device
 * memory on a GPU); tests of emulator-only diagnostics are left out of that build. */
#ifndef CONVND_TEST_EMU_UTIL_H
#define CONVND_TEST_EMU_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "convnd.h"
#ifdef CONVND_CONFORMANCE_GPU
#include <cuda_runtime.h>

#include "error.h"
#endif
extern "C" {
#include "test_random.h"
}

#ifdef CONVND_CONFORMANCE_GPU
/* On a GPU each emu_buffer is a host copy plus plain device memory (no managed memory: the lent
 * machine's rule), kept in a list that emu_launch copies to the device before a launch and back
 * after it. */
struct emu_mirror {
    void *host, *dev;
    size_t bytes;
    emu_mirror *next;
};
static inline emu_mirror *&emu_mirrors() {
    static emu_mirror *head = nullptr;
    return head;
}
static inline void emu_mirrors_copy(bool to_device) {
    for (emu_mirror *m = emu_mirrors(); m; m = m->next) {
        const cudaError_t e = to_device
                                  ? cudaMemcpy(m->dev, m->host, m->bytes, cudaMemcpyHostToDevice)
                                  : cudaMemcpy(m->host, m->dev, m->bytes, cudaMemcpyDeviceToHost);
        cr_assert_eq(e, cudaSuccess, "cudaMemcpy of %zu bytes: %s", m->bytes,
                     cudaGetErrorString(e));
    }
}
#endif

/* Buffers the host fills and reads (operator[], h) and the kernels use (p): on the emulated
 * device one host allocation, 64-byte aligned (cudaMalloc's are at least 256); on a GPU
 * device memory at p mirrored by h. */
template <typename T> struct emu_buffer {
    T *p, *h;
    size_t n;
    explicit emu_buffer(size_t count) : n(count) {
        const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
        h = static_cast<T *>(aligned_alloc(64, bytes));
        p = h;
#ifdef CONVND_CONFORMANCE_GPU
        const cudaError_t e = cudaMalloc(reinterpret_cast<void **>(&p), bytes);
        cr_assert_eq(e, cudaSuccess, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
        mirror = {h, p, bytes, emu_mirrors()};
        emu_mirrors() = &mirror;
#endif
        poison();
    }
    ~emu_buffer() {
#ifdef CONVND_CONFORMANCE_GPU
        for (emu_mirror **m = &emu_mirrors(); *m; m = &(*m)->next)
            if (*m == &mirror) {
                *m = mirror.next;
                break;
            }
        cudaFree(p);
#endif
        free(h);
    }
    emu_buffer(const emu_buffer &) = delete;
    emu_buffer &operator=(const emu_buffer &) = delete;
    T &operator[](size_t i) {
        return h[i];
    }
    /* every byte 0xFF: what a kernel does not write shows (NaN in floats) */
    void poison() {
        memset((void *)h, 0xFF, n * sizeof(T));
    }
#ifdef CONVND_CONFORMANCE_GPU
    emu_mirror mirror;
#endif
};

/* slot[r] for rows r = 0..n-1: a random permutation (Fisher-Yates), so that a primitive taking one
 * row address per lane is fed rows at scattered places rather than in order. */
static inline void emu_shuffled_slots(emu_buffer<int> &slot, int n, test_rng *rng) {
    for (int r = 0; r < n; ++r)
        slot[r] = r;
    for (int r = n - 1; r > 0; --r) {
        const int j = (int)test_rng_int(rng, 0, r), tmp = slot[r];
        slot[r] = slot[j];
        slot[j] = tmp;
    }
}

/* Around a launch: on a GPU the buffers go to the device before it; after it the host waits
 * for the kernel (it reads the results next), a fault becomes a device error, and the buffers
 * come back. The emulated device runs the kernel within the launch, on the buffers. */
static inline void emu_starting() {
#ifdef CONVND_CONFORMANCE_GPU
    emu_mirrors_copy(true);
#endif
}
static inline convnd_status emu_finished(convnd_status st) {
#ifdef CONVND_CONFORMANCE_GPU
    if (st != CONVND_OK) return st;
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        return convnd_error(CONVND_ERR_DEVICE, "kernel failed on the GPU: %s",
                            cudaGetErrorString(e));
    emu_mirrors_copy(false);
#endif
    return st;
}
#define emu_launch(...) (emu_starting(), emu_finished(convnd_launch(__VA_ARGS__)))

static inline const char *emu_order_name(convnd_emu_order o) {
    return o == CONVND_EMU_FORWARD ? "forward" : o == CONVND_EMU_REVERSE ? "reverse" : "shuffle";
}

static inline int emu_contains(const char *haystack, const char *needle) {
    return haystack && strstr(haystack, needle) != NULL;
}

/* A launch the emulated device must refuse: a device error whose message contains `needle`. */
static inline void emu_expect_device_error(convnd_status st, const char *needle) {
    cr_assert_eq(st, CONVND_ERR_DEVICE, "status %d, expected a device error about \"%s\"", (int)st,
                 needle);
    cr_assert(emu_contains(convnd_last_error(), needle), "%s", convnd_last_error());
}

#endif
