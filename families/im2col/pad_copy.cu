/* The materialized zero-pad copy (families/im2col/pad_copy.h): one thread per padded element, in the
 * padded tensor's memory order, so that stores are coalesced. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "pad_copy.h"
#include "error.h"

namespace CONVND_NS {

static const int pad_copy_threads = 256;
static const int64_t pad_copy_max_blocks = 65536;

template <typename T, typename Idx>
__global__ void pad_copy_kernel(const convnd_conv_params p, const T *__restrict__ x,
                                T *__restrict__ xp, Idx total) {
    const Idx C = (Idx)p.C_in;
    Idx sz[3];
    for (int t = 0; t < 3; ++t)
        sz[t] = (Idx)(p.in[t] + p.p0[t] + p.p1[t]);
    const Idx step = (Idx)gridDim.x * (Idx)blockDim.x;
    for (Idx linear = (Idx)blockIdx.x * (Idx)blockDim.x + (Idx)threadIdx.x; linear < total;
         linear += step) {
        Idx q = linear, c = 0, o[3];
        if (p.x_cl) {
            c = q % C;
            q /= C;
        }
        o[2] = q % sz[2];
        q /= sz[2];
        o[1] = q % sz[1];
        q /= sz[1];
        o[0] = q % sz[0];
        q /= sz[0];
        if (!p.x_cl) {
            c = q % C;
            q /= C;
        }
        const Idx n = q;
        bool inside = true;
        Idx i[3];
        for (int t = 0; t < 3; ++t) {
            i[t] = o[t] - (Idx)p.p0[t];
            inside = inside && i[t] >= 0 && i[t] < (Idx)p.in[t];
        }
        xp[linear] =
            inside ? x[conv_offset<Idx>(p.xs, n, c, i[0], i[1], i[2])] : convnd_from_f32<T>(0.0f);
    }
}

template <typename T> static convnd_status pad_copy_typed(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    int64_t total = p.N * p.C_in;
    for (int t = 0; t < 3; ++t)
        total *= p.in[t] + p.p0[t] + p.p1[t];
    if (total <= 0) return CONVND_OK;
    int64_t blocks = (total + pad_copy_threads - 1) / pad_copy_threads;
    if (blocks > pad_copy_max_blocks) blocks = pad_copy_max_blocks;
    const dim3 grid((unsigned)blocks), block(pad_copy_threads);
    if (conv_needs_index64(p) || total >= ((int64_t)1 << 30)) {
        auto kernel = &pad_copy_kernel<T, int64_t>;
        return convnd_launch(kernel, grid, block, 0, a->stream, p, (const T *)a->x, (T *)a->y,
                             total);
    }
    auto kernel = &pad_copy_kernel<T, int32_t>;
    return convnd_launch(kernel, grid, block, 0, a->stream, p, (const T *)a->x, (T *)a->y,
                         (int32_t)total);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(pad_copy) {
    using namespace CONVND_NS;
    if (a->params.mode != CONVND_FORWARD)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "pad_copy: only forward problems pad their input");
    return convnd_launch_by_dtype(a->params.dtype, "pad_copy", [&](auto t) {
        return pad_copy_typed<typename decltype(t)::type>(a);
    });
}
