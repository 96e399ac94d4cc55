/* wgmma on the emulated device, against the PTX ISA (9.7.15): matrix descriptors over the
 * canonical K-major and MN-major layouts with none / 32B / 64B / 128B swizzle (operands laid out
 * here from the ISA's layout tables, or by TMA with the matching swizzle), the accumulator
 * register fragment layout, deferred completion (poisoned accumulators before the covering
 * wgmma.wait_group, wait_group N), wgmma.fence, whole-warpgroup execution and the
 * fence.proxy.async rule for operands written by ordinary stores. Two thread orders each. The
 * layout and mainloop checks (not the emulator's poison and misuse diagnostics) also run on a GPU
 * in convnd_gpu_conformance (tests/gpu/). */
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

/* Byte offset of element (r, k) of an operand in the canonical layouts (ISA 9.7.15.5.1.2,
 * written out as CUTLASS's GMMA layout atoms): K-major: ((8, m), (T, 2k)) : ((span, SBO),
 * (1, T or LBO)); MN-major swizzled: ((per_row, m), (8, k)) : ((1, LBO), (span, SBO)); MN-major
 * none: ((T, m), (8, k)) : ((1, SBO), (16 bytes, LBO)). Then the swizzle of the address. */
uint32_t layout_offset(uint32_t esize, bool mn_major, uint32_t swz_bytes, uint32_t lbo,
                       uint32_t sbo, uint32_t r, uint32_t k) {
    const uint32_t t = 16 / esize;
    uint32_t off;
    if (!mn_major) {
        if (!swz_bytes)
            off = (r % 8) * 16 + (r / 8) * sbo + (k % t) * esize + (k / t) * lbo;
        else
            off = (r % 8) * swz_bytes + (r / 8) * sbo + k * esize;
    } else {
        if (!swz_bytes) {
            off = (r % t) * esize + (r / t) * sbo + (k % 8) * 16 + (k / 8) * lbo;
        } else {
            const uint32_t per_row = swz_bytes / esize;
            off = (r % per_row) * esize + (r / per_row) * lbo + (k % 8) * swz_bytes + (k / 8) * sbo;
        }
    }
    const uint32_t bits = swz_bytes == 128 ? 3 : swz_bytes == 64 ? 2 : swz_bytes == 32 ? 1 : 0;
    return off ^ (((off >> 7) & ((1u << bits) - 1u)) << 4);
}

uint32_t swizzle_code(uint32_t bytes) { /* descriptor field: 1 128B, 2 64B, 3 32B */
    return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : 0;
}

/* One warpgroup: copy operands from global to shared memory at the given byte offsets
 * (ordinary stores), fence (FENCE), then ksteps wgmmas of m64nNk16 into one accumulator,
 * commit, and write the accumulators out through the ISA's fragment layout. EARLY: also write
 * d[0] before the wait. */
template <typename T, typename W, int N, bool FENCE, bool EARLY>
__global__ void mma_kernel(const T *a, const uint32_t *a_off, uint32_t a_count, const T *b,
                           const uint32_t *b_off, uint32_t b_count, uint64_t desc_a,
                           uint64_t desc_b, uint32_t a_step, uint32_t b_step, int ksteps, int trans,
                           float *out, float *early) {
    CONVND_DYNAMIC_SHARED(unsigned char, raw);
    /* 1024-byte aligned: the swizzle patterns are of the shared address */
    unsigned char *smem = raw + (1024 - convnd_smem_addr(raw) % 1024) % 1024;
    const unsigned t = threadIdx.x;
    for (uint32_t i = t; i < a_count; i += 128)
        memcpy(smem + a_off[i], &a[i], sizeof(T));
    for (uint32_t i = t; i < b_count; i += 128)
        memcpy(smem + 32768 + b_off[i], &b[i], sizeof(T));
    if (FENCE) convnd_fence_proxy_async();
    __syncthreads();
    float d[N / 2];
    for (int i = 0; i < N / 2; ++i)
        d[i] = 0.0f;
    const uint32_t base = convnd_smem_addr(smem);
    convnd_wgmma_fence_operands(d); /* as the kernels do: no accumulator move inside the group */
    convnd_wgmma_fence();
    for (int s = 0; s < ksteps; ++s) {
        const uint64_t da = desc_a + (((base + s * a_step) >> 4) & 0x3FFF),
                       db = desc_b + (((base + 32768 + s * b_step) >> 4) & 0x3FFF);
#ifdef CONVND_CONFORMANCE_GPU
        /* the GPU's wrappers are the kernels': A K-major, B either (16-bit types) */
        if constexpr (sizeof(T) == 2) {
            if (trans >> 1)
                convnd_wgmma<W, N, true>(d, da, db, s > 0);
            else
                convnd_wgmma<W, N, false>(d, da, db, s > 0);
        } else {
            convnd_wgmma<W, N, false>(d, da, db, s > 0);
        }
#else
        convnd_wgmma_trans<W, N>(d, da, db, s > 0, trans & 1, trans >> 1);
#endif
    }
    convnd_wgmma_commit_group();
    if (EARLY) early[t] = d[0];
    convnd_wgmma_wait_group<0>();
    convnd_wgmma_fence_operands(d);
    const unsigned warp = t / 32, lane = t % 32;
    for (int i = 0; i < N / 2; ++i) {
        const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        out[row * N + col] = d[i];
    }
}

template <typename T> struct wgmma_of;
template <> struct wgmma_of<convnd_half> { typedef convnd_wgmma_f16 type; };
template <> struct wgmma_of<convnd_bf16> { typedef convnd_wgmma_bf16 type; };
template <> struct wgmma_of<float> { typedef convnd_wgmma_tf32 type; };

float tf32_trunc(float x) { /* the tensor core reads the top 19 bits of a tf32 operand */
    uint32_t u;
    memcpy(&u, &x, 4);
    u &= 0xFFFFE000u;
    memcpy(&x, &u, 4);
    return x;
}
template <typename T> float value_of(T x) {
    return convnd_to_f32(x);
}
template <> float value_of<float>(float x) {
    return tf32_trunc(x);
}

struct layout {
    bool mn_major;
    uint32_t swz, lbo, sbo;
};

/* D (64 x N) = A (64 x K) B^T (N x K), K = ksteps * kstep; compares with a host fmaf chain. */
template <typename T, int N, bool FENCE = true, bool EARLY = false>
convnd_status run_mma(layout la, layout lb, int ksteps, const char *what, bool check = true) {
    const uint32_t esize = sizeof(T), kstep = 32 / esize, K = kstep * ksteps;
    emu_buffer<T> a(64 * K), b(N * K);
    emu_buffer<uint32_t> ao(64 * K), bo(N * K);
    emu_buffer<float> out(64 * N), early(128);
    uint64_t seed = 12345;
    auto rnd = [&]() {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return (float)((seed >> 40) % 2001) / 1000.0f - 1.0f;
    };
    for (uint32_t i = 0; i < 64 * K; ++i) {
        a[i] = convnd_from_f32<T>(rnd());
        ao[i] = layout_offset(esize, la.mn_major, la.swz, la.lbo, la.sbo, i / K, i % K);
    }
    for (uint32_t i = 0; i < (uint32_t)N * K; ++i) {
        b[i] = convnd_from_f32<T>(rnd());
        bo[i] = layout_offset(esize, lb.mn_major, lb.swz, lb.lbo, lb.sbo, i / K, i % K);
    }
    /* The K step moves the start address: within a swizzled K-major row by 32 bytes; else by
     * the layout's offset of element (0, kstep). */
    const uint32_t a_step = layout_offset(esize, la.mn_major, 0 * la.swz, la.lbo, la.sbo, 0, kstep),
                   b_step = layout_offset(esize, lb.mn_major, 0 * lb.swz, lb.lbo, lb.sbo, 0, kstep);
    const uint64_t da = convnd_wgmma_desc(0, la.lbo, la.sbo, swizzle_code(la.swz));
    const uint64_t db = convnd_wgmma_desc(0, lb.lbo, lb.sbo, swizzle_code(lb.swz));
    typedef typename wgmma_of<T>::type W;
    auto k = &mma_kernel<T, W, N, FENCE, EARLY>;
    const convnd_status st = emu_launch(
        k, dim3(1), dim3(128), 65536 + 1024, nullptr, a.p, ao.p, 64 * K, b.p, bo.p, (uint32_t)N * K,
        da, db, a_step, b_step, ksteps, (int)la.mn_major | 2 * (int)lb.mn_major, out.p, early.p);
    if (st != CONVND_OK || !check) return st;
    for (int m = 0; m < 64; ++m)
        for (int n = 0; n < N; ++n) {
            float ref = 0.0f, mag = 0.0f;
            for (uint32_t kk = 0; kk < K; ++kk) {
                const float x = value_of(a[m * K + kk]), y = value_of(b[n * K + kk]);
                ref = fmaf(x, y, ref);
                mag += fabsf(x * y);
            }
            /* products of 16-bit (or tf32) inputs are exact in f32; only the summation order
             * may differ on a GPU: a few f32 ulps of the magnitude */
            cr_assert(fabsf(out[m * N + n] - ref) <= 1e-6f * mag + 1e-30f,
                      "%s: D[%d][%d] = %g, expected %g", what, m, n, out[m * N + n], ref);
        }
    if (EARLY)
        for (int t = 0; t < 128; ++t)
            cr_assert(isnan(early[t]), "%s: thread %d read its accumulator before the wait", what,
                      t);
    return st;
}

} // namespace

Test(emu_wgmma, k_major_operands_through_every_swizzle) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        /* none: core matrices 128 bytes; LBO steps K (4 core matrices for K = 32), SBO 8 rows */
        cr_assert_eq(
            (run_mma<convnd_bf16, 64>({false, 0, 128, 512}, {false, 0, 128, 512}, 2, "bf16 none")),
            CONVND_OK, "%s", convnd_last_error());
        const uint32_t spans[3] = {32, 64, 128};
        for (uint32_t s : spans) {
            /* one K step of 32 bytes per span row; the next K step is 32 bytes further in the
             * same rows (only 128B/64B rows hold more than one) */
            const int ksteps = (int)(s / 32);
            layout l = {false, s, 16, 8 * s};
            cr_assert_eq((run_mma<convnd_half, 128>(l, l, ksteps, "f16 swizzled")), CONVND_OK,
                         "span %u: %s", s, convnd_last_error());
            cr_assert_eq((run_mma<float, 64>(l, l, ksteps, "tf32 swizzled")), CONVND_OK,
                         "span %u: %s", s, convnd_last_error());
        }
    }
}

Test(emu_wgmma, mn_major_operands_through_every_swizzle) {
    /* none: 8 MN elements per 16-byte core row; SBO steps MN core matrices, LBO 8 K */
    const layout mn_none = {true, 0, 1024, 128}, k_none = {false, 0, 128, 512};
    /* B MN-major under a K-major A, as the Hopper tier's kernels read a k-major filter */
    cr_assert_eq((run_mma<convnd_bf16, 64>(k_none, mn_none, 1, "bf16 B MN none")), CONVND_OK, "%s",
                 convnd_last_error());
#ifndef CONVND_CONFORMANCE_GPU /* an MN-major A: no GPU wrapper (no kernel uses one) */
    cr_assert_eq((run_mma<convnd_bf16, 64>(mn_none, mn_none, 1, "bf16 MN none")), CONVND_OK, "%s",
                 convnd_last_error());
#endif
    const uint32_t spans[3] = {32, 64, 128};
    for (uint32_t s : spans) {
        /* a span row holds s/2 MN elements; LBO steps MN atoms (8 K rows of s bytes), SBO 8 K */
        const uint32_t atoms = 64 / (s / 2);
        const layout mn = {true, s, 8 * s, 8 * s * atoms}, k = {false, s, 16, 8 * s};
        cr_assert_eq((run_mma<convnd_half, 64>(k, mn, 1, "f16 B MN swizzled")), CONVND_OK,
                     "span %u: %s", s, convnd_last_error());
#ifndef CONVND_CONFORMANCE_GPU
        cr_assert_eq((run_mma<convnd_half, 64>(mn, mn, 1, "f16 MN swizzled")), CONVND_OK,
                     "span %u: %s", s, convnd_last_error());
#endif
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's poison and diagnostics: undefined on a GPU */
Test(emu_wgmma, accumulators_are_poison_until_the_covering_wait) {
    layout l = {false, 128, 16, 1024};
    cr_assert_eq((run_mma<convnd_bf16, 64, true, true>(l, l, 4, "early read")), CONVND_OK, "%s",
                 convnd_last_error());
}

Test(emu_wgmma, operands_written_without_fence_proxy_async_are_an_error) {
    layout l = {false, 128, 16, 1024};
    cr_assert_eq((run_mma<convnd_bf16, 64, false>(l, l, 1, "no fence", false)), CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "wgmma.mma_async reads shared memory byte"), "%s",
              convnd_last_error());
}

#endif

namespace {

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's poison and diagnostics: undefined on a GPU */
/* CASE 0: wait_group<1> completes the older group only. 1: no wgmma.fence. 2: no wait at all.
 * 3: one warp skips the wgmma. 4: an operand element overwritten (and fenced) while both groups
 * are in flight. */
template <int CASE> __global__ void group_kernel(float *out) {
    CONVND_DYNAMIC_SHARED(convnd_bf16, smem);
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < 64 * 16 + 8 * 16; i += 128)
        smem[i] = convnd_from_f32<convnd_bf16>(1.0f);
    convnd_fence_proxy_async();
    __syncthreads();
    const uint32_t base = convnd_smem_addr(smem);
    const uint64_t da = convnd_wgmma_desc(base, 128, 256, 0);
    const uint64_t db = convnd_wgmma_desc(base + 64 * 16 * 2, 128, 256, 0);
    float d1[4] = {0, 0, 0, 0}, d2[4] = {0, 0, 0, 0};
    if (CASE != 1) convnd_wgmma_fence();
    if (CASE == 3 && t >= 96) return;
    convnd_wgmma<convnd_wgmma_bf16, 8>(d1, da, db, 0);
    convnd_wgmma_commit_group();
    convnd_wgmma<convnd_wgmma_bf16, 8>(d2, da, db, 1);
    convnd_wgmma_commit_group();
    if (CASE == 2) return;
    if (CASE == 4 && t == 0) {
        smem[5] = convnd_from_f32<convnd_bf16>(2.0f);
        convnd_fence_proxy_async();
    }
    convnd_wgmma_wait_group<1>();
    out[t] = d1[0];
    out[128 + t] = d2[0];
    convnd_wgmma_wait_group<0>();
    out[256 + t] = d2[0];
}

#endif

/* The mainloop pattern: per K block fence, issue onto the same accumulators, commit, and
 * wait_group 1 (the previous block done). Each block adds 16; the result is 16 * blocks. */
__global__ void pipelined_kernel(int blocks, float *out) {
    CONVND_DYNAMIC_SHARED(convnd_bf16, smem);
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < 64 * 16 + 8 * 16; i += 128)
        smem[i] = convnd_from_f32<convnd_bf16>(1.0f);
    convnd_fence_proxy_async();
    __syncthreads();
    const uint32_t base = convnd_smem_addr(smem);
    const uint64_t da = convnd_wgmma_desc(base, 128, 256, 0);
    const uint64_t db = convnd_wgmma_desc(base + 64 * 16 * 2, 128, 256, 0);
    float d[4] = {0, 0, 0, 0};
    for (int kb = 0; kb < blocks; ++kb) {
        convnd_wgmma_fence();
        convnd_wgmma<convnd_wgmma_bf16, 8>(d, da, db, kb > 0);
        convnd_wgmma_commit_group();
        convnd_wgmma_wait_group<1>();
    }
    convnd_wgmma_wait_group<0>();
    out[t] = d[0] + d[1] + d[2] + d[3];
}

} // namespace

Test(emu_wgmma, a_pipelined_mainloop_accumulates_every_block) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<float> out(128);
        cr_assert_eq(emu_launch(pipelined_kernel, dim3(1), dim3(128), 8192, nullptr, 5, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        for (int t = 0; t < 128; ++t)
            cr_assert_eq(out[t], 4 * 16.0f * 5, "%s thread %d: %g", test_order_name(o), t, out[t]);
    }
}

#ifndef CONVND_CONFORMANCE_GPU /* the emulator's poison and diagnostics: undefined on a GPU */
Test(emu_wgmma, wait_group_n_leaves_the_newest_groups_in_flight) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<float> out(384);
        cr_assert_eq(convnd_launch(group_kernel<0>, dim3(1), dim3(128), 8192, nullptr, out.p),
                     CONVND_OK, "%s", convnd_last_error());
        for (int t = 0; t < 128; ++t) {
            cr_assert_eq(out[t], 16.0f, "older group complete after wait_group 1");
            cr_assert(isnan(out[128 + t]), "newer group still in flight");
            cr_assert_eq(out[256 + t], 16.0f, "scale-d 1 onto the 0 it had at issue");
        }
    }
}

Test(emu_wgmma, misuse_is_reported) {
    emu_buffer<float> out(384);
    cr_assert_eq(convnd_launch(group_kernel<1>, dim3(1), dim3(128), 8192, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "without a wgmma.fence"), "%s",
              convnd_last_error());
    cr_assert_eq(convnd_launch(group_kernel<2>, dim3(1), dim3(128), 8192, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "never completed by a wgmma.wait_group"), "%s",
              convnd_last_error());
    cr_assert_eq(convnd_launch(group_kernel<3>, dim3(1), dim3(128), 8192, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "warpgroup 0: 96 of 128 threads arrived"), "%s",
              convnd_last_error());
    cr_assert_eq(convnd_launch(group_kernel<0>, dim3(1), dim3(96), 8192, nullptr, out.p),
                 CONVND_ERR_DEVICE);
    cr_assert(emu_contains(convnd_last_error(), "needs a whole warpgroup"), "%s",
              convnd_last_error());
}

/* The hardware may read a wgmma's operands any time up to the covering wait_group: shared memory
 * changed in between (a stage released or refilled too early) is an error at that wait, naming
 * the element, in every thread order. */
Test(emu_wgmma, an_operand_changed_before_the_covering_wait_is_an_error) {
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        emu_buffer<float> out(384);
        cr_assert_eq(convnd_launch(group_kernel<4>, dim3(1), dim3(128), 8192, nullptr, out.p),
                     CONVND_ERR_DEVICE, "%s", test_order_name(o));
        cr_assert(emu_contains(convnd_last_error(), "operand A (descriptor 0x") &&
                      emu_contains(convnd_last_error(), "element (0, 5) at shared address 0xa "
                                                        "changed from 0x3f80 to 0x4000 before the "
                                                        "wgmma.wait_group"),
                  "%s: %s", test_order_name(o), convnd_last_error());
    }
}
#endif
