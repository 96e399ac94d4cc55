/* The device runtime (selection, memory helpers) and the kernels' 16-bit conversions. */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"

namespace {

__global__ void scale_kernel(const float *x, float *y, int n) {
    const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

uint16_t half_bits(float f) {
    return convnd_from_f32<convnd_half>(f).bits;
}
uint16_t bf16_bits(float f) {
    return convnd_from_f32<convnd_bf16>(f).bits;
}

} // namespace

Test(emu_runtime, forced_emulated_device_round_trips_memory) {
    cr_assert_eq(convnd_set_device(CONVND_DEVICE_EMULATED), CONVND_OK);
    cr_assert_eq(convnd_active_device(), CONVND_DEVICE_EMULATED);
    cr_assert(emu_contains(convnd_device_name(), "emulated"), "%s", convnd_device_name());
    const int n = 1000;
    float host[n], back[n];
    for (int i = 0; i < n; ++i)
        host[i] = (float)i * 0.5f - 3.0f;
    void *x = nullptr, *y = nullptr, *z = nullptr;
    cr_assert_eq(convnd_malloc(&x, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_malloc(&y, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_malloc(&z, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_memcpy_h2d(x, host, sizeof host), CONVND_OK);
    cr_assert_eq(convnd_memset(y, 0xFF, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_launch(scale_kernel, dim3((n + 127) / 128), dim3(128), 0, nullptr,
                               (const float *)x, (float *)y, n),
                 CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_synchronize(nullptr), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2d(z, y, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2h(back, z, sizeof back), CONVND_OK);
    for (int i = 0; i < n; ++i)
        cr_assert_eq(back[i], 2.0f * host[i] + 1.0f, "element %d", i);
    cr_assert_eq(convnd_memset(z, 0, n * sizeof(float)), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2h(back, z, sizeof back), CONVND_OK);
    for (int i = 0; i < n; ++i)
        cr_assert_eq(back[i], 0.0f);
    cr_assert_eq(convnd_free(x), CONVND_OK);
    cr_assert_eq(convnd_free(y), CONVND_OK);
    cr_assert_eq(convnd_free(z), CONVND_OK);
    cr_assert_eq(convnd_free(nullptr), CONVND_OK);
}

Test(emu_runtime, null_pointers_and_bad_devices_are_errors) {
    cr_assert_eq(convnd_set_device(CONVND_DEVICE_EMULATED), CONVND_OK);
    float f = 0.0f;
    cr_assert_eq(convnd_malloc(nullptr, 4), CONVND_ERR_NULL_POINTER);
    cr_assert_eq(convnd_memcpy_h2d(nullptr, &f, 4), CONVND_ERR_NULL_POINTER);
    cr_assert(emu_contains(convnd_last_error(), "dst"), "%s", convnd_last_error());
    cr_assert_eq(convnd_memcpy_d2h(&f, nullptr, 4), CONVND_ERR_NULL_POINTER);
    cr_assert_eq(convnd_memset(nullptr, 0, 4), CONVND_ERR_NULL_POINTER);
    cr_assert_eq(convnd_set_device((convnd_device)7), CONVND_ERR_INVALID_ARGUMENT);
    /* Asking for the GPU either gets it or is an error that says why, never a silent
     * fallback to the CPU. */
    const convnd_status gpu = convnd_set_device(CONVND_DEVICE_GPU);
    if (gpu == CONVND_OK) {
        cr_assert_eq(convnd_active_device(), CONVND_DEVICE_GPU);
    } else {
        cr_assert_eq(gpu, CONVND_ERR_DEVICE);
        cr_assert(emu_contains(convnd_last_error(), "asks for the GPU, but"), "%s",
                  convnd_last_error());
        cr_assert_eq(convnd_active_device(), CONVND_DEVICE_EMULATED);
    }
#ifndef CONVND_HAVE_CUDA
    cr_assert_eq(gpu, CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "without CUDA"), "%s", convnd_last_error());
#endif
}

Test(emu_runtime, environment_selects_the_device) {
    setenv("CONVND_DEVICE", "emulated", 1);
    cr_assert_eq(convnd_active_device(), CONVND_DEVICE_EMULATED);
}

Test(emu_runtime, environment_with_an_unknown_device_makes_memory_calls_fail) {
    setenv("CONVND_DEVICE", "tpu", 1);
    void *p = nullptr;
    cr_assert_eq(convnd_malloc(&p, 16), CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "CONVND_DEVICE=tpu"), "%s", convnd_last_error());
    /* An explicit choice overrides it. */
    cr_assert_eq(convnd_set_device(CONVND_DEVICE_EMULATED), CONVND_OK);
    cr_assert_eq(convnd_malloc(&p, 16), CONVND_OK);
    cr_assert_eq(convnd_free(p), CONVND_OK);
}

Test(emu_runtime, half_conversion_rounds_to_nearest_even) {
    cr_assert_eq(half_bits(1.0f), 0x3C00);
    cr_assert_eq(half_bits(-2.0f), 0xC000);
    cr_assert_eq(half_bits(65504.0f), 0x7BFF);
    cr_assert_eq(half_bits(65519.0f), 0x7BFF);
    cr_assert_eq(half_bits(65520.0f), 0x7C00);            /* tie to even overflows */
    cr_assert_eq(half_bits(1.0f + 0x1p-11f), 0x3C00);     /* tie: stays even */
    cr_assert_eq(half_bits(1.0f + 3 * 0x1p-11f), 0x3C02); /* tie: up to even */
    cr_assert_eq(half_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
    cr_assert_eq(half_bits(0x1p-24f), 0x0001); /* smallest subnormal */
    cr_assert_eq(half_bits(0x1p-25f), 0x0000); /* tie to even: zero */
    cr_assert_eq(half_bits(0x1.8p-25f), 0x0001);
    cr_assert_eq(half_bits(0x1.8p-24f), 0x0002); /* tie between 1 and 2 subnormal units: even */
    cr_assert_eq(half_bits(0x1p-14f - 0x1p-26f), 0x0400); /* rounds up to the smallest normal */
    cr_assert_eq(half_bits(-0.0f), 0x8000);
    cr_assert_eq(half_bits(INFINITY), 0x7C00);
    cr_assert_eq(half_bits(-1e10f), 0xFC00);
    cr_assert((half_bits(NAN) & 0x7C00) == 0x7C00 && (half_bits(NAN) & 0x3FF) != 0);
    /* Every finite half survives a trip through f32. */
    for (uint32_t b = 0; b < 0x10000; ++b) {
        if ((b & 0x7C00) == 0x7C00 && (b & 0x3FF)) continue; /* NaN */
        const float f = convnd_to_f32(convnd_half{(uint16_t)b});
        cr_assert_eq(half_bits(f), b, "half 0x%04x -> %g -> 0x%04x", b, f, half_bits(f));
    }
}

Test(emu_runtime, bf16_conversion_rounds_to_nearest_even) {
    cr_assert_eq(bf16_bits(1.0f), 0x3F80);
    cr_assert_eq(bf16_bits(1.0f + 0x1p-8f), 0x3F80);     /* tie: even */
    cr_assert_eq(bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82); /* tie: up to even */
    cr_assert_eq(bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
    cr_assert_eq(bf16_bits(3.4e38f), 0x7F80); /* rounds past the largest finite */
    cr_assert_eq(bf16_bits(-INFINITY), 0xFF80);
    cr_assert((bf16_bits(NAN) & 0x7F80) == 0x7F80 && (bf16_bits(NAN) & 0x7F) != 0);
    cr_assert_eq(convnd_to_f32(convnd_bf16{0x4049}), 3.140625f);
    cr_assert_eq(convnd_to_f32(convnd_half{0x3555}), 0.333251953125f);
    cr_assert_eq(convnd_to_f32(convnd_half{0x0001}), 0x1p-24f);
}
