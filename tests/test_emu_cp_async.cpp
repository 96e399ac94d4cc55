/* cp.async on the emulated device: copies land only at the wait that covers their group, so a
 * kernel that reads too early (or reads another thread's copy without a barrier) sees poison. */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"

namespace {

__global__ void copy_kernel(const float *g, float *before, float *after, float *zeroed) {
    CONVND_SHARED(float, s, [32 * 4]);
    CONVND_SHARED(float, z, [32 * 4]);
    const unsigned t = threadIdx.x;
    convnd_cp_async<16>(&s[t * 4], &g[t * 4], true);
    convnd_cp_async<16>(&z[t * 4], &g[t * 4], false); /* zero-fill, g not read */
    before[t] = s[t * 4];
    convnd_cp_async_commit();
    convnd_cp_async_wait<0>();
    after[t] = s[t * 4 + 3];
    zeroed[t] = z[t * 4 + 1];
}

/* Groups: wait<1> completes all but the newest group; uncommitted copies wait for a commit. */
__global__ void groups_kernel(const float *g, float *out) {
    CONVND_SHARED(float, a, [4]);
    CONVND_SHARED(float, b, [2]);
    CONVND_SHARED(float, c, [1]);
    convnd_cp_async<16>(a, g, true);
    convnd_cp_async_commit();
    convnd_cp_async<8>(b, g + 4, true);
    convnd_cp_async_commit();
    convnd_cp_async<4>(c, g + 6, true); /* not committed */
    convnd_cp_async_wait<1>();
    out[0] = a[3];
    out[1] = b[1];
    convnd_cp_async_wait<0>();
    out[2] = b[1];
    out[3] = c[0];
    convnd_cp_async_wait_all();
    out[4] = c[0];
}

/* Each thread reads its neighbour's copy; the barrier after the wait is what makes it visible. */
template <bool WITH_BARRIER> __global__ void neighbour_copy_kernel(const float *g, float *out) {
    CONVND_SHARED(float, s, [64]);
    const unsigned t = threadIdx.x;
    convnd_cp_async<4>(&s[t], &g[t], true);
    convnd_cp_async_commit();
    convnd_cp_async_wait<0>();
    if (WITH_BARRIER) __syncthreads();
    out[t] = s[(t + 1) % 64];
}

__global__ void misaligned_kernel(const float *g, float *out) {
    CONVND_SHARED(float, s, [8]);
    convnd_cp_async<16>(&s[1], g, true);
    convnd_cp_async_wait_all();
    out[0] = s[1];
}

} // namespace

Test(emu_cp_async, copies_are_deferred_to_the_wait_and_zero_fill_works) {
    emu_buffer<float> g(128), before(32), after(32), zeroed(32);
    for (int i = 0; i < 128; ++i)
        g[i] = (float)i + 0.25f;
    cr_assert_eq(
        convnd_launch(copy_kernel, dim3(1), dim3(32), 0, nullptr, g.p, before.p, after.p, zeroed.p),
        CONVND_OK, "%s", convnd_last_error());
    for (int t = 0; t < 32; ++t) {
        cr_assert(isnan(before[t]), "thread %d read %g before the wait", t, before[t]);
        cr_assert_eq(after[t], g[t * 4 + 3], "thread %d", t);
        cr_assert_eq(zeroed[t], 0.0f, "thread %d: zero-fill gave %g", t, zeroed[t]);
    }
}

Test(emu_cp_async, wait_n_leaves_the_newest_groups_pending) {
    emu_buffer<float> g(8), out(5);
    for (int i = 0; i < 8; ++i)
        g[i] = (float)(10 + i);
    cr_assert_eq(convnd_launch(groups_kernel, dim3(1), dim3(1), 0, nullptr, g.p, out.p), CONVND_OK,
                 "%s", convnd_last_error());
    cr_assert_eq(out[0], 13.0f, "group 0 after wait<1>: %g", out[0]);
    cr_assert(isnan(out[1]), "group 1 landed before its wait: %g", out[1]);
    cr_assert_eq(out[2], 15.0f, "group 1 after wait<0>: %g", out[2]);
    cr_assert(isnan(out[3]), "an uncommitted copy landed: %g", out[3]);
    cr_assert_eq(out[4], 16.0f, "after wait_all: %g", out[4]);
}

Test(emu_cp_async, a_missing_barrier_after_the_wait_shows_up) {
    emu_buffer<float> g(64), out(64);
    for (int i = 0; i < 64; ++i)
        g[i] = (float)i;
    auto good = &neighbour_copy_kernel<true>;
    auto racy = &neighbour_copy_kernel<false>;
    for (convnd_emu_order order : {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE}) {
        convnd_emu_set_order(order, 0);
        cr_assert_eq(convnd_launch(good, dim3(1), dim3(64), 0, nullptr, g.p, out.p), CONVND_OK);
        for (int t = 0; t < 64; ++t)
            cr_assert_eq(out[t], g[(t + 1) % 64]);
    }
    int wrong_orders = 0;
    for (convnd_emu_order order : {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE}) {
        convnd_emu_set_order(order, 0);
        cr_assert_eq(convnd_launch(racy, dim3(1), dim3(64), 0, nullptr, g.p, out.p), CONVND_OK);
        int wrong = 0;
        for (int t = 0; t < 64; ++t)
            wrong += !(out[t] == g[(t + 1) % 64]);
        wrong_orders += wrong > 0;
    }
    cr_assert_gt(wrong_orders, 0, "reading another thread's copy without a barrier went unnoticed");
}

Test(emu_cp_async, misaligned_copies_are_reported) {
    emu_buffer<float> g(8), out(1);
    cr_assert_eq(convnd_launch(misaligned_kernel, dim3(1), dim3(1), 0, nullptr, g.p, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "aligned"), "%s", convnd_last_error());
}
