/* The sm_90 primitives kernels use for the Hopper tier, in both builds: PTX on the GPU (sm_90a
 * for wgmma / setmaxnreg, see CONVND_HOPPER_PTX) and the emulator (device/emu_hopper.h) with
 * CONVND_EMU=1. Include after portability.cuh.
 *
 *  - shared addresses: convnd_smem_addr(p)
 *  - mbarrier: convnd_mbarrier_init, _arrive, _arrive_expect_tx, _expect_tx, _try_wait_parity,
 *    _try_wait (state from arrive), _test_wait_parity, convnd_mbarrier_wait_parity (the loop),
 *    convnd_fence_mbarrier_init
 *  - named barriers convnd_named_barrier_sync / _arrive(id 1..15, count), convnd_elect_one_sync,
 *    convnd_setmaxnreg_inc<N> / _dec<N>, convnd_fence_proxy_async
 *  - wgmma: convnd_wgmma_fence, _commit_group, _wait_group<N>, convnd_wgmma_desc(...),
 *    convnd_wgmma<T, N, TRANS_B>(d, desc_a, desc_b, scale_d) (K-major A; B K-major, or MN-major
 *    with TRANS_B: 16-bit types only)
 *  - TMA: convnd_tma_load_{1..5}d, convnd_tma_load_im2col_{3,4,5}d, convnd_tma_store_{1..5}d,
 *    convnd_bulk_commit_group, convnd_bulk_wait_group_read<N>; tensor maps as convnd_tmap
 *    kernel parameters (CONVND_GRID_CONSTANT). */
#ifndef CONVND_HOPPER_PRIMITIVES_CUH
#define CONVND_HOPPER_PRIMITIVES_CUH

#include "emu_tmap.h"

#if defined(CONVND_EMU) && CONVND_EMU
#include "emu_hopper.h"
#define CONVND_GRID_CONSTANT
/* The emulated device has every sm_90a feature. */
#define CONVND_HOPPER_PTX 1
#else
#define CONVND_GRID_CONSTANT __grid_constant__
/* wgmma and setmaxnreg assemble only for sm_90a (ptxas rejects them for plain sm_90). */
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVND_HOPPER_PTX 1
#else
#define CONVND_HOPPER_PTX 0
#endif
#endif

/* Element types of wgmma operands. */
struct convnd_wgmma_f16 {};
struct convnd_wgmma_bf16 {};
struct convnd_wgmma_tf32 {};

/* Matrix descriptor (PTX ISA 9.7.15, "Matrix Descriptor"): start address, leading and stride
 * dimension byte offsets (all >> 4, 14 bits each), base offset 0, swizzle (0 none, 1 128B, 2 64B, 3
 * 32B). */
__host__ __device__ __forceinline__ uint64_t convnd_wgmma_desc(uint32_t smem_addr, uint32_t lbo,
                                                               uint32_t sbo, uint32_t swizzle) {
    return (uint64_t)((smem_addr >> 4) & 0x3FFF) | ((uint64_t)((lbo >> 4) & 0x3FFF) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3FFF) << 32) | ((uint64_t)(swizzle & 3) << 62);
}

#if defined(CONVND_EMU) && CONVND_EMU

inline uint32_t convnd_smem_addr(const void *p) {
    return convnd_emu_smem_addr(p, "shared-memory pointer");
}
inline void convnd_mbarrier_init(uint64_t *bar, uint32_t count) {
    convnd_emu_mbarrier_init(bar, count);
}
inline void convnd_fence_mbarrier_init() {}
inline uint64_t convnd_mbarrier_arrive(uint64_t *bar) {
    return convnd_emu_mbarrier_arrive(bar, 1, 0);
}
inline uint64_t convnd_mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    return convnd_emu_mbarrier_arrive(bar, 1, bytes);
}
inline void convnd_mbarrier_expect_tx(uint64_t *bar, uint32_t bytes) {
    convnd_emu_mbarrier_expect_tx(bar, bytes);
}
inline void convnd_mbarrier_complete_tx(uint64_t *bar, uint32_t bytes) {
    convnd_emu_mbarrier_complete_tx(bar, bytes);
}
inline bool convnd_mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity) {
    return convnd_emu_mbarrier_try_wait_parity(bar, parity) != 0;
}
inline bool convnd_mbarrier_try_wait(uint64_t *bar, uint64_t state) {
    return convnd_emu_mbarrier_try_wait(bar, state) != 0;
}
inline bool convnd_mbarrier_test_wait_parity(uint64_t *bar, uint32_t parity) {
    return convnd_emu_mbarrier_test_wait_parity(bar, parity) != 0;
}
inline void convnd_named_barrier_sync(uint32_t id, uint32_t count) {
    convnd_emu_named_barrier(id, count, 1);
}
inline void convnd_named_barrier_arrive(uint32_t id, uint32_t count) {
    convnd_emu_named_barrier(id, count, 0);
}
inline bool convnd_elect_one_sync() {
    return convnd_emu_elect_sync(0xFFFFFFFFu) != 0;
}
template <uint32_t N> inline void convnd_setmaxnreg_inc() {
    convnd_emu_setmaxnreg(1, N);
}
template <uint32_t N> inline void convnd_setmaxnreg_dec() {
    convnd_emu_setmaxnreg(0, N);
}
inline void convnd_fence_proxy_async() {
    convnd_emu_fence_proxy_async();
}
inline void convnd_wgmma_fence() {
    convnd_emu_wgmma_fence();
}
inline void convnd_wgmma_commit_group() {
    convnd_emu_wgmma_commit_group();
}
template <uint32_t N> inline void convnd_wgmma_wait_group() {
    convnd_emu_wgmma_wait_group(N);
}
/* Keeps the compiler from moving accumulator accesses into the wgmma pipeline (GPU). */
template <int N> inline void convnd_wgmma_fence_operands(float (&)[N]) {}
template <typename T> struct convnd_wgmma_emu_type;
template <> struct convnd_wgmma_emu_type<convnd_wgmma_f16> {
    static constexpr convnd_emu_wgmma_type value = CONVND_EMU_WGMMA_F16;
};
template <> struct convnd_wgmma_emu_type<convnd_wgmma_bf16> {
    static constexpr convnd_emu_wgmma_type value = CONVND_EMU_WGMMA_BF16;
};
template <> struct convnd_wgmma_emu_type<convnd_wgmma_tf32> {
    static constexpr convnd_emu_wgmma_type value = CONVND_EMU_WGMMA_TF32;
};
/* d: this thread's N/2 accumulators. A K-major; B K-major, or MN-major with TRANS_B (16-bit
 * types only). */
template <typename T, int N, bool TRANS_B = false>
inline void convnd_wgmma(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    convnd_emu_wgmma_mma_async(d, N, convnd_wgmma_emu_type<T>::value, desc_a, desc_b, scale_d, 0,
                               TRANS_B ? 1 : 0);
}
/* Transposed (MN-major) operands: 16-bit types only. */
template <typename T, int N>
inline void convnd_wgmma_trans(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d,
                               int trans_a, int trans_b) {
    convnd_emu_wgmma_mma_async(d, N, convnd_wgmma_emu_type<T>::value, desc_a, desc_b, scale_d,
                               trans_a, trans_b);
}

template <int R>
inline void convnd_tma_load(void *dst, const convnd_tmap &map, uint64_t *bar,
                            const int32_t (&c)[R]) {
    convnd_emu_tma_load(dst, &map, bar, c, R, nullptr, 0);
}
template <int R>
inline void convnd_tma_load_im2col(void *dst, const convnd_tmap &map, uint64_t *bar,
                                   const int32_t (&c)[R], const uint16_t (&off)[R - 2]) {
    convnd_emu_tma_load(dst, &map, bar, c, R, off, R - 2);
}
template <int R>
inline void convnd_tma_store(const convnd_tmap &map, const void *src, const int32_t (&c)[R]) {
    convnd_emu_tma_store(&map, src, c, R);
}
inline void convnd_bulk_commit_group() {
    convnd_emu_bulk_commit_group();
}
template <uint32_t N> inline void convnd_bulk_wait_group_read() {
    convnd_emu_bulk_wait_group(N);
}

#else /* the GPU */

__device__ __forceinline__ uint32_t convnd_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void convnd_mbarrier_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(convnd_smem_addr(bar)), "r"(count)
                 : "memory");
}
__device__ __forceinline__ void convnd_fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ uint64_t convnd_mbarrier_arrive(uint64_t *bar) {
    uint64_t state;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];"
                 : "=l"(state)
                 : "r"(convnd_smem_addr(bar))
                 : "memory");
    return state;
}
__device__ __forceinline__ uint64_t convnd_mbarrier_arrive_expect_tx(uint64_t *bar,
                                                                     uint32_t bytes) {
    uint64_t state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(convnd_smem_addr(bar)), "r"(bytes)
                 : "memory");
    return state;
}
__device__ __forceinline__ void convnd_mbarrier_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile(
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(convnd_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
__device__ __forceinline__ void convnd_mbarrier_complete_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile(
        "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(convnd_smem_addr(bar)),
        "r"(bytes)
        : "memory");
}
__device__ __forceinline__ bool convnd_mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(convnd_smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}
__device__ __forceinline__ bool convnd_mbarrier_try_wait(uint64_t *bar, uint64_t state) {
    uint32_t done;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(convnd_smem_addr(bar)), "l"(state)
                 : "memory");
    return done != 0;
}
__device__ __forceinline__ bool convnd_mbarrier_test_wait_parity(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(convnd_smem_addr(bar)), "r"(parity)
                 : "memory");
    return done != 0;
}
__device__ __forceinline__ void convnd_named_barrier_sync(uint32_t id, uint32_t count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void convnd_named_barrier_arrive(uint32_t id, uint32_t count) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ bool convnd_elect_one_sync() {
    uint32_t elected;
    asm volatile("{\n .reg .b32 r;\n .reg .pred p;\n elect.sync r|p, 0xffffffff;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(elected));
    return elected != 0;
}
__device__ __forceinline__ void convnd_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* sm_90a only: elsewhere these trap (the schedule never launches there). */
#if CONVND_HOPPER_PTX
#define CONVND_SM90A_ASM(...) asm volatile(__VA_ARGS__)
#else
#define CONVND_SM90A_ASM(...) __trap()
#endif
template <uint32_t N> __device__ __forceinline__ void convnd_setmaxnreg_inc() {
    CONVND_SM90A_ASM("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <uint32_t N> __device__ __forceinline__ void convnd_setmaxnreg_dec() {
    CONVND_SM90A_ASM("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
__device__ __forceinline__ void convnd_wgmma_fence() {
    CONVND_SM90A_ASM("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void convnd_wgmma_commit_group() {
    CONVND_SM90A_ASM("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <uint32_t N> __device__ __forceinline__ void convnd_wgmma_wait_group() {
    CONVND_SM90A_ASM("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
#include "hopper_wgmma_gpu.cuh"
/* Keeps the compiler from moving accumulator accesses into the wgmma pipeline (ptxas would
 * serialize the wgmmas: warning C7514). */
template <int N> __device__ __forceinline__ void convnd_wgmma_fence_operands(float (&d)[N]) {
    CONVND_UNROLL(256)
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

#define CONVND_TMA_DIMS_1 "{%3}"
#define CONVND_TMA_DIMS_2 "{%3, %4}"
#define CONVND_TMA_DIMS_3 "{%3, %4, %5}"
#define CONVND_TMA_DIMS_4 "{%3, %4, %5, %6}"
#define CONVND_TMA_DIMS_5 "{%3, %4, %5, %6, %7}"

template <int R>
__device__ __forceinline__ void convnd_tma_load(void *dst, const convnd_tmap &map, uint64_t *bar,
                                                const int32_t (&c)[R]) {
    const uint32_t d = convnd_smem_addr(dst), b = convnd_smem_addr(bar);
    const uint64_t m = (uint64_t)&map;
    if constexpr (R == 1)
        asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [%0], [%1, " CONVND_TMA_DIMS_1 "], [%2];" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0])
                     : "memory");
    else if constexpr (R == 2)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [%0], [%1, " CONVND_TMA_DIMS_2 "], [%2];" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1])
                     : "memory");
    else if constexpr (R == 3)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [%0], [%1, " CONVND_TMA_DIMS_3 "], [%2];" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2])
                     : "memory");
    else if constexpr (R == 4)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [%0], [%1, " CONVND_TMA_DIMS_4 "], [%2];" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::"
                     "bytes [%0], [%1, " CONVND_TMA_DIMS_5 "], [%2];" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
                     : "memory");
}

template <int R>
__device__ __forceinline__ void convnd_tma_load_im2col(void *dst, const convnd_tmap &map,
                                                       uint64_t *bar, const int32_t (&c)[R],
                                                       const uint16_t (&off)[R - 2]) {
    const uint32_t d = convnd_smem_addr(dst), b = convnd_smem_addr(bar);
    const uint64_t m = (uint64_t)&map;
    if constexpr (R == 3)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx"
                     "::bytes [%0], [%1, {%3, %4, %5}], [%2], {%6};" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "h"(off[0])
                     : "memory");
    else if constexpr (R == 4)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx"
                     "::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "h"(off[0]),
                     "h"(off[1])
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx"
                     "::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2], {%8, %9, %10};" ::"r"(d),
                     "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]),
                     "h"(off[0]), "h"(off[1]), "h"(off[2])
                     : "memory");
}

template <int R>
__device__ __forceinline__ void convnd_tma_store(const convnd_tmap &map, const void *src,
                                                 const int32_t (&c)[R]) {
    const uint32_t s = convnd_smem_addr(src);
    const uint64_t m = (uint64_t)&map;
    if constexpr (R == 2)
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], "
                     "[%1];" ::"l"(m),
                     "r"(s), "r"(c[0]), "r"(c[1])
                     : "memory");
    else if constexpr (R == 3)
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group "
                     "[%0, {%2, %3, %4}], [%1];" ::"l"(m),
                     "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2])
                     : "memory");
    else
        static_assert(R == 2 || R == 3, "TMA stores of rank 2 or 3");
}
__device__ __forceinline__ void convnd_bulk_commit_group() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <uint32_t N> __device__ __forceinline__ void convnd_bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

#endif

/* Waits until the phase of bar with this parity completed (try_wait may time out on a GPU). */
__device__ __forceinline__ void convnd_mbarrier_wait_parity(uint64_t *bar, uint32_t parity) {
    while (!convnd_mbarrier_try_wait_parity(bar, parity)) {
    }
}

#endif
