/* mbarrier, named barriers, elect.sync and setmaxnreg on the emulated device, against the PTX
 * ISA's rules (device/README.md, "Hopper primitives"). Kernels written with the portable names
 * (primitives/hopper_primitives.cuh), so they are GPU kernels too: less the misuse, the same checks
 * run on a GPU in convnd_gpu_conformance (tests/gpu/). Every test runs in two thread orders. */
#ifndef CONVND_CONFORMANCE_GPU /* tests/gpu/ builds this file for a GPU */
#define CONVND_EMU 1
#endif
#include "portability.cuh"
#include "hopper_primitives.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"
extern "C" {
#include "test_orders.h"
}

namespace {

/* A phase completes when every expected arrival happened: the state returned by arrive names
 * the phase it arrived on (parity 0), try_wait on it returns true once the phase is over (it may
 * return false before: LOOP), and the barrier then reports parity-0 complete and parity-1
 * pending. out[256 + t]: how many try_waits returned false. */
template <bool LOOP> __global__ void phase_kernel(int *out) {
    CONVND_SHARED(uint64_t, bar, [1]);
    CONVND_SHARED(int, data, [64]);
    const unsigned t = threadIdx.x;
    if (t == 0) convnd_mbarrier_init(&bar[0], 64);
    __syncthreads();
    data[t] = (int)t * 3;
    const uint64_t state = convnd_mbarrier_arrive(&bar[0]);
    int timeouts = 0;
    while (!convnd_mbarrier_try_wait(&bar[0], state) && LOOP)
        ++timeouts;
    out[256 + t] = timeouts;
    /* every thread arrived after writing: every write is visible */
    int sum = 0;
    for (int i = 0; i < 64; ++i)
        sum += data[i];
    out[t] = sum;
    out[64 + t] = (int)(state & 1u);
    out[128 + t] = convnd_mbarrier_test_wait_parity(&bar[0], 0) ? 1 : 0;
    out[192 + t] = convnd_mbarrier_test_wait_parity(&bar[0], 1) ? 1 : 0;
}

/* A ring of 2 stages between one producer warp and three consumer warps (full / empty
 * barriers, parities flipping per round), as the warp-specialized kernels use it. */
__global__ void ring_kernel(int rounds, int *out) {
    CONVND_SHARED(uint64_t, full, [2]);
    CONVND_SHARED(uint64_t, empty, [2]);
    CONVND_SHARED(int, slot, [2][32]);
    const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
    if (t == 0) {
        for (int s = 0; s < 2; ++s) {
            convnd_mbarrier_init(&full[s], 32);  /* the producer warp's lanes */
            convnd_mbarrier_init(&empty[s], 96); /* every consumer thread */
        }
        convnd_fence_mbarrier_init();
    }
    __syncthreads();
    int acc = 0;
    for (int r = 0; r < rounds; ++r) {
        const int s = r % 2;
        const uint32_t parity = (uint32_t)(r / 2) & 1u;
        if (warp == 0) {
            convnd_mbarrier_wait_parity(&empty[s], parity ^ 1u); /* first round passes */
            slot[s][lane] = r * 100 + (int)lane;
            convnd_mbarrier_arrive(&full[s]);
        } else {
            convnd_mbarrier_wait_parity(&full[s], parity);
            acc += slot[s][(lane + warp) % 32];
            convnd_mbarrier_arrive(&empty[s]);
        }
    }
    out[t] = acc;
}

/* The transaction count: the phase completes only once complete_tx brought it back to 0. */
__global__ void tx_kernel(int *out) {
    CONVND_SHARED(uint64_t, bar, [1]);
    CONVND_SHARED(int, data, [2]);
    const unsigned t = threadIdx.x;
    if (t == 0) convnd_mbarrier_init(&bar[0], 1);
    __syncthreads();
    if (t == 0) convnd_mbarrier_arrive_expect_tx(&bar[0], 64);
    __syncthreads();
    if (t == 1) { /* two "copies" of 32 bytes; complete_tx is relaxed: a fence releases data */
        data[0] = 7;
        __threadfence_block();
        convnd_mbarrier_complete_tx(&bar[0], 32);
        out[2] = convnd_mbarrier_test_wait_parity(&bar[0], 0) ? 1 : 0; /* still pending */
        data[1] = 9;
        __threadfence_block();
        convnd_mbarrier_complete_tx(&bar[0], 32);
    }
    if (t == 2) {
        convnd_mbarrier_wait_parity(&bar[0], 0);
        out[0] = data[0];
        out[1] = data[1];
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
template <int CASE> __global__ void misuse_kernel(int *out) {
    CONVND_SHARED(uint64_t, bar, [1]);
    if (CASE == 0) { /* over-arrival: the phase waits for its bytes, a second arrive has none */
        convnd_mbarrier_init(&bar[0], 1);
        convnd_mbarrier_arrive_expect_tx(&bar[0], 16);
        convnd_mbarrier_arrive(&bar[0]);
    } else if (CASE == 1) { /* more bytes complete than expected */
        convnd_mbarrier_init(&bar[0], 1);
        convnd_mbarrier_arrive_expect_tx(&bar[0], 16);
        convnd_mbarrier_complete_tx(&bar[0], 32);
    } else if (CASE == 2) { /* one of two arrivals never comes */
        convnd_mbarrier_init(&bar[0], 2);
        convnd_mbarrier_arrive(&bar[0]);
        convnd_mbarrier_wait_parity(&bar[0], 0);
    } else if (CASE == 3) { /* never initialized: the poison is not a barrier */
        convnd_mbarrier_arrive(&bar[0]);
    } else if (CASE == 4) { /* count out of range */
        convnd_mbarrier_init(&bar[0], 1u << 20);
    } else { /* an mbarrier outside shared memory */
        convnd_mbarrier_init(reinterpret_cast<uint64_t *>(out), 1);
    }
    out[0] = 1;
}

void run_misuse(convnd_status (*launch)(int *), const char *expect) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<int> out(4);
        cr_assert_eq(launch(out.p), CONVND_ERR_DEVICE, "%s: %s", test_order_name(o), expect);
        cr_assert(emu_contains(convnd_last_error(), expect), "%s: expected '%s' in: %s",
                  test_order_name(o), expect, convnd_last_error());
    }
}

template <int CASE> convnd_status launch_misuse(int *out) {
    return convnd_launch(misuse_kernel<CASE>, dim3(1), dim3(1), 0, nullptr, out);
}

#endif

/* Named barriers: warp 0 produces, bar.arrive; warps 1-2 bar.sync on the same id, then read. */
__global__ void named_kernel(int *out) {
    CONVND_SHARED(int, data, [32]);
    const unsigned t = threadIdx.x;
    if (t < 32) {
        data[t] = (int)t + 1000;
        convnd_named_barrier_arrive(3, 96);
    } else {
        convnd_named_barrier_sync(3, 96);
        out[t - 32] = data[(t + 5) % 32];
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
template <int CASE> __global__ void named_misuse_kernel(int *out) {
    if (CASE == 0) {
        if (threadIdx.x < 64) convnd_named_barrier_sync(1, 96); /* only 64 threads ever come */
    } else if (CASE == 1) {
        convnd_named_barrier_sync(2, 40); /* not a multiple of the warp size */
    } else {
        convnd_named_barrier_sync(threadIdx.x < 32 ? 4 : 4, threadIdx.x < 32 ? 64 : 32);
    }
    out[0] = 1;
}

#endif

__global__ void elect_kernel(int *out) {
    out[threadIdx.x] = convnd_elect_one_sync() ? 1 : 0;
}

template <int CASE> __global__ void setmaxnreg_kernel(int *out) {
    if (CASE == 0) { /* warp-specialized: producers give registers, consumers take them */
        if (threadIdx.x < 128)
            convnd_setmaxnreg_dec<40>();
        else
            convnd_setmaxnreg_inc<232>();
    } else if (CASE == 1) { /* not uniform in warpgroup 0 */
        if (threadIdx.x < 32)
            convnd_setmaxnreg_dec<40>();
        else
            convnd_setmaxnreg_dec<48>();
    } else { /* count not a multiple of 8 */
        convnd_setmaxnreg_inc<100>();
    }
    out[threadIdx.x] = 1;
}

} // namespace

Test(emu_mbarrier, a_phase_completes_when_every_arrival_happened) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<int> out(320);
        cr_assert_eq(emu_launch(phase_kernel<true>, dim3(2), dim3(64), 0, nullptr, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        int timeouts = 0;
        for (int t = 0; t < 64; ++t) {
            cr_assert_eq(out[t], 3 * 63 * 64 / 2, "%s thread %d", test_order_name(o), t);
            cr_assert_eq(out[64 + t], 0, "arrive's state names phase parity 0");
            cr_assert_eq(out[128 + t], 1, "parity-0 phase complete");
            cr_assert_eq(out[192 + t], 0, "parity-1 phase still pending");
            timeouts += out[256 + t];
        }
#ifndef CONVND_CONFORMANCE_GPU
        /* the first thread to try_wait finds 63 arrivals pending: the emulator returns false
         * there (the ISA's time limit), then blocks on the thread's next try */
        cr_assert(timeouts >= 1 && timeouts <= 63, "%s: %d try_waits returned false",
                  test_order_name(o), timeouts);
#else
        (void)timeouts; /* the hardware's time limit: any count */
#endif
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
/* A kernel that takes try_wait's false for completion runs ahead of the phase: it reads the
 * shared memory the other threads have not written yet, in every thread order. */
Test(emu_mbarrier, a_try_wait_that_is_not_looped_on_runs_ahead_of_the_phase) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<int> out(320);
        cr_assert_eq(convnd_launch(phase_kernel<false>, dim3(1), dim3(64), 0, nullptr, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        int wrong = 0;
        for (int t = 0; t < 64; ++t)
            wrong += out[t] != 3 * 63 * 64 / 2;
        cr_assert(wrong >= 1, "%s: every thread saw the whole phase", test_order_name(o));
    }
}

#endif

Test(emu_mbarrier, a_full_empty_ring_passes_data_in_order) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        const int rounds = 7;
        emu_buffer<int> out(128);
        cr_assert_eq(emu_launch(ring_kernel, dim3(1), dim3(128), 0, nullptr, rounds, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        for (int t = 32; t < 128; ++t) {
            int expect = 0;
            for (int r = 0; r < rounds; ++r)
                expect += r * 100 + (t % 32 + t / 32) % 32;
            cr_assert_eq(out[t], expect, "%s thread %d", test_order_name(o), t);
        }
    }
}

Test(emu_mbarrier, the_phase_waits_for_the_transaction_count) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<int> out(3);
        cr_assert_eq(emu_launch(tx_kernel, dim3(1), dim3(3), 0, nullptr, out.p), CONVND_OK, "%s",
                     convnd_last_error());
        cr_assert_eq(out[0], 7);
        cr_assert_eq(out[1], 9);
        cr_assert_eq(out[2], 0, "complete after half the bytes");
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
Test(emu_mbarrier, over_arrival_is_an_error) {
    run_misuse(launch_misuse<0>, "over-arrival");
}
Test(emu_mbarrier, transaction_underflow_is_an_error) {
    run_misuse(launch_misuse<1>, "transaction count underflow");
}
Test(emu_mbarrier, a_wait_that_can_never_complete_is_reported) {
    run_misuse(launch_misuse<2>, "1 of 2 arrivals pending");
    run_misuse(launch_misuse<2>, "can never complete");
}
Test(emu_mbarrier, use_before_init_and_bad_arguments_are_errors) {
    run_misuse(launch_misuse<3>, "never initialized");
    run_misuse(launch_misuse<4>, "count=1048576");
    run_misuse(launch_misuse<5>, "is not shared memory");
}

#endif

Test(emu_named_barrier, bar_arrive_and_bar_sync_hand_over_data) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<int> out(64);
        cr_assert_eq(emu_launch(named_kernel, dim3(1), dim3(96), 0, nullptr, out.p), CONVND_OK,
                     "%s", convnd_last_error());
        for (int i = 0; i < 64; ++i)
            cr_assert_eq(out[i], (i + 32 + 5) % 32 + 1000, "%s %d", test_order_name(o), i);
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
static convnd_status named_misuse(int c, int *out) {
    if (c == 0) return convnd_launch(named_misuse_kernel<0>, dim3(1), dim3(128), 0, nullptr, out);
    if (c == 1) return convnd_launch(named_misuse_kernel<1>, dim3(1), dim3(64), 0, nullptr, out);
    return convnd_launch(named_misuse_kernel<2>, dim3(1), dim3(64), 0, nullptr, out);
}

Test(emu_named_barrier, misuse_is_reported) {
    const char *expect[3] = {"named barrier 1: 64 of 96 threads arrived", "multiple of 32",
                             "count 64"};
    for (int c = 0; c < 3; ++c) {
        emu_buffer<int> out(1);
        cr_assert_eq(named_misuse(c, out.p), CONVND_ERR_DEVICE);
        cr_assert(emu_contains(convnd_last_error(), expect[c]), "case %d: %s", c,
                  convnd_last_error());
    }
}

#endif

Test(emu_elect_sync, elects_exactly_one_lane_per_warp) {
    emu_buffer<int> out(96);
    cr_assert_eq(emu_launch(elect_kernel, dim3(1), dim3(96), 0, nullptr, out.p), CONVND_OK);
    for (int w = 0; w < 3; ++w) {
        int n = 0;
        for (int l = 0; l < 32; ++l)
            n += out[w * 32 + l];
        cr_assert_eq(n, 1, "warp %d elected %d lanes", w, n);
        cr_assert_eq(out[w * 32], 1, "the lowest lane leads");
    }
}

/* Emulator only: on a GPU the counts must match the registers ptxas allocated at entry (an inc
 * beyond the CTA's pool blocks forever), which this kernel does not control. */
#ifndef CONVND_CONFORMANCE_GPU /* the emulator's diagnostics: undefined on a GPU */
Test(emu_setmaxnreg, must_be_uniform_over_a_whole_warpgroup) {
    emu_buffer<int> out(256);
    cr_assert_eq(convnd_launch(setmaxnreg_kernel<0>, dim3(1), dim3(256), 0, nullptr, out.p),
                 CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(convnd_launch(setmaxnreg_kernel<1>, dim3(1), dim3(256), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "not uniform in warpgroup 0"), "%s",
              convnd_last_error());
    cr_assert_eq(convnd_launch(setmaxnreg_kernel<2>, dim3(1), dim3(128), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "multiple of 8"), "%s", convnd_last_error());
    cr_assert_eq(convnd_launch(setmaxnreg_kernel<0>, dim3(1), dim3(192), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "needs a whole warpgroup"), "%s",
              convnd_last_error());
}
#endif
