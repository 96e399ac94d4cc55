/* Helpers shared by the emulated-device tests (tests/test_emu_*.cpp). Each test file defines
 * CONVND_EMU before including portability.cuh, so its kernels run on the emulated device. */
#ifndef CONVND_TEST_EMU_UTIL_H
#define CONVND_TEST_EMU_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "convnd.h"
extern "C" {
#include "test_random.h"
}

/* Host buffers the kernels use directly (device memory is host memory on the emulated device),
 * 64-byte aligned as cudaMalloc's would be (WMMA needs 32). */
template <typename T> struct emu_buffer {
    T *p;
    size_t n;
    explicit emu_buffer(size_t count) : n(count) {
        p = static_cast<T *>(aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64));
        memset(p, 0xFF, count * sizeof(T)); /* poison: a value the kernel does not write shows */
    }
    ~emu_buffer() { free(p); }
    emu_buffer(const emu_buffer &) = delete;
    emu_buffer &operator=(const emu_buffer &) = delete;
    T &operator[](size_t i) { return p[i]; }
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
