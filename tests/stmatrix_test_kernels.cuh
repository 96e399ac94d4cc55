/* Kernels that check stmatrix (primitives/stmatrix.cuh) against the PTX ISA's layout table. Like
 * mma_sync_test_kernels.cuh they use only the portability layer, so the same source runs on the
 * emulated device (tests/test_emu_stmatrix.cpp) and compiles with nvcc for an sm_90 GPU. One warp
 * each. */
#ifndef CONVND_STMATRIX_TEST_KERNELS_CUH
#define CONVND_STMATRIX_TEST_KERNELS_CUH

namespace stmatrix_test {

/* Lane l gives r[i] = in[NUM*l + i]; stmatrix writes NUM 8x8 matrices of 16-bit values with each
 * 16-byte row at its own slot (slot_of_row[8*i + row] of 32), so every lane's address matters;
 * out[64*i + 8*row + col] is then element col of row `row` of matrix i as stored. Lanes >= 8*NUM
 * pass a null address, which stmatrix does not use. */
template <int NUM, bool TRANS>
__global__ void stmatrix_kernel(const uint32_t *in, const int *slot_of_row, uint16_t *out) {
    CONVND_SHARED(uint16_t, s, [32 * 8]);
    const unsigned l = threadIdx.x;
    for (unsigned i = l; i < 32 * 8; i += 32)
        s[i] = 0;
    __syncthreads();
    uint32_t r[NUM];
    for (int i = 0; i < NUM; ++i)
        r[i] = in[NUM * l + i];
    convnd_stmatrix<NUM, TRANS>(r, l < 8 * NUM ? &s[slot_of_row[l] * 8] : nullptr);
    __syncthreads();
    for (unsigned i = l; i < 64 * NUM; i += 32)
        out[i] = s[slot_of_row[i / 8] * 8 + i % 8];
}

#ifndef CONVND_CONFORMANCE_GPU /* run on the emulated device only */
/* Misuse the GPU does not allow (or leaves undefined); the emulator reports each. */
__global__ void stmatrix_to_global_kernel(uint16_t *g) {
    const uint32_t r[1] = {threadIdx.x};
    convnd_stmatrix<1, false>(r, g + 8 * (threadIdx.x % 8));
}
__global__ void stmatrix_misaligned_kernel(uint16_t *out) {
    CONVND_SHARED(uint16_t, s, [16 * 8 + 4]);
    const uint32_t r[2] = {threadIdx.x, threadIdx.x};
    convnd_stmatrix<2, false>(r, &s[(threadIdx.x % 16) * 8 + 4]);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void stmatrix_half_warp_kernel(uint16_t *out) {
    CONVND_SHARED(uint16_t, s, [64]);
    const uint32_t r[1] = {threadIdx.x};
    if (threadIdx.x < 16) convnd_stmatrix<1, false>(r, &s[(threadIdx.x % 8) * 8]);
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}

#endif

} // namespace stmatrix_test

#endif
