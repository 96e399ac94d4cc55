/* TMA on the emulated device: the tensor-map encoder's driver rules, tiled and im2col loads
 * (traversal, element strides, zero fill, swizzled shared-memory writes, complete_tx of the full
 * box) and stores with their bulk-group wait, against the PTX ISA's definitions (5.5 "Tensors",
 * cp.async.bulk.tensor). Expected values are computed here from those definitions,
 * independently of device/emu_tma.c. Every kernel test runs in two thread orders. Less the
 * emulator's copy modes and diagnostics, the same checks run on a GPU in convnd_gpu_conformance
 * (tests/gpu/), with the maps encoded by the driver: the encoder's cases then check that the
 * driver refuses what the emulator's encoder refuses. */
#ifndef CONVND_CONFORMANCE_GPU /* tests/gpu/ builds this file for a GPU */
#define CONVND_EMU 1
#endif
#include "portability.cuh"
#include "hopper_primitives.cuh"
#ifdef CONVND_CONFORMANCE_GPU
#include "hopper_tmap_gpu.cuh"
#endif

#include <criterion/criterion.h>

#include "test_emu_util.h"
extern "C" {
#include "test_orders.h"
}

namespace {

/* The encoder of the device the kernels run on: the emulator's, or the driver's. */
convnd_status encode(convnd_tmap *map, const convnd_tmap_desc *d, bool im2col) {
#ifdef CONVND_CONFORMANCE_GPU
    return convnd_gpu_tmap_encode(map, d, im2col);
#else
    return im2col ? convnd_emu_tmap_encode_im2col(map, d) : convnd_emu_tmap_encode_tiled(map, d);
#endif
}

/* A desc the encoder must refuse: on the emulated device with an invalid-argument error naming
 * the rule (`expect`); the driver says only that it refused. */
void expect_refused(convnd_status st, const char *expect) {
#ifdef CONVND_CONFORMANCE_GPU
    cr_assert_neq(st, CONVND_OK, "the driver accepted what the emulator refuses: %s", expect);
#else
    cr_assert_eq(st, CONVND_ERR_INVALID_ARGUMENT, "%s accepted", expect);
    cr_assert(emu_contains(convnd_last_error(), expect), "expected '%s' in: %s", expect,
              convnd_last_error());
#endif
}

convnd_tmap_desc tiled_desc(const float *g, uint32_t rank) {
    return convnd_tmap_desc_make(CONVND_F32, rank, g);
}

/* 20 x 10 f32 matrix (row pitch 80 bytes). */
convnd_tmap_desc matrix_desc(const float *g) {
    convnd_tmap_desc d = tiled_desc(g, 2);
    d.dims[0] = 20;
    d.dims[1] = 10;
    d.strides[0] = 80;
    d.box[0] = 8;
    d.box[1] = 4;
    return d;
}

/* Loads one box at coords into shared memory and copies it out; expect_bytes is what the
 * mbarrier is told. EARLY: also copy the box before the wait (must be poison). */
template <int R, bool EARLY>
__global__ void load_kernel(const CONVND_GRID_CONSTANT convnd_tmap map, int32_t c0, int32_t c1,
                            int32_t c2, uint32_t expect_bytes, uint32_t box_floats, float *out,
                            float *early) {
    CONVND_DYNAMIC_SHARED(unsigned char, raw);
    CONVND_SHARED(uint64_t, bar, [1]);
    /* the box at a 1024-byte aligned shared address: the swizzle patterns are of the address */
    float *box = reinterpret_cast<float *>(raw + (1024 - convnd_smem_addr(raw) % 1024) % 1024);
    const unsigned t = threadIdx.x;
    if (t == 0) {
        convnd_mbarrier_init(&bar[0], 1);
        convnd_fence_mbarrier_init();
    }
    __syncthreads();
    if (t == 0) {
        convnd_mbarrier_arrive_expect_tx(&bar[0], expect_bytes);
        int32_t c[R];
        const int32_t all[3] = {c0, c1, c2};
        for (int i = 0; i < R; ++i)
            c[i] = all[i];
        convnd_tma_load<R>(box, map, &bar[0], c);
    }
    if (EARLY)
        for (uint32_t i = t; i < box_floats; i += blockDim.x)
            early[i] = box[i];
    convnd_mbarrier_wait_parity(&bar[0], 0);
    for (uint32_t i = t; i < box_floats; i += blockDim.x)
        out[i] = box[i];
}

/* The 20 x 10 matrix of matrix_desc holding i + 0.5 at element i, and its tensor map. */
convnd_tmap counting_matrix(emu_buffer<float> &g) {
    for (int i = 0; i < 200; ++i)
        g[i] = (float)i + 0.5f;
    convnd_tmap map;
    convnd_tmap_desc d = matrix_desc(g.p);
    cr_assert_eq(encode(&map, &d, false), CONVND_OK);
    return map;
}

template <int R, bool EARLY = false>
convnd_status run_load(const convnd_tmap &map, const int32_t *c, uint32_t expect_bytes,
                       uint32_t box_floats, float *out, float *early = nullptr) {
    auto k = &load_kernel<R, EARLY>;
    return emu_launch(k, dim3(1), dim3(64), box_floats * 4 + 1024, nullptr, map, c[0],
                      R > 1 ? c[1] : 0, R > 2 ? c[2] : 0, expect_bytes, box_floats, out, early);
}

} // namespace

Test(emu_tma, the_encoder_applies_the_driver_rules) {
    emu_buffer<float> g(256);
    struct bad {
        const char *expect;
        void (*edit)(convnd_tmap_desc *);
    } cases[] = {
        {"tensorRank=6", [](convnd_tmap_desc *d) { d->rank = 6; }},
        {"globalAddress", [](convnd_tmap_desc *d) { d->address = (const char *)d->address + 4; }},
        {"globalDim[1]=0", [](convnd_tmap_desc *d) { d->dims[1] = 0; }},
        {"globalStrides[0]=84", [](convnd_tmap_desc *d) { d->strides[0] = 84; }},
        {"boxDim[1]=257", [](convnd_tmap_desc *d) { d->box[1] = 257; }},
        {"boxDim[0]=6: 24 bytes is not a multiple of 16",
         [](convnd_tmap_desc *d) { d->box[0] = 6; }},
        {"elementStrides[1]=9", [](convnd_tmap_desc *d) { d->element_strides[1] = 9; }},
        {"exceed the 32-byte swizzle span",
         [](convnd_tmap_desc *d) {
             d->swizzle = CONVND_TMAP_SWIZZLE_32B;
             d->box[0] = 16;
         }},
        {"tensorDataType", [](convnd_tmap_desc *d) { d->dtype = (convnd_dtype)7; }},
    };
    for (const bad &b : cases) {
        convnd_tmap_desc d = matrix_desc(g.p);
        b.edit(&d);
        convnd_tmap map;
        memset(&map, 0xAB, sizeof map);
        expect_refused(encode(&map, &d, false), b.expect);
        for (size_t i = 0; i < sizeof map; ++i)
            cr_assert_eq(map.opaque[i], 0xAB, "map written on error (%s)", b.expect);
    }
    convnd_tmap map;
    convnd_tmap_desc d = matrix_desc(g.p);
    cr_assert_eq(encode(&map, &d, false), CONVND_OK, "%s", convnd_last_error());
}

Test(emu_tma, im2col_corners_follow_the_rank) {
    emu_buffer<float> g(4096);
    convnd_tmap_desc d = tiled_desc(g.p, 4);
    d.dims[0] = 4;
    d.dims[1] = 8;
    d.dims[2] = 8;
    d.dims[3] = 2;
    d.strides[0] = 16;
    d.strides[1] = 128;
    d.strides[2] = 1024;
    d.channels_per_pixel = 4;
    d.pixels_per_column = 64;
    convnd_tmap map;
    d.lower_corner[0] = -128;
    d.upper_corner[1] = 127;
    cr_assert_eq(encode(&map, &d, true), CONVND_OK, "%s", convnd_last_error());
    d.lower_corner[1] = -129; /* 4-D: 8-bit corners */
    expect_refused(encode(&map, &d, true), "pixelBoxLowerCorner[1]=-129 is outside [-128, 127]");
    d.lower_corner[1] = 0;
    d.pixels_per_column = 1025;
    expect_refused(encode(&map, &d, true), "pixelsPerColumn=1025");
    d.pixels_per_column = 64;
    d.rank = 5; /* 5-D: 5-bit corners, -128 is out */
    d.dims[4] = 1;
    d.strides[3] = 2048;
    expect_refused(encode(&map, &d, true), "outside [-16, 15] for rank 5");
}

Test(emu_tma, a_tiled_load_zero_fills_out_of_bounds_and_completes_the_full_box) {
    emu_buffer<float> g(200), out(32), early(32);
    const convnd_tmap map = counting_matrix(g);
    const int32_t c[2] = {16, 8}; /* columns 16..23 of 20, rows 8..11 of 10 */
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        cr_assert_eq((run_load<2, true>(map, c, 128, 32, out.p, early.p)), CONVND_OK, "%s",
                     convnd_last_error());
        for (int r = 0; r < 4; ++r)
            for (int k = 0; k < 8; ++k) {
                const int row = 8 + r, col = 16 + k;
                const float expect = row < 10 && col < 20 ? g[row * 20 + col] : 0.0f;
                cr_assert_eq(out[r * 8 + k], expect, "%s (%d, %d)", test_order_name(o), r, k);
#ifndef CONVND_CONFORMANCE_GPU /* on a GPU the box may land any time before the wait */
                cr_assert(isnan(early[r * 8 + k]), "the box is visible before the wait");
#endif
            }
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's copy modes and diagnostics */
/* The other end of a load's window (CONVND_EMU_COPIES=early): the box lands at issue, so the
 * issuing thread, and in forward order every thread, sees it before the wait; mixed lands each
 * load at one end or the other, and the result after the wait is the same in every mode. */
Test(emu_tma, early_copies_land_a_load_at_issue) {
    emu_buffer<float> g(200), out(32), early(32);
    const convnd_tmap map = counting_matrix(g);
    const int32_t c[2] = {4, 2};
    const convnd_emu_copies modes[2] = {CONVND_EMU_COPIES_EARLY, CONVND_EMU_COPIES_MIXED};
    for (convnd_emu_copies m : modes) {
        convnd_emu_set_order(CONVND_EMU_FORWARD, 1);
        convnd_emu_set_copies(m, 3);
        cr_assert_eq((run_load<2, true>(map, c, 128, 32, out.p, early.p)), CONVND_OK, "%s",
                     convnd_last_error());
        for (int r = 0; r < 4; ++r)
            for (int k = 0; k < 8; ++k) {
                const float expect = g[(2 + r) * 20 + 4 + k];
                cr_assert_eq(out[r * 8 + k], expect, "mode %d (%d, %d)", (int)m, r, k);
                if (m == CONVND_EMU_COPIES_EARLY)
                    cr_assert_eq(early[r * 8 + k], expect, "early: not landed at issue (%d, %d)", r,
                                 k);
            }
    }
    convnd_emu_set_copies(CONVND_EMU_COPIES_LATE, 0);
}

#endif

Test(emu_tma, element_strides_skip_elements_and_shrink_the_box) {
    emu_buffer<float> g(20 * 10 * 3), out(64);
    for (int i = 0; i < 600; ++i)
        g[i] = (float)i;
    convnd_tmap_desc d = tiled_desc(g.p, 3);
    d.dims[0] = 20;
    d.dims[1] = 10;
    d.dims[2] = 3;
    d.strides[0] = 80;
    d.strides[1] = 800;
    d.box[0] = 8;
    d.box[1] = 5;
    d.box[2] = 2;
    d.element_strides[1] = 2; /* rows r, r+2, r+4: ceil(5/2) = 3 of them */
    convnd_tmap map;
    cr_assert_eq(encode(&map, &d, false), CONVND_OK, "%s", convnd_last_error());
    const int32_t c[3] = {4, 7, 1};
    const uint32_t floats = 8 * 3 * 2;
    cr_assert_eq(run_load<3>(map, c, floats * 4, floats, out.p), CONVND_OK, "%s",
                 convnd_last_error());
    for (int z = 0; z < 2; ++z)
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 8; ++k) {
                const int zz = 1 + z, row = 7 + 2 * r, col = 4 + k;
                const float expect = zz < 3 && row < 10 ? g[zz * 200 + row * 20 + col] : 0.0f;
                cr_assert_eq(out[(z * 3 + r) * 8 + k], expect, "(%d, %d, %d)", z, r, k);
            }
}

Test(emu_tma, swizzled_loads_xor_the_16_byte_chunk_with_the_row) {
    emu_buffer<float> g(32 * 16), out(32 * 8);
    for (int i = 0; i < 32 * 16; ++i)
        g[i] = (float)i;
    const uint32_t spans[3] = {32, 64, 128};
    for (int s = 0; s < 3; ++s) {
        const uint32_t cols = spans[s] / 4; /* one swizzle span per row */
        convnd_tmap_desc d = tiled_desc(g.p, 2);
        d.dims[0] = 32;
        d.dims[1] = 16;
        d.strides[0] = 128;
        d.box[0] = cols;
        d.box[1] = 8;
        d.swizzle = (convnd_tmap_swizzle)(s + 1);
        convnd_tmap map;
        cr_assert_eq(encode(&map, &d, false), CONVND_OK, "%s", convnd_last_error());
        const int32_t c[2] = {0, 3};
        cr_assert_eq(run_load<2>(map, c, cols * 8 * 4, cols * 8, out.p), CONVND_OK, "%s",
                     convnd_last_error());
        /* swizzling modes: byte address bits [4, 4+b) ^= bits [7, 7+b), b = 1, 2, 3 for 32/64/128B.
         * The box is packed (row pitch = span), so row r's chunk j lands at chunk j ^ (row bits).
         */
        const uint32_t b = (uint32_t)s + 1, mask = (1u << b) - 1u;
        for (uint32_t r = 0; r < 8; ++r)
            for (uint32_t k = 0; k < cols; ++k) {
                const uint32_t lin = r * spans[s] + k * 4;
                const uint32_t at = lin ^ (((lin >> 7) & mask) << 4);
                cr_assert_eq(out[at / 4], g[(3 + r) * 32 + k], "span %u row %u col %u", spans[s], r,
                             k);
            }
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's copy modes and diagnostics */
Test(emu_tma, a_wrong_expect_tx_byte_count_is_caught) {
    emu_buffer<float> g(200), out(32);
    convnd_tmap map;
    convnd_tmap_desc d = matrix_desc(g.p);
    cr_assert_eq(encode(&map, &d, false), CONVND_OK);
    const int32_t c[2] = {0, 0};
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        cr_assert_eq(run_load<2>(map, c, 64, 32, out.p), CONVND_ERR_DEVICE); /* box is 128 */
        cr_assert(emu_contains(convnd_last_error(), "transaction count underflow"), "%s",
                  convnd_last_error());
        cr_assert_eq(run_load<2>(map, c, 256, 32, out.p), CONVND_ERR_DEVICE);
        cr_assert(emu_contains(convnd_last_error(), "tx-count 128 bytes"), "%s",
                  convnd_last_error());
    }
}

#endif

namespace {

/* im2col: every tap of a 3x3 convolution, all output pixels of 2 images in one column each. */
__global__ void im2col_kernel(const CONVND_GRID_CONSTANT convnd_tmap map, int32_t w0, int32_t h0,
                              int32_t n0, uint32_t pixels, float *out) {
    CONVND_DYNAMIC_SHARED(float, box);
    CONVND_SHARED(uint64_t, bar, [1]);
    const unsigned t = threadIdx.x;
    if (t == 0) convnd_mbarrier_init(&bar[0], 1);
    __syncthreads();
    for (int tap = 0; tap < 9; ++tap) {
        if (t == 0) {
            convnd_mbarrier_arrive_expect_tx(&bar[0], pixels * 4 * 4);
            const int32_t c[4] = {0, w0, h0, n0};
            const uint16_t off[2] = {(uint16_t)(tap % 3), (uint16_t)(tap / 3)};
            convnd_tma_load_im2col<4>(box, map, &bar[0], c, off);
        }
        convnd_mbarrier_wait_parity(&bar[0], (uint32_t)tap & 1u);
        for (uint32_t i = t; i < pixels * 4; i += blockDim.x)
            out[tap * pixels * 4 + i] = box[i];
        __syncthreads(); /* everyone read the box before the next load overwrites it */
    }
}

} // namespace

Test(emu_tma, im2col_walks_the_bounding_box_with_the_tap_as_offset) {
    /* x: N=2, H=5, W=6, C=4 (f32, channels-last); conv 3x3, stride 2, padding 1 ->
     * O = 3 x 3. Bounding box: lower = -P0, upper = (O-1)*S - P0 - (size-1). */
    const int N = 2, H = 5, W = 6, C = 4, S = 2, P = 1, O = 3;
    emu_buffer<float> x(N * H * W * C), out(9 * N * O * O * C);
    for (int i = 0; i < N * H * W * C; ++i)
        x[i] = (float)i + 1.0f;
    convnd_tmap_desc d = tiled_desc(x.p, 4);
    d.dims[0] = C;
    d.dims[1] = W;
    d.dims[2] = H;
    d.dims[3] = N;
    d.strides[0] = C * 4;
    d.strides[1] = W * C * 4;
    d.strides[2] = H * W * C * 4;
    d.element_strides[1] = S;
    d.element_strides[2] = S;
    d.lower_corner[0] = -P; /* W */
    d.lower_corner[1] = -P; /* H */
    d.upper_corner[0] = (O - 1) * S - P - (W - 1);
    d.upper_corner[1] = (O - 1) * S - P - (H - 1);
    d.channels_per_pixel = C;
    convnd_tmap map;
    /* start: whole columns from pixel 0, and 8 pixels from pixel 5 (crossing an image) */
    const int starts[2] = {0, 5}, counts[2] = {N * O * O, 8};
    for (int v = 0; v < 2; ++v) {
        d.pixels_per_column = (uint32_t)counts[v];
        cr_assert_eq(encode(&map, &d, true), CONVND_OK, "%s", convnd_last_error());
        const int p0 = starts[v];
        const int n0 = p0 / (O * O), ho0 = p0 / O % O, wo0 = p0 % O;
        for (int o = 0; o < test_order_count(); ++o) {
            test_order_apply(o);
            cr_assert_eq(emu_launch(im2col_kernel, dim3(1), dim3(64), counts[v] * C * 4, nullptr,
                                    map, wo0 * S - P, ho0 * S - P, n0, (uint32_t)counts[v], out.p),
                         CONVND_OK, "%s", convnd_last_error());
            for (int tap = 0; tap < 9; ++tap)
                for (int q = 0; q < counts[v]; ++q) {
                    const int p = p0 + q, n = p / (O * O), ho = p / O % O, wo = p % O;
                    const int h = ho * S - P + tap / 3, w = wo * S - P + tap % 3;
                    for (int c = 0; c < C; ++c) {
                        const bool in = n < N && h >= 0 && h < H && w >= 0 && w < W;
                        const float expect = in ? x[((n * H + h) * W + w) * C + c] : 0.0f;
                        cr_assert_eq(out[(tap * counts[v] + q) * C + c], expect,
                                     "%s start %d tap %d pixel %d c %d", test_order_name(o), p0,
                                     tap, p, c);
                    }
                }
        }
    }
}

namespace {

/* Threads fill a staging box with ordinary stores; one thread stores it with TMA.
 * FENCE: fence.proxy.async before the barrier; WAIT: wait for the bulk group. */
template <bool FENCE, bool WAIT>
__global__ void store_kernel(const CONVND_GRID_CONSTANT convnd_tmap map, int32_t c0, int32_t c1) {
    CONVND_DYNAMIC_SHARED(float, box);
    const unsigned t = threadIdx.x;
    if (t < 32) box[t] = (float)t * 2.0f + 1.0f;
    if (FENCE) convnd_fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        const int32_t c[2] = {c0, c1};
        convnd_tma_store<2>(map, box, c);
        convnd_bulk_commit_group();
        if (WAIT) convnd_bulk_wait_group_read<0>();
    }
}

} // namespace

Test(emu_tma, a_store_writes_only_in_bounds_elements) {
    emu_buffer<float> g(200);
    convnd_tmap map;
    convnd_tmap_desc d = matrix_desc(g.p);
    cr_assert_eq(encode(&map, &d, false), CONVND_OK);
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        g.poison();
        auto k = &store_kernel<true, true>;
        cr_assert_eq(emu_launch(k, dim3(1), dim3(64), 128, nullptr, map, 16, 8), CONVND_OK, "%s",
                     convnd_last_error());
        for (int row = 0; row < 10; ++row)
            for (int col = 0; col < 20; ++col) {
                const bool in = row >= 8 && col >= 16;
                const float v = g[row * 20 + col];
                if (in)
                    cr_assert_eq(v, (float)((row - 8) * 8 + col - 16) * 2.0f + 1.0f);
                else
                    cr_assert(isnan(v), "(%d, %d) outside the box written", row, col);
            }
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's copy modes and diagnostics */
Test(emu_tma, a_store_without_fence_proxy_async_or_without_its_wait_is_an_error) {
    emu_buffer<float> g(200);
    convnd_tmap map;
    convnd_tmap_desc d = matrix_desc(g.p);
    cr_assert_eq(encode(&map, &d, false), CONVND_OK);
    auto no_fence = &store_kernel<false, true>;
    cr_assert_eq(convnd_launch(no_fence, dim3(1), dim3(64), 128, nullptr, map, 0, 0),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "after the last fence.proxy.async"), "%s",
              convnd_last_error());
    auto no_wait = &store_kernel<true, false>;
    cr_assert_eq(convnd_launch(no_wait, dim3(1), dim3(64), 128, nullptr, map, 0, 0),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "cp.async.bulk.wait_group"), "%s",
              convnd_last_error());
}
#endif
