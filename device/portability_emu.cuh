/* The emulated-device half of the portability layer (CONVND_EMU=1): CUDA's spellings mapped
 * onto the emulator core (device/emu.h). Included by portability.cuh only; never includes a
 * CUDA header. Fast paths (thread indices, shared memory, cp.async queueing, atomics) are inline
 * and make no call; barriers and warp collectives switch fibers. */
#ifndef CONVND_PORTABILITY_EMU_CUH
#define CONVND_PORTABILITY_EMU_CUH

#include <string.h>
#include "emu.h"

/* g++ does not know nvcc's `#pragma unroll`. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* A test may build a kernel a third time, with a planted bug (primitives/planted_bugs.h), under
 * its own namespace and launcher names. */
#ifndef CONVND_NS
#define CONVND_NS convnd_emu
#endif
#ifndef CONVND_LAUNCHER
#define CONVND_LAUNCHER(name) convnd_emu_##name
#endif
#define CONVND_UNROLL(n) CONVND_PRAGMA(GCC unroll n)
/* Unrolled on the GPU only: for large epilogue loops, whose forced unrolling multiplies the host
 * compiler's work without changing what the emulated device computes. */
#define CONVND_UNROLL_GPU(n)

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

/* ---- indices ------------------------------------------------------------------------------ */

typedef convnd_emu_dim3 uint3;

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

/* Read the running fiber's state (a thread-local pointer the scheduler sets at each switch). */
#define threadIdx (::convnd_emu_self->thread_idx)
#define blockIdx (::convnd_emu_self->block->block_idx)
#define blockDim (::convnd_emu_self->block->block_dim)
#define gridDim (::convnd_emu_self->block->grid_dim)
constexpr int warpSize = CONVND_EMU_WARP;

inline void __syncthreads() {
    convnd_emu_syncthreads();
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
    convnd_emu_syncwarp(mask);
}
inline void __threadfence() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_block() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- shared memory ------------------------------------------------------------------------ */

/* A reference to the block's region for this declaration: the static local's address tells the
 * declaration (and the template instance) apart; the first thread to get there places it.
 * Regions are 128-byte aligned, as CONVND_SHARED asks of the GPU compiler. */
#define CONVND_SHARED(T, name, dims)                                                               \
    static char convnd_shared_key_##name;                                                          \
    using convnd_shared_type_##name = T dims;                                                      \
    convnd_shared_type_##name &name =                                                              \
        *reinterpret_cast<convnd_shared_type_##name *>(::convnd_emu_static_shared(                 \
            &convnd_shared_key_##name, sizeof(convnd_shared_type_##name), 128))
#define CONVND_DYNAMIC_SHARED(T, name)                                                             \
    T *name = reinterpret_cast<T *>(::convnd_emu_self->block->smem)

/* ---- launch ------------------------------------------------------------------------------- */

/* Runs the whole grid before returning. The arguments are captured by reference and copied into
 * each thread's by-value parameters, as on a GPU. */
template <typename... KArgs, typename... Args>
inline convnd_status convnd_launch_kernel(const convnd_launch_site &site, void (*kernel)(KArgs...),
                                          dim3 grid, dim3 block, size_t dynamic_smem, void *stream,
                                          Args &&...args) {
    static_assert(sizeof...(KArgs) == sizeof...(Args),
                  "convnd_launch: argument count differs from the kernel's parameters");
    (void)stream;
    auto body = [&]() { kernel(args...); };
    convnd_emu_launch l;
    l.kernel = site.kernel;
    l.launcher = site.launcher;
    l.file = site.file;
    l.line = site.line;
    l.grid = uint3{grid.x, grid.y, grid.z};
    l.block = uint3{block.x, block.y, block.z};
    l.dynamic_smem = dynamic_smem;
    l.invoke = [](void *ctx) { (*static_cast<decltype(body) *>(ctx))(); };
    l.ctx = &body;
    return convnd_emu_run(&l);
}

/* ---- warp-level primitives ---------------------------------------------------------------- */

template <typename T> inline uint64_t convnd_emu_to_bits(const T &v) {
    static_assert(std::is_trivially_copyable<T>::value &&
                      (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8),
                  "warp shuffles move 2-, 4- or 8-byte values");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T> inline T convnd_emu_from_bits(uint64_t b) {
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}

template <typename T> inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
    return convnd_emu_from_bits<T>(
        convnd_emu_shfl(0, mask, convnd_emu_to_bits(var), src_lane, width));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return convnd_emu_from_bits<T>(
        convnd_emu_shfl(1, mask, convnd_emu_to_bits(var), (int)delta, width));
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return convnd_emu_from_bits<T>(
        convnd_emu_shfl(2, mask, convnd_emu_to_bits(var), (int)delta, width));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
    return convnd_emu_from_bits<T>(
        convnd_emu_shfl(3, mask, convnd_emu_to_bits(var), lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
    return convnd_emu_vote(0, mask, predicate);
}
inline int __any_sync(unsigned mask, int predicate) {
    return (int)convnd_emu_vote(1, mask, predicate);
}
inline int __all_sync(unsigned mask, int predicate) {
    return (int)convnd_emu_vote(2, mask, predicate);
}

/* ---- atomics (real ones: blocks run in parallel on host threads) -------------------------- */

template <typename T> inline T convnd_emu_atomic_update(T *p, T (*op)(T, T), T v) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    for (;;) {
        T desired = op(old, v);
        if (__atomic_compare_exchange(p, &old, &desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return old;
    }
}
inline float atomicAdd(float *p, float v) {
    return convnd_emu_atomic_update<float>(
        p, [](float a, float b) { return a + b; }, v);
}
inline double atomicAdd(double *p, double v) {
    return convnd_emu_atomic_update<double>(
        p, [](double a, double b) { return a + b; }, v);
}
inline int atomicAdd(int *p, int v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline int atomicSub(int *p, int v) {
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
inline unsigned atomicSub(unsigned *p, unsigned v) {
    return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
inline int atomicMax(int *p, int v) {
    return convnd_emu_atomic_update<int>(
        p, [](int a, int b) { return a > b ? a : b; }, v);
}
inline unsigned atomicMax(unsigned *p, unsigned v) {
    return convnd_emu_atomic_update<unsigned>(
        p, [](unsigned a, unsigned b) { return a > b ? a : b; }, v);
}
inline int atomicMin(int *p, int v) {
    return convnd_emu_atomic_update<int>(
        p, [](int a, int b) { return a < b ? a : b; }, v);
}
inline unsigned atomicMin(unsigned *p, unsigned v) {
    return convnd_emu_atomic_update<unsigned>(
        p, [](unsigned a, unsigned b) { return a < b ? a : b; }, v);
}
inline int atomicExch(int *p, int v) {
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
inline unsigned atomicExch(unsigned *p, unsigned v) {
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
inline float atomicExch(float *p, float v) {
    float old;
    __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
    return old;
}
inline int atomicCAS(int *p, int expected, int desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
inline unsigned atomicCAS(unsigned *p, unsigned expected, unsigned desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}
inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long expected,
                                    unsigned long long desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
}

/* ---- cp.async: by default copies are queued per thread and performed by the wait that covers
 * them, so a read before the wait sees the poisoned destination, as it might on a GPU. The early
 * and mixed modes (convnd_emu_set_copies) land some or all at issue instead, so a prefetch into a
 * stage that other threads still read shows up too. ---------------------------------------- */

template <int BYTES> inline void convnd_cp_async(void *smem_dst, const void *gmem_src, bool pred) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
    convnd_emu_thread *t = convnd_emu_self;
    const uintptr_t dst = (uintptr_t)smem_dst, smem = (uintptr_t)t->block->smem;
    if (dst < smem || dst + BYTES > smem + CONVND_EMU_MAX_SMEM)
        convnd_emu_fail("cp.async destination %p is not shared memory", smem_dst);
    if ((dst | (pred ? (uintptr_t)gmem_src : 0)) & (BYTES - 1))
        convnd_emu_fail("cp.async of %d bytes from %p to %p: addresses must be %d-byte aligned",
                        BYTES, gmem_src, smem_dst, BYTES);
    if (pred && !gmem_src) convnd_emu_fail("cp.async from a NULL source");
    if (t->block->copies == CONVND_EMU_COPIES_EARLY ||
        (t->block->copies == CONVND_EMU_COPIES_MIXED && convnd_emu_copy_lands_now(t))) {
        if (pred)
            memcpy(smem_dst, gmem_src, BYTES);
        else
            memset(smem_dst, 0, BYTES);
        return;
    }
    if (t->num_copies == t->copies_cap) convnd_emu_cp_async_grow(t);
    convnd_emu_copy *c = &t->copies[t->num_copies++];
    c->dst = smem_dst;
    c->src = pred ? gmem_src : nullptr;
    c->bytes = BYTES;
    c->group = t->groups_committed;
}
inline void convnd_cp_async_commit() {
    ++convnd_emu_self->groups_committed;
}
template <int N> inline void convnd_cp_async_wait() {
    static_assert(N >= 0, "cp.async.wait_group takes a count >= 0");
    convnd_emu_cp_async_wait((uint32_t)N);
}
inline void convnd_cp_async_wait_all() {
    convnd_cp_async_commit();
    convnd_emu_cp_async_wait(0);
}

/* ---- plain vector loads and stores (LD/ST.64, .128): the GPU requires the vector's own
 * alignment and faults on anything less (a misaligned address kills the context); the CPU would
 * not notice, so kernels load and store vectors through these, which check. --------------- */

inline void convnd_emu_check_vector(const void *p, size_t bytes, const char *what) {
    if ((uintptr_t)p % bytes)
        convnd_emu_fail("%zu-byte vector %s at %p: the address must be %zu-byte aligned", bytes,
                        what, p, bytes);
}
template <typename V> inline V convnd_ld_vec(const V *p) {
    convnd_emu_check_vector(p, sizeof(V), "load");
    return *p;
}
template <typename V> inline void convnd_st_vec(V *p, const V &v) {
    convnd_emu_check_vector(p, sizeof(V), "store");
    if (sizeof(V) == 16) convnd_emu_count_vector_store16(p);
    *p = v;
}

/* ---- vector types, with CUDA's alignment -------------------------------------------------- */

struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) int2 {
    int x, y;
};
struct alignas(16) int4 {
    int x, y, z, w;
};
struct alignas(8) uint2 {
    unsigned x, y;
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
struct alignas(16) double2 {
    double x, y;
};
inline float2 make_float2(float x, float y) {
    return float2{x, y};
}
inline float4 make_float4(float x, float y, float z, float w) {
    return float4{x, y, z, w};
}
inline int2 make_int2(int x, int y) {
    return int2{x, y};
}
inline int4 make_int4(int x, int y, int z, int w) {
    return int4{x, y, z, w};
}
inline uint2 make_uint2(unsigned x, unsigned y) {
    return uint2{x, y};
}
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
    return uint4{x, y, z, w};
}
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) {
    return uint3{x, y, z};
}
inline double2 make_double2(double x, double y) {
    return double2{x, y};
}

/* ---- math and bit intrinsics CUDA provides in device code --------------------------------- */

/* Round to TF32 (10 mantissa bits), to nearest with ties away from zero, like
 * cvt.rna.tf32.f32 (the GPU's __float_to_tf32); the result is a float whose low 13 bits are
 * zero. */
inline float convnd_float_to_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0x1000u) & ~0x1FFFu; /* finite only */
    memcpy(&x, &u, sizeof u);
    return x;
}

#define CONVND_EMU_MINMAX(T)                                                                       \
    inline T min(T a, T b) {                                                                       \
        return b < a ? b : a;                                                                      \
    }                                                                                              \
    inline T max(T a, T b) {                                                                       \
        return a < b ? b : a;                                                                      \
    }
CONVND_EMU_MINMAX(int)
CONVND_EMU_MINMAX(unsigned)
CONVND_EMU_MINMAX(long)
CONVND_EMU_MINMAX(unsigned long)
CONVND_EMU_MINMAX(long long)
CONVND_EMU_MINMAX(unsigned long long)
inline float min(float a, float b) {
    return fminf(a, b);
}
inline float max(float a, float b) {
    return fmaxf(a, b);
}
inline double min(double a, double b) {
    return fmin(a, b);
}
inline double max(double a, double b) {
    return fmax(a, b);
}
#undef CONVND_EMU_MINMAX

template <typename T> inline T __ldg(const T *p) {
    return *p;
}
inline float __expf(float x) {
    return expf(x);
}
inline float __logf(float x) {
    return logf(x);
}
inline float __fdividef(float a, float b) {
    return a / b;
}
inline float __frcp_rn(float x) {
    return 1.0f / x;
}
inline float __fmaf_rn(float a, float b, float c) {
    return fmaf(a, b, c);
}
inline float __saturatef(float x) {
    return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
inline float rsqrtf(float x) {
    return 1.0f / sqrtf(x);
}
inline int __popc(unsigned x) {
    return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) {
    return __builtin_popcountll(x);
}
inline int __clz(int x) {
    return x ? __builtin_clz((unsigned)x) : 32;
}
inline int __ffs(int x) {
    return __builtin_ffs(x);
}
inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    return (x >> 16) | (x << 16);
}

#endif
