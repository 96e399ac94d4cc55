/* The GPU half of the portability layer (nvcc, CONVND_GPU): mostly CUDA itself, plus the few
 * names the emulated device also provides (launch, shared memory, cp.async, TF32 rounding). */
#ifndef CONVND_PORTABILITY_GPU_CUH
#define CONVND_PORTABILITY_GPU_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>

#define CONVND_NS convnd_gpu
#define CONVND_LAUNCHER(name) convnd_gpu_##name
#define CONVND_UNROLL(n) CONVND_PRAGMA(unroll n)
#define CONVND_UNROLL_GPU(n) CONVND_PRAGMA(unroll n)

/* 128-byte aligned: more than 16-byte vectors, cp.async and ldmatrix/stmatrix rows need; the
 * Hopper tier's 128B-swizzled stages want 1024 and round their own base up (hopper_igemm.cu). */
#define CONVND_SHARED(T, name, dims) __shared__ __align__(128) T name dims
#define CONVND_DYNAMIC_SHARED(T, name)                                                             \
    extern __shared__ __align__(128) unsigned char convnd_dynamic_smem[];                          \
    T *name = reinterpret_cast<T *>(convnd_dynamic_smem)

/* ---- launch ------------------------------------------------------------------------------- */

template <typename... KArgs, typename... Args>
inline convnd_status convnd_launch_kernel(const convnd_launch_site &site, void (*kernel)(KArgs...),
                                          dim3 grid, dim3 block, size_t dynamic_smem, void *stream,
                                          Args &&...args) {
    static_assert(sizeof...(KArgs) == sizeof...(Args),
                  "convnd_launch: argument count differs from the kernel's parameters");
    if (dynamic_smem > 48 * 1024) { /* above 48 KiB a kernel must opt in */
        const cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(dynamic_smem));
        if (e != cudaSuccess)
            return convnd_error(CONVND_ERR_DEVICE,
                                "kernel %s (launched by %s at %s:%d): cannot allow %zu bytes of "
                                "dynamic shared memory: %s",
                                site.kernel, site.launcher, site.file, site.line, dynamic_smem,
                                cudaGetErrorString(e));
    }
    kernel<<<grid, block, dynamic_smem, static_cast<cudaStream_t>(stream)>>>(
        std::forward<Args>(args)...);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return convnd_error(CONVND_ERR_DEVICE,
                            "kernel %s (launched by %s at %s:%d): launch of grid (%u,%u,%u) x "
                            "block (%u,%u,%u) with %zu bytes of dynamic shared memory failed: %s",
                            site.kernel, site.launcher, site.file, site.line, grid.x, grid.y,
                            grid.z, block.x, block.y, block.z, dynamic_smem, cudaGetErrorString(e));
    return CONVND_OK;
}

/* ---- plain vector loads and stores; the emulated device checks their alignment ---------- */

template <typename V> __device__ __forceinline__ V convnd_ld_vec(const V *p) {
    return *p;
}
template <typename V> __device__ __forceinline__ void convnd_st_vec(V *p, const V &v) {
    *p = v;
}

/* ---- cp.async (sm_80+); a plain copy on older targets ------------------------------------- */

template <int BYTES>
__device__ __forceinline__ void convnd_cp_async(void *smem_dst, const void *gmem_src, bool pred) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async moves 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    const int src_bytes = pred ? BYTES : 0; /* 0: the destination is zero-filled */
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src),
                     "r"(src_bytes)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem_src),
                     "n"(BYTES), "r"(src_bytes)
                     : "memory");
    }
#else
    unsigned char *d = static_cast<unsigned char *>(smem_dst);
    const unsigned char *s = static_cast<const unsigned char *>(gmem_src);
    for (int i = 0; i < BYTES; ++i)
        d[i] = pred ? s[i] : 0;
#endif
}

__device__ __forceinline__ void convnd_cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N> __device__ __forceinline__ void convnd_cp_async_wait() {
    static_assert(N >= 0, "cp.async.wait_group takes a count >= 0");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ void convnd_cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/* ---- tensor cores: operands rounded to TF32 (cvt.rna.tf32.f32) ------------------------------ */

__device__ __forceinline__ float convnd_float_to_tf32(float x) {
    return nvcuda::wmma::__float_to_tf32(x);
}

#endif
