/* Helpers shared by the emulated-device tests (tests/test_emu_*.cpp). Each test file defines
 * CONVND_EMU before including portability.cuh, so its kernels run on the emulated device.
 *
 * The primitive tests whose kernels are plain CUDA (mma_sync, stmatrix, wgmma) are also built with
 * nvcc into convnd_gpu_conformance (tests/gpu/), with CONVND_CONFORMANCE_GPU defined and
 * CONVND_EMU not: the same kernels and the same checks then run on a GPU, so the emulator's
 * tables and the hardware are checked against each other. Their launches go through emu_launch
 * (synchronous on both devices) and their buffers through emu_buffer (managed memory on a GPU);
 * tests of emulator-only diagnostics are left out of that build. */
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

/* Buffers the host fills and reads and the kernels use directly: host memory on the emulated
 * device, 64-byte aligned as cudaMalloc's would be (WMMA needs 32); managed memory on a GPU. */
template <typename T> struct emu_buffer {
    T *p;
    size_t n;
    explicit emu_buffer(size_t count) : n(count) {
        const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
#ifdef CONVND_CONFORMANCE_GPU
        void *m = nullptr;
        const cudaError_t e = cudaMallocManaged(&m, bytes);
        cr_assert_eq(e, cudaSuccess, "cudaMallocManaged(%zu): %s", bytes, cudaGetErrorString(e));
        p = static_cast<T *>(m);
#else
        p = static_cast<T *>(aligned_alloc(64, bytes));
#endif
        memset((void *)p, 0xFF, count * sizeof(T)); /* poison: what the kernel misses shows */
    }
#ifdef CONVND_CONFORMANCE_GPU
    ~emu_buffer() {
        cudaFree(p);
    }
#else
    ~emu_buffer() {
        free(p);
    }
#endif
    emu_buffer(const emu_buffer &) = delete;
    emu_buffer &operator=(const emu_buffer &) = delete;
    T &operator[](size_t i) {
        return p[i];
    }
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

/* A launch's status once the kernel has finished: the emulated device runs it within the launch;
 * on a GPU the host waits for it (it reads the results next), and a fault becomes a device
 * error. */
static inline convnd_status emu_finished(convnd_status st) {
#ifdef CONVND_CONFORMANCE_GPU
    if (st != CONVND_OK) return st;
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        return convnd_error(CONVND_ERR_DEVICE, "kernel failed on the GPU: %s",
                            cudaGetErrorString(e));
#endif
    return st;
}
#define emu_launch(...) emu_finished(convnd_launch(__VA_ARGS__))

/* The thread orders of a primitive test, `for (convnd_emu_order o : emu_orders())` then
 * emu_set_order(o, 1): forward and reverse on the emulated device; on a GPU one pass, in the
 * hardware's order. */
struct emu_order_list {
    const convnd_emu_order *first, *last;
    const convnd_emu_order *begin() const { return first; }
    const convnd_emu_order *end() const { return last; }
};
static inline emu_order_list emu_orders() {
    static const convnd_emu_order both[2] = {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE};
#ifdef CONVND_CONFORMANCE_GPU
    return {both, both + 1};
#else
    return {both, both + 2};
#endif
}
static inline void emu_set_order(convnd_emu_order o, unsigned seed) {
#ifdef CONVND_CONFORMANCE_GPU
    (void)o, (void)seed;
#else
    convnd_emu_set_order(o, seed);
#endif
}

static inline const char *emu_order_name(convnd_emu_order o) {
#ifdef CONVND_CONFORMANCE_GPU
    (void)o;
    return "gpu";
#else
    return o == CONVND_EMU_FORWARD ? "forward" : o == CONVND_EMU_REVERSE ? "reverse" : "shuffle";
#endif
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
