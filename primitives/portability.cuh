/* The kernel portability layer: the same kernel source compiles with nvcc for the GPU
 * (CONVND_GPU) and with the host C++ compiler for the emulated device (CONVND_EMU=1, no CUDA
 * header needed). Every families/FAMILY/NAME.cu includes it first and puts its code in
 * `namespace CONVND_NS` (convnd_gpu or convnd_emu: the same .cu is linked twice).
 *
 * What kernel code may use, in both builds:
 *  - __global__ __device__ __host__ __forceinline__ __restrict__ __launch_bounds__ __align__,
 *    threadIdx blockIdx blockDim gridDim dim3 uint3 warpSize __syncthreads() __threadfence()
 *  - shared memory: CONVND_SHARED(float, tile, [2][64][36]); (static, declared at kernel top
 *    level) and CONVND_DYNAMIC_SHARED(float, smem); never __shared__ directly
 *  - launch: convnd_launch(kernel_ptr, grid, block, dynamic_smem_bytes, stream, args...) returns
 *    a convnd_status (bind a template instance to a pointer first: auto k = &kern<64, 4>;)
 *  - warp: __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync (2/4/8-byte types),
 *    __ballot_sync __any_sync __all_sync __syncwarp: warp-collective
 *  - atomics: atomicAdd (float, double, int, unsigned, unsigned long long), atomicSub, atomicMax,
 *    atomicMin, atomicExch, atomicCAS on int/unsigned
 *  - cp.async: convnd_cp_async<4|8|16>(smem_dst, gmem_src, pred) (zero-fills when !pred),
 *    convnd_cp_async_commit(), convnd_cp_async_wait<N>(), convnd_cp_async_wait_all()
 *  - 16-bit types convnd_half, convnd_bf16; convnd_to_f32(x), convnd_from_f32<T>(f) (RNE)
 *  - vector types float2 float4 int2 int4 uint2 uint4 double2 and their make_* functions;
 *    loaded and stored through memory only with convnd_ld_vec(p) / convnd_st_vec(p, v), which the
 *    emulated device checks for the vector's alignment (the GPU faults on a misaligned one)
 *  - tensor cores: convnd_float_to_tf32 (mma.sync, ldmatrix, stmatrix: mma_sync.cuh, stmatrix.cuh)
 *  - <cmath>, min/max on integer and floating types, __ldg, __popc, __clz, __ffs, __expf...
 *  - CONVND_UNROLL(n): an unroll pragma both compilers understand; CONVND_UNROLL_GPU(n): one
 *    that only nvcc applies (loops whose unrolling would only slow the emulated build). */
#ifndef CONVND_PORTABILITY_CUH
#define CONVND_PORTABILITY_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmath>
#include <type_traits>
#include <utility>

#include "convnd.h"
#include "error.h"

/* Where a launch comes from, for error messages (the kernel's own name is not recoverable from
 * a function pointer). */
struct convnd_launch_site {
    const char *kernel;   /* as spelled at the call */
    const char *launcher; /* the enclosing function, with template arguments */
    const char *file;
    int line;
};

#define convnd_launch(kernel, ...)                                                                 \
    ::convnd_launch_kernel(::convnd_launch_site{#kernel, __PRETTY_FUNCTION__, __FILE__, __LINE__}, \
                           kernel, __VA_ARGS__)

#define CONVND_PRAGMA(x) _Pragma(#x)

#if defined(CONVND_EMU) && CONVND_EMU
#include "portability_emu.cuh"
#elif defined(__CUDACC__)
#ifndef CONVND_GPU
#define CONVND_GPU 1
#endif
#include "portability_gpu.cuh"
#else
#error "portability.cuh: compile with nvcc, or define CONVND_EMU=1 for the emulated device"
#endif

#include "half_types.cuh"

#endif
