/* The emulated stmatrix against the PTX ISA's layout table, element by element, in every thread
 * order of the suite; and the misuse the emulator must report (a row address outside shared memory
 * or misaligned, part of a warp). The kernels are in stmatrix_test_kernels.cuh. The same checks,
 * less the misuse, run on a GPU in convnd_gpu_conformance (tests/gpu/). */
#ifndef CONVND_CONFORMANCE_GPU /* tests/gpu/ builds this file for a GPU */
#define CONVND_EMU 1
#endif
#include "portability.cuh"
#include "stmatrix.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"
#include "stmatrix_test_kernels.cuh"
extern "C" {
#include "test_orders.h"
#include "test_random.h"
}

namespace {

using namespace stmatrix_test;

/* stmatrix.x{NUM}{.trans}: lane 4*row + w's r[i] must land, low half first, at elements
 * (row, 2w) and (row, 2w+1) of matrix i (.trans: (2w, row) and (2w+1, row)). */
template <int NUM, bool TRANS> void check_stmatrix() {
    test_rng rng = test_rng_seed(9100 + NUM * 2 + TRANS);
    emu_buffer<uint32_t> in(32 * NUM);
    emu_buffer<int> slot_of_row(32);
    emu_buffer<uint16_t> out(64 * NUM);
    const uint32_t salt = (uint32_t)test_rng_next(&rng);
    for (int e = 0; e < 32 * NUM; ++e) /* distinct halves: odd multipliers mod 2^16 */
        in[e] = ((uint32_t)(2 * e) * 0x9E37u + salt) % 65536u |
                (((uint32_t)(2 * e + 1) * 0x9E37u + salt) % 65536u) << 16;
    emu_shuffled_slots(slot_of_row, 32, &rng); /* rows at shuffled slots */
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        out.poison();
        auto k = &stmatrix_kernel<NUM, TRANS>;
        cr_assert_eq(emu_launch(k, dim3(1), dim3(32), 0, nullptr, in.p, slot_of_row.p, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < NUM; ++i)
                for (int h = 0; h < 2; ++h) {
                    const int row = lane / 4, col = 2 * (lane % 4) + h;
                    const uint16_t want = (uint16_t)(in[NUM * lane + i] >> (16 * h));
                    const uint16_t got =
                        TRANS ? out[64 * i + 8 * col + row] : out[64 * i + 8 * row + col];
                    cr_assert_eq(got, want,
                                 "stmatrix.x%d%s (%s): lane %d r[%d] half %d stored 0x%04x, "
                                 "expected 0x%04x",
                                 NUM, TRANS ? ".trans" : "", test_order_name(o), lane, i, h, got,
                                 want);
                }
    }
}

Test(emu_stmatrix, x1_matches_the_isa_table) {
    check_stmatrix<1, false>();
}
Test(emu_stmatrix, x2_matches_the_isa_table) {
    check_stmatrix<2, false>();
}
Test(emu_stmatrix, x4_matches_the_isa_table) {
    check_stmatrix<4, false>();
}
Test(emu_stmatrix, x1_trans_matches_the_isa_table) {
    check_stmatrix<1, true>();
}
Test(emu_stmatrix, x2_trans_matches_the_isa_table) {
    check_stmatrix<2, true>();
}
Test(emu_stmatrix, x4_trans_matches_the_isa_table) {
    check_stmatrix<4, true>();
}

/* The emulator's diagnostics: the GPU leaves these undefined. */
#ifndef CONVND_CONFORMANCE_GPU
Test(emu_stmatrix, to_global_memory_is_reported) {
    emu_buffer<uint16_t> g(64);
    emu_expect_device_error(
        convnd_launch(stmatrix_to_global_kernel, dim3(1), dim3(32), 0, nullptr, g.p),
        "not in the block's shared memory");
}

Test(emu_stmatrix, misaligned_row_is_reported) {
    emu_buffer<uint16_t> out(32);
    emu_expect_device_error(
        convnd_launch(stmatrix_misaligned_kernel, dim3(1), dim3(32), 0, nullptr, out.p),
        "not 16-byte aligned");
}

Test(emu_stmatrix, from_half_a_warp_is_reported) {
    emu_buffer<uint16_t> out(32);
    emu_expect_device_error(
        convnd_launch(stmatrix_half_warp_kernel, dim3(1), dim3(32), 0, nullptr, out.p), "stmatrix");
}

#endif

} // namespace
