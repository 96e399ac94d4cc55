/* Warp-level primitives on the emulated device: shuffles and votes against CUDA's definitions,
 * and warp collectives that not every lane reaches (reported, not hung). */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"

namespace {

enum {
    SHFL_IDX,
    SHFL_UP,
    SHFL_DOWN,
    SHFL_XOR,
    SHFL_XOR_W8,
    SHFL_DOWN_W16,
    SHFL_F32,
    SHFL_F64,
    BALLOT,
    ANY,
    ALL,
    NUM_RESULTS
};

__global__ void warp_kernel(long long *out) {
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int v = (int)(lane * 3 + warp * 100);
    const unsigned full = 0xFFFFFFFFu;
    long long *o = out + (size_t)t * NUM_RESULTS;
    o[SHFL_IDX] = __shfl_sync(full, v, 31 - (int)lane);
    o[SHFL_UP] = __shfl_up_sync(full, v, 1);
    o[SHFL_DOWN] = __shfl_down_sync(full, v, 2);
    o[SHFL_XOR] = __shfl_xor_sync(full, v, 5);
    o[SHFL_XOR_W8] = __shfl_xor_sync(full, v, 9, 8);
    o[SHFL_DOWN_W16] = __shfl_down_sync(full, v, 3, 16);
    o[SHFL_F32] = (long long)__shfl_xor_sync(full, (float)v + 0.5f, 16) * 2;
    o[SHFL_F64] = (long long)(__shfl_sync(full, (double)v * 1e10, 0) / 1e10);
    o[BALLOT] = __ballot_sync(full, lane % 3 == 0);
    o[ANY] = __any_sync(full, lane == 17);
    o[ALL] = __all_sync(full, warp == 0 || lane < 31);
    __syncwarp();
}

/* The same shuffles on a block whose last warp has 16 lanes. */
__global__ void partial_warp_kernel(int *out) {
    const unsigned lane = threadIdx.x % 32;
    out[threadIdx.x] = __shfl_down_sync(0xFFFFFFFFu, (int)threadIdx.x, 1, 16) +
                       1000 * (int)__popc(__ballot_sync(0xFFFFFFFFu, lane < 40));
}

/* Planted bug: half a warp shuffles, the other half has already left. */
__global__ void half_warp_shuffle_kernel(float *out) {
    float v = (float)threadIdx.x;
    if (threadIdx.x % 32 < 16) v = __shfl_xor_sync(0xFFFFFFFFu, v, 1);
    out[threadIdx.x] = v;
}

/* Planted bug: the two halves of a warp reach different collectives. */
__global__ void mixed_collectives_kernel(int *out) {
    if (threadIdx.x < 16)
        out[threadIdx.x] = (int)__ballot_sync(0xFFFFFFFFu, 1);
    else
        out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, 1, 0);
}

/* Half a warp at a shuffle, the other half at __syncthreads. */
__global__ void shuffle_vs_barrier_kernel(int *out) {
    if (threadIdx.x < 16) out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, 1, 0);
    __syncthreads();
}

/* A shuffle over half a warp with a mask that says so is fine. */
__global__ void masked_half_warp_kernel(int *out) {
    if (threadIdx.x < 16) out[threadIdx.x] = __shfl_xor_sync(0x0000FFFFu, (int)threadIdx.x, 1);
}

/* The usual block reduction: shuffles within warps, shared memory across them. */
__global__ void block_sum_kernel(const int *in, int *out) {
    CONVND_SHARED(int, partial, [32]);
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    int v = in[blockIdx.x * blockDim.x + t];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0;
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

long long expected(int which, unsigned t) {
    const unsigned lane = t % 32, warp = t / 32;
    auto v = [&](unsigned l) { return (long long)(l * 3 + warp * 100); };
    switch (which) {
    case SHFL_IDX:
        return v(31 - lane);
    case SHFL_UP:
        return lane >= 1 ? v(lane - 1) : v(lane);
    case SHFL_DOWN:
        return lane + 2 < 32 ? v(lane + 2) : v(lane);
    case SHFL_XOR:
        return v(lane ^ 5);
    case SHFL_XOR_W8: { /* lane ^ 9 leaves the 8-lane segment upwards for lanes with bit 3 clear */
        const unsigned src = lane ^ 9;
        return src < (lane & ~7u) + 8 ? v(src) : v(lane);
    }
    case SHFL_DOWN_W16:
        return lane % 16 + 3 < 16 ? v(lane + 3) : v(lane);
    case SHFL_F32:
        return (long long)((float)v(lane ^ 16) + 0.5f) * 2;
    case SHFL_F64:
        return v(0);
    case BALLOT:
        return 0x49249249ll; /* lanes 0, 3, 6, ..., 30 */
    case ANY:
        return 1;
    case ALL:
        return warp == 0 ? 1 : 0;
    }
    return -1;
}

} // namespace

Test(emu_warp, shuffles_and_votes_match_cuda) {
    static const convnd_emu_order orders[] = {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE,
                                              CONVND_EMU_SHUFFLE};
    for (convnd_emu_order order : orders) {
        convnd_emu_set_order(order, 99);
        emu_buffer<long long> out(96 * NUM_RESULTS);
        cr_assert_eq(convnd_launch(warp_kernel, dim3(2), dim3(96), 0, nullptr, out.p), CONVND_OK,
                     "%s", convnd_last_error());
        for (unsigned t = 0; t < 96; ++t)
            for (int r = 0; r < NUM_RESULTS; ++r)
                cr_assert_eq(out[t * NUM_RESULTS + r], expected(r, t),
                             "order %s, thread %u, result %d: %lld, expected %lld",
                             emu_order_name(order), t, r, out[t * NUM_RESULTS + r], expected(r, t));
    }
}

Test(emu_warp, partial_last_warp) {
    emu_buffer<int> out(48);
    cr_assert_eq(convnd_launch(partial_warp_kernel, dim3(1), dim3(48), 0, nullptr, out.p),
                 CONVND_OK, "%s", convnd_last_error());
    for (int t = 0; t < 48; ++t) {
        const int lane = t % 32, down = lane % 16 + 1 < 16 ? t + 1 : t;
        const int voters = t < 32 ? 32 : 16; /* lanes < 40 of each warp that exist */
        cr_assert_eq(out[t], down + 1000 * voters, "thread %d: %d", t, out[t]);
    }
}

Test(emu_warp, shuffle_reached_by_half_a_warp_is_reported) {
    emu_buffer<float> out(64);
    cr_assert_eq(convnd_launch(half_warp_shuffle_kernel, dim3(1), dim3(64), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    const char *msg = convnd_last_error();
    cr_assert(emu_contains(msg, "half_warp_shuffle_kernel") &&
                  emu_contains(msg, "__shfl_xor_sync") && emu_contains(msg, "exited"),
              "message: %s", msg);
}

Test(emu_warp, different_collectives_in_one_warp_are_reported) {
    emu_buffer<int> out(32);
    cr_assert_eq(convnd_launch(mixed_collectives_kernel, dim3(1), dim3(32), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    const char *msg = convnd_last_error();
    cr_assert(emu_contains(msg, "__ballot_sync") && emu_contains(msg, "__shfl_sync"), "message: %s",
              msg);
    cr_assert_eq(convnd_launch(shuffle_vs_barrier_kernel, dim3(1), dim3(32), 0, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    msg = convnd_last_error();
    cr_assert(emu_contains(msg, "__shfl_sync") && emu_contains(msg, "threads 0-15 wait"),
              "message: %s", msg);
}

Test(emu_warp, a_mask_naming_half_the_warp_is_enough) {
    emu_buffer<int> out(32);
    cr_assert_eq(convnd_launch(masked_half_warp_kernel, dim3(1), dim3(32), 0, nullptr, out.p),
                 CONVND_OK, "%s", convnd_last_error());
    for (int t = 0; t < 16; ++t)
        cr_assert_eq(out[t], t ^ 1);
}

Test(emu_warp, block_reduction_of_1024_threads_in_every_order) {
    const int blocks = 6, threads = 1024;
    emu_buffer<int> in(blocks * threads), out(blocks);
    for (int i = 0; i < blocks * threads; ++i)
        in[i] = (i * 7919) % 1000 - 500;
    for (convnd_emu_order order : {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE, CONVND_EMU_SHUFFLE}) {
        convnd_emu_set_order(order, 5);
        cr_assert_eq(
            convnd_launch(block_sum_kernel, dim3(blocks), dim3(threads), 0, nullptr, in.p, out.p),
            CONVND_OK, "%s", convnd_last_error());
        for (int b = 0; b < blocks; ++b) {
            int want = 0;
            for (int t = 0; t < threads; ++t)
                want += in[b * threads + t];
            cr_assert_eq(out[b], want, "order %s, block %d: %d, expected %d", emu_order_name(order),
                         b, out[b], want);
        }
    }
}
