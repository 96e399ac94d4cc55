/* The emulated device's core: launch and indices, shared memory, barriers, thread orders,
 * parallel blocks and atomics. Includes the planted bugs the device must catch: a missing
 * __syncthreads (a race) and a divergent barrier. */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>
#include <pthread.h>
#include <unistd.h>

#include <set>

#include "test_emu_util.h"

namespace {

/* ---- kernels -------------------------------------------------------------------------------- */

__global__ void index_kernel(unsigned *out, unsigned *dims) {
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    out[block * threads + tid] = block * 100000u + tid;
    if (block == 0 && tid == 0) {
        dims[0] = gridDim.x, dims[1] = gridDim.y, dims[2] = gridDim.z;
        dims[3] = blockDim.x, dims[4] = blockDim.y, dims[5] = blockDim.z;
    }
}

/* Each thread reads its static and dynamic shared slots before writing them (poison expected),
 * then reads a slot another thread wrote (sharing expected). */
__global__ void shared_kernel(float *first_static, float *first_dynamic, float *shared_static,
                              float *shared_dynamic) {
    CONVND_SHARED(float, s, [64]);
    CONVND_DYNAMIC_SHARED(float, d);
    const unsigned t = threadIdx.x, g = blockIdx.x * 64 + t;
    first_static[g] = s[t];
    first_dynamic[g] = d[t];
    s[t] = (float)(g + 1);
    d[t] = (float)(g + 1001);
    __syncthreads();
    shared_static[g] = s[63 - t];
    shared_dynamic[g] = d[63 - t];
}

/* A 1-D neighbour exchange through shared memory; without the barrier it races. */
template <bool WITH_BARRIER> __global__ void neighbour_kernel(const float *in, float *out) {
    CONVND_SHARED(float, s, [128]);
    const unsigned t = threadIdx.x;
    s[t] = in[t];
    if (WITH_BARRIER) __syncthreads();
    out[t] = s[(t + 1) % 128];
}

/* Planted bug: half the block returns before a barrier the other half waits at. */
__global__ void early_exit_kernel(float *out) {
    CONVND_SHARED(float, s, [64]);
    const unsigned t = threadIdx.x;
    if (t >= 32) return;
    s[t] = (float)t;
    __syncthreads();
    out[t] = s[31 - t];
}

/* Planted bug: threads 0-15 run one more barrier than the rest. */
__global__ void barrier_count_kernel(int *out) {
    for (unsigned i = 0; i < 1u + (threadIdx.x < 16); ++i)
        __syncthreads();
    out[threadIdx.x] = 1;
}

/* Records the order in which the threads of a block ran (no barrier: one phase). */
__global__ void order_kernel(int *counter, int *order) {
    order[threadIdx.x] = atomicAdd(counter, 1);
}

__global__ void atomics_kernel(int *count, float *sum, unsigned long long *total, int *biggest,
                               unsigned long *host_thread) {
    const int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    atomicAdd(count, 1);
    atomicAdd(sum, 1.0f);
    atomicAdd(total, 3ull);
    atomicMax(biggest, g);
    if (threadIdx.x == 0) {
        host_thread[blockIdx.x] = (unsigned long)pthread_self();
        usleep(200); /* long enough that every host worker gets blocks */
    }
}

__global__ void big_shared_kernel(float *out) {
    CONVND_SHARED(float, s, [16384]); /* 64 KiB: over the 48 KiB static limit */
    s[threadIdx.x] = 1.0f;
    out[threadIdx.x] = s[threadIdx.x];
}

__global__ void deep_stack_kernel(float *out) {
    float acc[2048]; /* 8 KiB of register-array accumulators per thread */
    for (int i = 0; i < 2048; ++i)
        acc[i] = (float)(i + threadIdx.x);
    __syncthreads();
    float s = 0.0f;
    for (int i = 0; i < 2048; ++i)
        s += acc[i];
    out[threadIdx.x] = s;
}

} // namespace

static const convnd_emu_order all_orders[] = {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE,
                                              CONVND_EMU_SHUFFLE};

/* ---- tests ---------------------------------------------------------------------------------- */

Test(emu_launch, every_thread_of_every_block_runs_once_with_its_indices) {
    for (convnd_emu_order order : all_orders) {
        convnd_emu_set_order(order, 42);
        const dim3 grid(3, 2, 2), block(8, 4, 2);
        const unsigned blocks = 12, threads = 64;
        emu_buffer<unsigned> out(blocks * threads), dims(6);
        cr_assert_eq(convnd_launch(index_kernel, grid, block, 0, nullptr, out.p, dims.p), CONVND_OK,
                     "%s", convnd_last_error());
        for (unsigned b = 0; b < blocks; ++b)
            for (unsigned t = 0; t < threads; ++t)
                cr_assert_eq(out[b * threads + t], b * 100000u + t,
                             "order %s: block %u thread %u wrote %u", emu_order_name(order), b, t,
                             out[b * threads + t]);
        const unsigned want[6] = {3, 2, 2, 8, 4, 2};
        for (int i = 0; i < 6; ++i)
            cr_assert_eq(dims[i], want[i], "dims[%d] = %u", i, dims[i]);
    }
}

Test(emu_launch, shared_memory_is_shared_per_block_and_poisoned_at_block_start) {
    convnd_emu_set_host_threads(1); /* blocks reuse one worker's arena: poison must be redone */
    const unsigned n = 4 * 64;
    emu_buffer<float> fs(n), fd(n), ss(n), sd(n);
    cr_assert_eq(convnd_launch(shared_kernel, dim3(4), dim3(64), 64 * sizeof(float), nullptr, fs.p,
                               fd.p, ss.p, sd.p),
                 CONVND_OK, "%s", convnd_last_error());
    for (unsigned g = 0; g < n; ++g) {
        const unsigned b = g / 64, t = g % 64;
        cr_assert(isnan(fs[g]) && isnan(fd[g]), "block %u thread %u read %g / %g, not poison", b, t,
                  fs[g], fd[g]);
        cr_assert_eq(ss[g], (float)(b * 64 + (63 - t) + 1), "static: block %u thread %u", b, t);
        cr_assert_eq(sd[g], (float)(b * 64 + (63 - t) + 1001), "dynamic: block %u thread %u", b, t);
    }
}

Test(emu_launch, missing_syncthreads_gives_a_wrong_result_in_some_order) {
    emu_buffer<float> in(128), out(128);
    for (int i = 0; i < 128; ++i)
        in[i] = (float)(i * 3 + 1);
    /* The correct kernel is right in every order. */
    auto good = &neighbour_kernel<true>;
    for (convnd_emu_order order : all_orders) {
        convnd_emu_set_order(order, 7);
        memset(out.p, 0xFF, 128 * sizeof(float));
        cr_assert_eq(convnd_launch(good, dim3(1), dim3(128), 0, nullptr, in.p, out.p), CONVND_OK);
        for (int i = 0; i < 128; ++i)
            cr_assert_eq(out[i], in[(i + 1) % 128], "order %s, thread %d", emu_order_name(order),
                         i);
    }
    /* The planted race is caught in forward or reverse order (both, here). */
    auto racy = &neighbour_kernel<false>;
    int wrong_orders = 0;
    for (convnd_emu_order order : {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE}) {
        convnd_emu_set_order(order, 0);
        memset(out.p, 0xFF, 128 * sizeof(float));
        cr_assert_eq(convnd_launch(racy, dim3(1), dim3(128), 0, nullptr, in.p, out.p), CONVND_OK);
        int wrong = 0;
        for (int i = 0; i < 128; ++i)
            wrong += !(out[i] == in[(i + 1) % 128]);
        wrong_orders += wrong > 0;
    }
    cr_assert_gt(wrong_orders, 0, "the race without __syncthreads went unnoticed");
}

Test(emu_launch, threads_exiting_before_a_barrier_are_reported) {
    emu_buffer<float> out(64);
    const convnd_status st = convnd_launch(early_exit_kernel, dim3(2), dim3(64), 0, nullptr, out.p);
    cr_assert_eq(st, CONVND_ERR_DEVICE, "status %d", (int)st);
    const char *msg = convnd_last_error();
    cr_assert(emu_contains(msg, "early_exit_kernel") && emu_contains(msg, "__syncthreads") &&
                  emu_contains(msg, "block (0,0,0)") && emu_contains(msg, "threads 0-31 wait") &&
                  emu_contains(msg, "threads 32-63 exited"),
              "message: %s", msg);
    /* The device recovers: the next launch runs normally. */
    emu_buffer<float> in(128), out2(128);
    for (int i = 0; i < 128; ++i)
        in[i] = (float)i;
    auto good = &neighbour_kernel<true>;
    cr_assert_eq(convnd_launch(good, dim3(1), dim3(128), 0, nullptr, in.p, out2.p), CONVND_OK, "%s",
                 convnd_last_error());
    for (int i = 0; i < 128; ++i)
        cr_assert_eq(out2[i], in[(i + 1) % 128]);
}

Test(emu_launch, barrier_counts_that_differ_are_reported) {
    emu_buffer<int> out(64);
    cr_assert_eq(convnd_launch(barrier_count_kernel, dim3(1), dim3(64), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    const char *msg = convnd_last_error();
    cr_assert(emu_contains(msg, "barrier_count_kernel") &&
                  emu_contains(msg, "threads 0-15 wait at barrier #2") &&
                  emu_contains(msg, "threads 16-63 exited"),
              "message: %s", msg);
}

Test(emu_launch, seeded_shuffle_is_reproducible_and_orders_are_what_they_say) {
    auto run = [](convnd_emu_order order, uint64_t seed, int *result) {
        convnd_emu_set_order(order, seed);
        emu_buffer<int> counter(1), got(256);
        counter[0] = 0;
        cr_assert_eq(convnd_launch(order_kernel, dim3(1), dim3(256), 0, nullptr, counter.p, got.p),
                     CONVND_OK);
        memcpy(result, got.p, 256 * sizeof(int));
    };
    int fwd[256], rev[256], a[256], b[256], c[256];
    run(CONVND_EMU_FORWARD, 0, fwd);
    run(CONVND_EMU_REVERSE, 0, rev);
    run(CONVND_EMU_SHUFFLE, 1234, a);
    run(CONVND_EMU_SHUFFLE, 1234, b);
    run(CONVND_EMU_SHUFFLE, 1235, c);
    for (int i = 0; i < 256; ++i) {
        cr_assert_eq(fwd[i], i);
        cr_assert_eq(rev[i], 255 - i);
        cr_assert_eq(a[i], b[i], "same seed, different order at thread %d", i);
    }
    cr_assert(memcmp(a, c, sizeof a) != 0, "seeds 1234 and 1235 gave the same order");
    cr_assert(memcmp(a, fwd, sizeof a) != 0 && memcmp(a, rev, sizeof a) != 0);
}

Test(emu_launch, blocks_run_in_parallel_with_real_atomics) {
    convnd_emu_set_host_threads(4);
    const unsigned blocks = 256, threads = 64;
    emu_buffer<int> count(1), biggest(1);
    emu_buffer<float> sum(1);
    emu_buffer<unsigned long long> total(1);
    emu_buffer<unsigned long> who(blocks);
    count[0] = 0, sum[0] = 0.0f, total[0] = 0, biggest[0] = -1;
    cr_assert_eq(convnd_launch(atomics_kernel, dim3(blocks), dim3(threads), 0, nullptr, count.p,
                               sum.p, total.p, biggest.p, who.p),
                 CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(count[0], (int)(blocks * threads));
    cr_assert_eq(sum[0], (float)(blocks * threads));
    cr_assert_eq(total[0], 3ull * blocks * threads);
    cr_assert_eq(biggest[0], (int)(blocks * threads - 1));
    std::set<unsigned long> hosts(who.p, who.p + blocks);
    cr_assert_gt(hosts.size(), 1u, "every block ran on the same host thread");
}

Test(emu_launch, bad_launch_configurations_are_errors) {
    emu_buffer<unsigned> out(4096), dims(6);
    cr_assert_eq(convnd_launch(index_kernel, dim3(1), dim3(2048), 0, nullptr, out.p, dims.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "index_kernel"), "%s", convnd_last_error());
    cr_assert_eq(convnd_launch(index_kernel, dim3(0), dim3(32), 0, nullptr, out.p, dims.p),
                 CONVND_ERR_DEVICE);
    cr_assert_eq(convnd_launch(index_kernel, dim3(1), dim3(32), 300000, nullptr, out.p, dims.p),
                 CONVND_ERR_DEVICE);
    emu_buffer<float> f(64);
    cr_assert_eq(convnd_launch(big_shared_kernel, dim3(1), dim3(64), 0, nullptr, f.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "48 KiB"), "%s", convnd_last_error());
}

Test(emu_launch, order_and_threads_come_from_the_environment) {
    setenv("CONVND_EMU_ORDER", "sideways", 1);
    emu_buffer<int> counter(1), got(32);
    counter[0] = 0;
    cr_assert_eq(convnd_launch(order_kernel, dim3(1), dim3(32), 0, nullptr, counter.p, got.p),
                 CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(emu_contains(convnd_last_error(), "CONVND_EMU_ORDER=sideways"), "%s",
              convnd_last_error());
    setenv("CONVND_EMU_ORDER", "reverse", 1);
    counter[0] = 0;
    cr_assert_eq(convnd_launch(order_kernel, dim3(1), dim3(32), 0, nullptr, counter.p, got.p),
                 CONVND_OK);
    for (int i = 0; i < 32; ++i)
        cr_assert_eq(got[i], 31 - i);
    setenv("CONVND_EMU_THREADS", "0", 1);
    cr_assert_eq(convnd_launch(order_kernel, dim3(2), dim3(32), 0, nullptr, counter.p, got.p),
                 CONVND_ERR_INVALID_ARGUMENT);
}

Test(emu_launch, fiber_stacks_hold_large_register_arrays) {
    emu_buffer<float> out(256);
    cr_assert_eq(convnd_launch(deep_stack_kernel, dim3(2), dim3(256), 0, nullptr, out.p),
                 CONVND_OK);
    for (int t = 0; t < 256; ++t) {
        float want = 0.0f;
        for (int i = 0; i < 2048; ++i)
            want += (float)(i + t);
        cr_assert_eq(out[t], want);
    }
}
