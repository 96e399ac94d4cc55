/* Plain vector loads and stores on the emulated device (convnd_ld_vec / convnd_st_vec): they move
 * the whole vector, and an address without the vector's alignment is reported as the GPU would
 * fault on it, in global and in shared memory, with nothing stored. */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"

namespace {

/* Each thread copies one 16-byte vector through shared memory, and one 8-byte vector directly. */
__global__ void copy_vectors_kernel(const float *g, float *out, const float *g2, float *out2) {
    CONVND_SHARED(float4, s, [32]);
    const unsigned t = threadIdx.x;
    convnd_st_vec(&s[t], convnd_ld_vec(reinterpret_cast<const float4 *>(g) + t));
    __syncthreads();
    convnd_st_vec(reinterpret_cast<uint4 *>(out) + t,
                  convnd_ld_vec(reinterpret_cast<const uint4 *>(&s[(t + 1) % 32])));
    convnd_st_vec(reinterpret_cast<float2 *>(out2) + t,
                  convnd_ld_vec(reinterpret_cast<const float2 *>(g2) + t));
}

/* A 16-byte load (or store) at g + offset floats; an 8-byte one when EIGHT. */
template <bool STORE, bool EIGHT> __global__ void offset_kernel(float *g, int offset) {
    if (EIGHT) {
        float2 *p = reinterpret_cast<float2 *>(g + offset);
        if (STORE)
            convnd_st_vec(p, make_float2(1.0f, 2.0f));
        else
            g[6] = convnd_ld_vec(p).x;
    } else {
        uint4 *p = reinterpret_cast<uint4 *>(g + offset);
        if (STORE)
            convnd_st_vec(p, make_uint4(1u, 2u, 3u, 4u));
        else
            g[12] = (float)convnd_ld_vec(p).y;
    }
}

/* A 16-byte load from shared memory 8 bytes into a vector. */
__global__ void shared_offset_kernel(float *out) {
    CONVND_SHARED(float4, s, [2]);
    convnd_st_vec(&s[0], make_float4(1.0f, 2.0f, 3.0f, 4.0f));
    convnd_st_vec(&s[1], make_float4(5.0f, 6.0f, 7.0f, 8.0f));
    out[0] = convnd_ld_vec(reinterpret_cast<const float4 *>(reinterpret_cast<float *>(s) + 2)).x;
}

} // namespace

Test(emu_vector_access, aligned_vectors_move_whole) {
    emu_buffer<float> g(128), out(128), g2(64), out2(64);
    for (int i = 0; i < 128; ++i)
        g[i] = (float)i + 0.25f;
    for (int i = 0; i < 64; ++i)
        g2[i] = -(float)i;
    cr_assert_eq(
        convnd_launch(copy_vectors_kernel, dim3(1), dim3(32), 0, nullptr, g.p, out.p, g2.p, out2.p),
        CONVND_OK, "%s", convnd_last_error());
    for (int i = 0; i < 128; ++i)
        cr_assert_eq(out[i], g[(i + 4) % 128], "out[%d]", i);
    for (int i = 0; i < 64; ++i)
        cr_assert_eq(out2[i], g2[i], "out2[%d]", i);
}

Test(emu_vector_access, misaligned_global_vectors_are_reported_and_not_stored) {
    emu_buffer<float> g(16);
    const uint32_t poison = 0xFFFFFFFFu;
    /* 16-byte vectors at 4, 8 and 12 bytes past an aligned address; 8-byte ones at 4 */
    for (int offset = 1; offset < 4; ++offset) {
        emu_expect_device_error(
            convnd_launch(offset_kernel<false, false>, dim3(1), dim3(1), 0, nullptr, g.p, offset),
            "16-byte vector load");
        emu_expect_device_error(
            convnd_launch(offset_kernel<true, false>, dim3(1), dim3(1), 0, nullptr, g.p, offset),
            "16-byte vector store");
    }
    emu_expect_device_error(
        convnd_launch(offset_kernel<false, true>, dim3(1), dim3(1), 0, nullptr, g.p, 1),
        "8-byte vector load");
    emu_expect_device_error(
        convnd_launch(offset_kernel<true, true>, dim3(1), dim3(1), 0, nullptr, g.p, 1),
        "8-byte vector store");
    for (int i = 0; i < 16; ++i)
        cr_assert_eq(memcmp(&g[i], &poison, 4), 0, "g[%d] written by a refused access", i);
    /* the same accesses at aligned offsets go through */
    cr_assert_eq(convnd_launch(offset_kernel<true, false>, dim3(1), dim3(1), 0, nullptr, g.p, 4),
                 CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_launch(offset_kernel<true, true>, dim3(1), dim3(1), 0, nullptr, g.p, 2),
                 CONVND_OK, "%s", convnd_last_error());
    uint32_t word;
    memcpy(&word, &g[5], 4);
    cr_assert(g[2] == 1.0f && g[3] == 2.0f && word == 2u);
}

Test(emu_vector_access, misaligned_shared_vectors_are_reported) {
    emu_buffer<float> out(1);
    emu_expect_device_error(
        convnd_launch(shared_offset_kernel, dim3(1), dim3(1), 0, nullptr, out.p),
        "must be 16-byte aligned");
}
