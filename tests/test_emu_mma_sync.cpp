/* The emulated ldmatrix and mma.sync against the PTX ISA's fragment tables, element by element,
 * in both thread orders; and the misuse the emulator must report (a row address outside shared
 * memory or misaligned, part of a warp). The kernels are in mma_sync_test_kernels.cuh. The same
 * checks, less the misuse, run on a GPU in convnd_gpu_conformance (tests/gpu/). */
#ifndef CONVND_CONFORMANCE_GPU /* tests/gpu/ builds this file for a GPU */
#define CONVND_EMU 1
#endif
#include "portability.cuh"
#include "mma_sync.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"
#include "mma_sync_test_kernels.cuh"
extern "C" {
#include "test_orders.h"
#include "test_random.h"
}

namespace {

using namespace mma_sync_test;

/* ldmatrix.x{NUM}{.trans}: lane 4*row + w must hold, in r[i], elements (row, 2w) and (row, 2w+1)
 * of matrix i (.trans: (2w, row) and (2w+1, row)), the first in the low half. */
template <int NUM, bool TRANS, bool AT = false> void check_ldmatrix() {
    test_rng rng = test_rng_seed(9000 + NUM * 4 + TRANS * 2 + AT);
    emu_buffer<uint16_t> ids(64 * NUM);
    emu_buffer<int> slot_of_row(32);
    emu_buffer<uint32_t> out(32 * NUM);
    const uint16_t salt = (uint16_t)test_rng_next(&rng);
    for (int e = 0; e < 64 * NUM; ++e)
        ids[e] = (uint16_t)(e * 0x9E37 + salt); /* distinct: odd multiplier mod 2^16 */
    emu_shuffled_slots(slot_of_row, 32, &rng);  /* rows at shuffled slots */
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        out.poison();
        auto k = &ldmatrix_kernel<NUM, TRANS, AT>;
        cr_assert_eq(emu_launch(k, dim3(1), dim3(32), 0, nullptr, ids.p, slot_of_row.p, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < NUM; ++i)
                for (int h = 0; h < 2; ++h) {
                    const int row = lane / 4, col = 2 * (lane % 4) + h;
                    const uint16_t want =
                        TRANS ? ids[64 * i + 8 * col + row] : ids[64 * i + 8 * row + col];
                    const uint16_t got = (uint16_t)(out[NUM * lane + i] >> (16 * h));
                    cr_assert_eq(got, want,
                                 "ldmatrix%s.x%d%s (%s): lane %d r[%d] half %d = 0x%04x, "
                                 "expected 0x%04x",
                                 AT ? "_at" : "", NUM, TRANS ? ".trans" : "", test_order_name(o),
                                 lane, i, h, got, want);
                }
    }
}

Test(emu_mma_sync, ldmatrix_x1_matches_the_isa_table) {
    check_ldmatrix<1, false>();
}
Test(emu_mma_sync, ldmatrix_x2_matches_the_isa_table) {
    check_ldmatrix<2, false>();
}
Test(emu_mma_sync, ldmatrix_x4_matches_the_isa_table) {
    check_ldmatrix<4, false>();
}
/* tile base + byte offset, as the tensor-core kernels read their fragments (tc_warp_mma.cuh) */
Test(emu_mma_sync, ldmatrix_at_x4_matches_the_isa_table) {
    check_ldmatrix<4, false, true>();
    check_ldmatrix<4, true, true>();
}
Test(emu_mma_sync, ldmatrix_x1_trans_matches_the_isa_table) {
    check_ldmatrix<1, true>();
}
Test(emu_mma_sync, ldmatrix_x2_trans_matches_the_isa_table) {
    check_ldmatrix<2, true>();
}
Test(emu_mma_sync, ldmatrix_x4_trans_matches_the_isa_table) {
    check_ldmatrix<4, true>();
}

/* Random integers in [-8, 8]: every product and partial sum is an integer below 2^24, exact in
 * f16, bf16, tf32 and f32 whatever the order of accumulation, so D must equal A*B + C exactly,
 * and an element taken from the wrong place of any fragment changes the result. */
template <typename T> struct mma_case {
    int M, N, K;
    emu_buffer<T> a, b;
    emu_buffer<float> c, d;
    mma_case(int m, int n, int k, uint64_t seed)
        : M(m), N(n), K(k), a(m * k), b(k * n), c(m * n), d(m * n) {
        test_rng rng = test_rng_seed(seed);
        for (int i = 0; i < M * K; ++i)
            a[i] = convnd_from_f32<T>((float)test_rng_int(&rng, -8, 8));
        for (int i = 0; i < K * N; ++i)
            b[i] = convnd_from_f32<T>((float)test_rng_int(&rng, -8, 8));
        for (int i = 0; i < M * N; ++i)
            c[i] = (float)test_rng_int(&rng, -64, 64);
    }
    /* b_kn: B stored [k][n]; otherwise [n][k]. */
    void check(const char *what, const char *order, bool b_kn = true) {
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                float want = c[i * N + j];
                for (int k = 0; k < K; ++k)
                    want += convnd_to_f32(a[i * K + k]) *
                            convnd_to_f32(b_kn ? b[k * N + j] : b[j * K + k]);
                cr_assert_eq(d[i * N + j], want, "%s (%s): D[%d][%d] = %g, expected %g", what,
                             order, i, j, d[i * N + j], want);
            }
    }
    /* kernel(A, B, C, D) on one warp in every thread order, D poisoned before each run */
    template <class F> void run(F kernel, const char *what, bool b_kn = true) {
        for (int o = 0; o < test_order_count(); ++o) {
            test_order_apply(o);
            d.poison();
            cr_assert_eq(emu_launch(kernel, dim3(1), dim3(32), 0, nullptr, a.p, b.p, c.p, d.p),
                         CONVND_OK, "%s", convnd_last_error());
            check(what, test_order_name(o), b_kn);
        }
    }
};

template <typename T> void check_m16n8k16(const char *what) {
    mma_case<T> m(16, 8, 16, 4242);
    m.run(&mma_m16n8k16_kernel<T>, what);
}

Test(emu_mma_sync, m16n8k16_f16_matches_the_isa_table) {
    check_m16n8k16<convnd_half>("mma.m16n8k16.f16");
}
Test(emu_mma_sync, m16n8k16_bf16_matches_the_isa_table) {
    check_m16n8k16<convnd_bf16>("mma.m16n8k16.bf16");
}

Test(emu_mma_sync, m16n8k8_tf32_matches_the_isa_table) {
    mma_case<float> m(16, 8, 8, 4343);
    m.run(&mma_m16n8k8_tf32_kernel, "mma.m16n8k8.tf32");
}

/* Fractional values: the tensor core reads only a tf32 input's top 19 bits. */
Test(emu_mma_sync, m16n8k8_tf32_reads_the_top_19_bits) {
    emu_buffer<float> a(128), b(64), c(128), d(128);
    for (int i = 0; i < 128; ++i)
        a[i] = (i == 0) ? 1.0f + 0x1p-11f : 0.0f, c[i] = 0.0f;
    for (int i = 0; i < 64; ++i)
        b[i] = (i == 0) ? 1.0f : 0.0f;
    cr_assert_eq(
        emu_launch(mma_m16n8k8_tf32_kernel, dim3(1), dim3(32), 0, nullptr, a.p, b.p, c.p, d.p),
        CONVND_OK, "%s", convnd_last_error());
    cr_assert_eq(d[0], 1.0f, "D[0][0] = %.9g: the low 13 bits of A[0][0] took part", d[0]);
}

template <typename T, bool B_KN> void check_ldmatrix_mma(const char *what) {
    mma_case<T> m(16, 8, sizeof(T) == 4 ? 8 : 16, sizeof(T) == 4 ? 717 : B_KN ? 515 : 616);
    m.run(&ldmatrix_mma_kernel<T, B_KN>, what, B_KN);
}

Test(emu_mma_sync, ldmatrix_feeds_mma_tf32) {
    check_ldmatrix_mma<float, false>("ldmatrix.x4 + x2, tf32");
}
Test(emu_mma_sync, ldmatrix_feeds_mma_with_b_k_major) {
    check_ldmatrix_mma<convnd_half, true>("ldmatrix.x4 + x2.trans, f16");
    check_ldmatrix_mma<convnd_bf16, true>("ldmatrix.x4 + x2.trans, bf16");
}
Test(emu_mma_sync, ldmatrix_feeds_mma_with_b_n_major) {
    check_ldmatrix_mma<convnd_half, false>("ldmatrix.x4 + x2, f16");
    check_ldmatrix_mma<convnd_bf16, false>("ldmatrix.x4 + x2, bf16");
}

/* The emulator's diagnostics: the GPU leaves these undefined. */
#ifndef CONVND_CONFORMANCE_GPU
Test(emu_mma_sync, ldmatrix_from_global_memory_is_reported) {
    emu_buffer<uint16_t> g(64);
    emu_buffer<uint32_t> out(32);
    emu_expect_device_error(
        convnd_launch(ldmatrix_from_global_kernel, dim3(1), dim3(32), 0, nullptr, g.p, out.p),
        "not in the block's shared memory");
}

Test(emu_mma_sync, ldmatrix_misaligned_row_is_reported) {
    emu_buffer<uint32_t> out(32);
    emu_expect_device_error(
        convnd_launch(ldmatrix_misaligned_kernel, dim3(1), dim3(32), 0, nullptr, out.p),
        "not 16-byte aligned");
}

Test(emu_mma_sync, ldmatrix_from_half_a_warp_is_reported) {
    emu_buffer<uint32_t> out(32);
    emu_expect_device_error(
        convnd_launch(ldmatrix_half_warp_kernel, dim3(1), dim3(32), 0, nullptr, out.p), "ldmatrix");
}

Test(emu_mma_sync, mma_from_part_of_a_warp_is_reported) {
    emu_buffer<float> out(32);
    emu_expect_device_error(
        convnd_launch(mma_half_warp_kernel, dim3(1), dim3(32), 0, nullptr, out.p), "mma.sync");
}

#endif

} // namespace
