/* A throwaway schedule's kernel (tests/add_schedule.sh): a 1x1 forward conv, one thread per
 * output, the fused epilogue. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

template <typename T>
__global__ void throwaway_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                 const T *__restrict__ w, const T *__restrict__ bias, const T *z,
                                 T *y) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.y_numel; i += step) {
        const conv_out_index<int64_t> at = conv_output_index<int64_t>(p, i);
        float acc = 0.0f;
        for (int64_t ci = 0; ci < p.cin_g; ++ci) /* THROWAWAY_CHANNEL_LOOP */
            acc = fmaf(conv_load(x, conv_offset<int64_t>(p.xs, at.n, ci, at.o[0], at.o[1], at.o[2])),
                       conv_load(w, at.c * p.ws[0] + ci * p.ws[1]), acc);
        const int64_t y_off = conv_offset<int64_t>(p.ys, at.n, at.c, at.o[0], at.o[1], at.o[2]);
        const int64_t z_off = conv_offset<int64_t>(p.zs, at.n, at.c, at.o[0], at.o[1], at.o[2]);
        conv_store(y, y_off, conv_epilogue<T, int64_t>(p, acc, bias, z, at.c, z_off));
    }
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(throwaway_pointwise) {
    using namespace CONVND_NS;
    if (a->params.y_numel == 0) return CONVND_OK;
    const int64_t blocks = (a->params.y_numel + 127) / 128;
    return convnd_launch_by_dtype(a->params.dtype, "throwaway_pointwise", [&](auto t) {
        using T = typename decltype(t)::type;
        return convnd_launch(&throwaway_kernel<T>, dim3((unsigned)(blocks < 4096 ? blocks : 4096)),
                             dim3(128), 0, a->stream, a->params, (const T *)a->x,
                             (const T *)a->w, (const T *)a->bias, (const T *)a->z, (T *)a->y);
    });
}
