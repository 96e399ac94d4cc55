/* Kernels that check the tensor-core primitives of primitives/mma_sync.cuh against the PTX ISA's
 * fragment tables. They use only the portability layer, so the same source runs on the emulated
 * device (tests/test_emu_mma_sync.cpp) and compiles with nvcc for a GPU: a GPU run checks the
 * tables the emulator implements against the hardware. Every kernel is one warp. */
#ifndef CONVND_MMA_SYNC_TEST_KERNELS_CUH
#define CONVND_MMA_SYNC_TEST_KERNELS_CUH

namespace mma_sync_test {

/* NUM 8x8 matrices of 16-bit values (ids[64*i + 8*row + col]) stored in shared memory with each
 * 16-byte row at its own slot (slot_of_row[8*i + row] of 32), so every lane's address matters.
 * Lanes >= 8*NUM pass a null address, which ldmatrix does not read. out[NUM*lane + i] = r[i].
 * AT: the address as convnd_ldmatrix_at's tile base plus the row's byte offset. */
template <int NUM, bool TRANS, bool AT>
__global__ void ldmatrix_kernel(const uint16_t *ids, const int *slot_of_row, uint32_t *out) {
    CONVND_SHARED(uint16_t, s, [32 * 8]);
    const unsigned l = threadIdx.x;
    for (unsigned i = l; i < 64 * NUM; i += 32)
        s[slot_of_row[i / 8] * 8 + i % 8] = ids[i];
    __syncthreads();
    uint32_t r[NUM];
    if (AT)
        convnd_ldmatrix_at<NUM, TRANS>(r, s, l < 8 * NUM ? slot_of_row[l] * 16 : 0);
    else
        convnd_ldmatrix<NUM, TRANS>(r, l < 8 * NUM ? &s[slot_of_row[l] * 8] : nullptr);
    for (int i = 0; i < NUM; ++i)
        out[NUM * l + i] = r[i];
}

/* D = A*B + C with A 16x16 and B 16x8 (row-major [k][n]) of T, C and D 16x8 f32, the fragments
 * built from global memory by the ISA table (mma_sync.cuh), g = lane/4, t = lane%4. */
template <typename T>
__global__ void mma_m16n8k16_kernel(const T *A, const T *B, const float *C, float *D) {
    const unsigned l = threadIdx.x, g = l / 4, t = l % 4;
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int i = 0; i < 4; ++i) {
        const unsigned at = (g + 8 * (i & 1)) * 16 + 2 * t + 8 * (i >> 1);
        a[i] = convnd_pack2(A[at], A[at + 1]);
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    }
    for (int i = 0; i < 2; ++i)
        b[i] = convnd_pack2(B[(2 * t + 8 * i) * 8 + g], B[(2 * t + 8 * i + 1) * 8 + g]);
    convnd_mma_m16n8k16<T>(d, a, b, c);
    for (int i = 0; i < 4; ++i)
        D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

__device__ __forceinline__ uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The same for m16n8k8 tf32: A 16x8, B 8x8, values already representable in tf32. */
__global__ void mma_m16n8k8_tf32_kernel(const float *A, const float *B, const float *C, float *D) {
    const unsigned l = threadIdx.x, g = l / 4, t = l % 4;
    uint32_t a[4], b[2];
    float c[4], d[4];
    for (int i = 0; i < 4; ++i) {
        a[i] = float_bits(A[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)]);
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    }
    for (int i = 0; i < 2; ++i)
        b[i] = float_bits(B[(t + 4 * i) * 8 + g]);
    convnd_mma_m16n8k8_tf32(d, a, b, c);
    for (int i = 0; i < 4; ++i)
        D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

/* ldmatrix feeding mma the way a GEMM does: A row-major 16xK through .x4 (rows 0-7 | 8-15) x
 * (k 0.. | k K/2..); B Kx8 stored either [k][n] (B_KN, through .x2.trans) or [n][k] (through
 * .x2). f16/bf16: m16n8k16 (K 16); float: m16n8k8 tf32 (K 8), where a 16-byte row is 4 whole
 * 32-bit elements and lane 4*row + w receives element w, the tf32 fragment layout
 * (tc_warp_mma.cuh reads TF32 tiles so); .trans moves 16-bit elements, so tf32 B is [n][k]. */
template <typename T, bool B_KN>
__global__ void ldmatrix_mma_kernel(const T *A, const T *B, const float *C, float *D) {
    constexpr bool TF32 = sizeof(T) == 4;
    constexpr int K = TF32 ? 8 : 16, HALF = K / 2;
    static_assert(!(TF32 && B_KN), "tf32 B is read [n][k]");
    CONVND_SHARED(T, as, [16 * K]);
    CONVND_SHARED(T, bs, [K * 8]);
    const unsigned l = threadIdx.x, g = l / 4, t = l % 4;
    for (unsigned i = l; i < 16 * K; i += 32)
        as[i] = A[i];
    for (unsigned i = l; i < K * 8; i += 32)
        bs[i] = B[i];
    __syncthreads();
    uint32_t a[4], b[2];
    float c[4], d[4];
    convnd_ldmatrix<4, false>(a, &as[(l % 16) * K + (l / 16) * HALF]);
    if constexpr (B_KN)
        convnd_ldmatrix<2, true>(b, &bs[(l % 16) * 8]);
    else
        convnd_ldmatrix<2, false>(b, &bs[(l % 8) * K + ((l / 8) % 2) * HALF]);
    for (int i = 0; i < 4; ++i)
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    if constexpr (TF32)
        convnd_mma_m16n8k8_tf32(d, a, b, c);
    else
        convnd_mma_m16n8k16<T>(d, a, b, c);
    for (int i = 0; i < 4; ++i)
        D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

#ifndef CONVND_CONFORMANCE_GPU /* run on the emulated device only */
/* Misuse the GPU does not allow (or leaves undefined); the emulator reports each. */
__global__ void ldmatrix_from_global_kernel(const uint16_t *g, uint32_t *out) {
    uint32_t r[1];
    convnd_ldmatrix<1, false>(r, g + 8 * (threadIdx.x % 8));
    out[threadIdx.x] = r[0];
}
__global__ void ldmatrix_misaligned_kernel(uint32_t *out) {
    CONVND_SHARED(uint16_t, s, [16 * 8 + 4]);
    uint32_t r[2];
    convnd_ldmatrix<2, false>(r, &s[(threadIdx.x % 16) * 8 + 4]);
    out[threadIdx.x] = r[0];
}
__global__ void ldmatrix_half_warp_kernel(uint32_t *out) {
    CONVND_SHARED(uint16_t, s, [64]);
    uint32_t r[1] = {0};
    if (threadIdx.x < 16) convnd_ldmatrix<1, false>(r, &s[(threadIdx.x % 8) * 8]);
    out[threadIdx.x] = r[0];
}
__global__ void mma_half_warp_kernel(float *out) {
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float c[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
    if (threadIdx.x >= 8) convnd_mma_m16n8k16<convnd_half>(d, a, b, c);
    out[threadIdx.x] = d[0];
}

#endif

} // namespace mma_sync_test

#endif
