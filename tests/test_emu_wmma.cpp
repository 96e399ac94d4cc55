/* The emulated WMMA against a plain loop: f16 and bf16 (m16n16k16) and tf32 (m16n16k8), two
 * warps per block with their own tiles, through shared memory; and misuse (part of a warp,
 * misaligned pointers) reported as errors. */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>

#include "test_emu_util.h"
extern "C" {
#include "test_random.h"
}
#include <vector>

namespace {

using namespace convnd_wmma;

/* Warp w computes D_w = A_w * B_w + C_w; A row-major (16 x K), B column-major (K x 16), C and D
 * row-major 16 x 16. A and B go through shared memory, C straight from global memory. */
template <typename T, typename P, int K>
__global__ void mma_kernel(const T *a, const T *b, const float *c, float *d) {
    CONVND_SHARED(T, as, [2][16 * K]);
    CONVND_SHARED(T, bs, [2][16 * K]);
    const unsigned t = threadIdx.x, w = t / 32;
    for (unsigned i = t; i < 2 * 16 * K; i += blockDim.x) {
        as[i / (16 * K)][i % (16 * K)] = a[i];
        bs[i / (16 * K)][i % (16 * K)] = b[i];
    }
    __syncthreads();
    fragment<matrix_a, 16, 16, K, P, row_major> fa;
    fragment<matrix_b, 16, 16, K, P, col_major> fb;
    fragment<accumulator, 16, 16, K, float> acc;
    load_matrix_sync(fa, as[w], K);
    load_matrix_sync(fb, bs[w], K);
    load_matrix_sync(acc, c + w * 256, 16, mem_row_major);
    if constexpr (std::is_same<P, precision::tf32>::value) {
        for (int i = 0; i < fa.num_elements; ++i)
            fa.x[i] = convnd_float_to_tf32(fa.x[i]);
        for (int i = 0; i < fb.num_elements; ++i)
            fb.x[i] = convnd_float_to_tf32(fb.x[i]);
    }
    mma_sync(acc, fa, fb, acc);
    for (int i = 0; i < acc.num_elements; ++i)
        acc.x[i] *= 2.0f; /* uniform element-wise op */
    store_matrix_sync(d + w * 256, acc, 16, mem_row_major);
}

/* The other layouts: A column-major, B row-major, C loaded and D stored column-major. */
__global__ void transposed_layouts_kernel(const convnd_half *a, const convnd_half *b,
                                          const float *c, float *d) {
    fragment<matrix_a, 16, 16, 16, convnd_half, col_major> fa;
    fragment<matrix_b, 16, 16, 16, convnd_half, row_major> fb;
    fragment<accumulator, 16, 16, 16, float> acc;
    load_matrix_sync(fa, a, 24); /* padded leading dimension */
    load_matrix_sync(fb, b, 16);
    load_matrix_sync(acc, c, 16, mem_col_major);
    mma_sync(acc, fa, fb, acc);
    store_matrix_sync(d, acc, 32, mem_col_major);
}

/* Planted bug: only half of the warp loads the fragment. */
__global__ void half_warp_load_kernel(const convnd_half *a, float *d) {
    fragment<matrix_a, 16, 16, 16, convnd_half, row_major> fa;
    fragment<accumulator, 16, 16, 16, float> acc;
    fill_fragment(acc, 0.0f);
    if (threadIdx.x < 16) load_matrix_sync(fa, a, 16);
    store_matrix_sync(d, acc, 16, mem_row_major);
}

__global__ void misaligned_store_kernel(float *d) {
    fragment<accumulator, 16, 16, 16, float> acc;
    fill_fragment(acc, 1.0f);
    store_matrix_sync(d + 1, acc, 16, mem_row_major);
}

template <typename T> T to(float f) {
    return convnd_from_f32<T>(f);
}

/* Runs mma_kernel on random inputs and compares with a double-precision loop over the inputs
 * as the tensor core sees them; f32 accumulation of K products stays within K * 2^-23 of
 * sum |a*b| + |c|. */
template <typename T, typename P, int K> void check_mma(const char *what) {
    test_rng rng = test_rng_seed(1234 + K);
    auto uniform = [&rng]() { return (float)(2.0 * test_rng_unit(&rng) - 1.0); };
    emu_buffer<T> a(2 * 16 * K), b(2 * 16 * K);
    emu_buffer<float> c(512), d(512);
    std::vector<double> ad(2 * 16 * K), bd(2 * 16 * K);
    for (int i = 0; i < 2 * 16 * K; ++i) {
        a[i] = to<T>(uniform());
        b[i] = to<T>(uniform());
        float fa = convnd_to_f32(a[i]), fb = convnd_to_f32(b[i]);
        if (std::is_same<P, precision::tf32>::value)
            fa = convnd_float_to_tf32(fa), fb = convnd_float_to_tf32(fb);
        ad[i] = fa, bd[i] = fb;
    }
    for (int i = 0; i < 512; ++i)
        c[i] = uniform();
    auto kernel = &mma_kernel<T, P, K>;
    cr_assert_eq(convnd_launch(kernel, dim3(1), dim3(64), 0, nullptr, a.p, b.p, c.p, d.p),
                 CONVND_OK, "%s: %s", what, convnd_last_error());
    for (int w = 0; w < 2; ++w)
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) {
                double want = c[w * 256 + i * 16 + j], mag = fabs(want);
                for (int k = 0; k < K; ++k) {
                    const double p = ad[w * 16 * K + i * K + k] * bd[w * 16 * K + j * K + k];
                    want += p;
                    mag += fabs(p);
                }
                want *= 2.0;
                const double got = d[w * 256 + i * 16 + j];
                cr_assert(fabs(got - want) <= 2.0 * mag * (K + 1) * 0x1p-23,
                          "%s: warp %d D[%d][%d] = %.9g, expected %.9g", what, w, i, j, got, want);
            }
}

} // namespace

Test(emu_wmma, f16_m16n16k16_matches_a_loop) {
    check_mma<convnd_half, convnd_half, 16>("f16");
}

Test(emu_wmma, bf16_m16n16k16_matches_a_loop) {
    check_mma<convnd_bf16, convnd_bf16, 16>("bf16");
}

Test(emu_wmma, tf32_m16n16k8_matches_a_loop) {
    check_mma<float, precision::tf32, 8>("tf32");
}

Test(emu_wmma, column_major_layouts_and_leading_dimensions) {
    test_rng rng = test_rng_seed(77);
    emu_buffer<convnd_half> a(16 * 24), b(16 * 16);
    emu_buffer<float> c(256), d(16 * 32);
    for (int i = 0; i < 16 * 24; ++i)
        a[i] = convnd_from_f32<convnd_half>((float)(test_rng_unit(&rng) - 0.5));
    for (int i = 0; i < 256; ++i) {
        b[i] = convnd_from_f32<convnd_half>((float)(test_rng_unit(&rng) - 0.5));
        c[i] = (float)(test_rng_unit(&rng) - 0.5);
    }
    cr_assert_eq(
        convnd_launch(transposed_layouts_kernel, dim3(1), dim3(32), 0, nullptr, a.p, b.p, c.p, d.p),
        CONVND_OK, "%s", convnd_last_error());
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            double want = c[j * 16 + i], mag = fabs(want); /* C column-major */
            for (int k = 0; k < 16; ++k) {
                const double p = (double)convnd_to_f32(a[k * 24 + i]) * /* A(i,k) col-major */
                                 (double)convnd_to_f32(b[k * 16 + j]);  /* B(k,j) row-major */
                want += p;
                mag += fabs(p);
            }
            const double got = d[j * 32 + i]; /* D column-major, ldm 32 */
            cr_assert(fabs(got - want) <= mag * 17 * 0x1p-23, "D[%d][%d] = %.9g, expected %.9g", i,
                      j, got, want);
        }
    for (int j = 0; j < 16; ++j)
        for (int i = 16; i < 32; ++i)
            cr_assert(isnan(d[j * 32 + i]), "store wrote past the tile at column %d row %d", j, i);
}

Test(emu_wmma, tf32_rounding_is_to_nearest_ties_away) {
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f); /* tie: away */
    cr_assert_eq(convnd_float_to_tf32(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f));
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-12f), 1.0f);
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);
    cr_assert(isinf(convnd_float_to_tf32(INFINITY)));
    cr_assert(isnan(convnd_float_to_tf32(NAN)));
}

Test(emu_wmma, a_load_from_half_a_warp_is_reported) {
    emu_buffer<convnd_half> a(256);
    emu_buffer<float> d(256);
    for (int i = 0; i < 256; ++i)
        a[i] = convnd_from_f32<convnd_half>(1.0f);
    emu_expect_device_error(
        convnd_launch(half_warp_load_kernel, dim3(1), dim3(32), 0, nullptr, a.p, d.p),
        "load_matrix_sync");
}

Test(emu_wmma, misaligned_pointers_are_reported) {
    emu_buffer<float> d(512);
    emu_expect_device_error(
        convnd_launch(misaligned_store_kernel, dim3(1), dim3(32), 0, nullptr, d.p),
        "32-byte aligned");
}
