/* Depthwise convolution, channels-first path (config cf_tile of the depthwise schedule).
 *
 * A block computes a tile_h x tile_w output tile of one channel plane (n, c_out, o0). For each
 * kernel slab k0 it copies the input tile + halo of that plane's input channel (c_out / M) into
 * shared memory as f32 (zeros in the padding), coalesced along W, and the slab's K1 x K2
 * weights next to it; then every thread accumulates RH output rows of one column from shared
 * memory. Each input element is read from global memory once per tile (plus the halo), whatever
 * the kernel size, which is what large depthwise kernels (7x7 to 31x31) need. Other layouts
 * run through the same strides, only with a worse access pattern. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "depthwise_configs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

struct dw_tile_args {
    int64_t tile_h, tile_w, in_h, in_w, tiles_h, tiles_w, blocks; /* blocks: planes * tiles */
    int64_t w_smem_offset; /* floats before the weights (the input tile, rounded up) */
};

/* Block bx x by; thread (tx, ty) owns output rows ty*RH .. ty*RH + RH - 1 of column tx. The
 * block loop is block-uniform so that every thread reaches the barriers. */
template <typename T, typename Idx, int RH>
__global__ void __launch_bounds__(CONVND_DW_THREADS, 1)
    depthwise_tile_kernel(const convnd_conv_params p, const T *__restrict__ x,
                          const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y,
                          const dw_tile_args g) {
    CONVND_DYNAMIC_SHARED(float, smem);
    float *const tile = smem;
    float *const wk = smem + g.w_smem_offset;
    const int tid = (int)(threadIdx.y * blockDim.x + threadIdx.x);
    const int nthreads = (int)(blockDim.x * blockDim.y);
    const int in_h = (int)g.in_h, in_w = (int)g.in_w, in_n = in_h * in_w;
    const int K1 = (int)p.k[1], K2 = (int)p.k[2], taps = K1 * K2;
    const int S1 = (int)p.s[1], S2 = (int)p.s[2], D1 = (int)p.d[1], D2 = (int)p.d[2];
    const Idx O0 = (Idx)p.out[0], tiles_w = (Idx)g.tiles_w, tiles_h = (Idx)g.tiles_h;
    const int oh_l = (int)threadIdx.y * RH, ow_l = (int)threadIdx.x;
    for (Idx b = (Idx)blockIdx.x; b < (Idx)g.blocks; b += (Idx)gridDim.x) {
        const Idx tw = b % tiles_w, th = (b / tiles_w) % tiles_h;
        Idx plane = b / (tiles_w * tiles_h);
        const Idx o0 = plane % O0;
        plane /= O0;
        const Idx co = plane % (Idx)p.C_out, n = plane / (Idx)p.C_out;
        const Idx ci = co / (Idx)p.cout_g;
        const Idx oh0 = th * (Idx)g.tile_h, ow0 = tw * (Idx)g.tile_w;
        const Idx ih0 = oh0 * (Idx)p.s[1] - (Idx)p.p0[1], iw0 = ow0 * (Idx)p.s[2] - (Idx)p.p0[2];
        const T *xplane = x + n * (Idx)p.xs[0] + ci * (Idx)p.xs[1];
        float acc[RH];
        CONVND_UNROLL(16)
        for (int r = 0; r < RH; ++r)
            acc[r] = 0.0f;
        for (int k0 = 0; k0 < (int)p.k[0]; ++k0) {
            Idx i0;
            if (!conv_forward_input<Idx>(o0, k0, p.s[0], p.d[0], p.p0[0], p.in[0], i0))
                continue;    /* uniform across the block */
            __syncthreads(); /* the previous slab is no longer read */
            for (int i = tid; i < in_n; i += nthreads) {
                const Idx ih = ih0 + i / in_w, iw = iw0 + i % in_w;
                tile[i] = ih >= 0 && ih < (Idx)p.in[1] && iw >= 0 && iw < (Idx)p.in[2]
                              ? conv_load(xplane, conv_spatial_offset<Idx>(p.xs, i0, ih, iw))
                              : 0.0f;
            }
            for (int i = tid; i < taps; i += nthreads)
                wk[i] = conv_load(
                    w, conv_offset<Idx>(p.ws, co, (Idx)0, (Idx)k0, (Idx)(i / K2), (Idx)(i % K2)));
            __syncthreads();
            for (int k1 = 0; k1 < K1; ++k1) {
                const float *trow = tile + (oh_l * S1 + k1 * D1) * in_w + ow_l * S2;
                for (int k2 = 0; k2 < K2; ++k2) {
                    const float wv = wk[k1 * K2 + k2];
                    CONVND_UNROLL(8)
                    for (int r = 0; r < RH; ++r)
                        acc[r] = fmaf(trow[r * S1 * in_w + k2 * D2], wv, acc[r]);
                }
            }
        }
        const Idx ow = ow0 + ow_l;
        if (ow >= (Idx)p.out[2]) continue;
        CONVND_UNROLL(16)
        for (int r = 0; r < RH; ++r) {
            const Idx oh = oh0 + oh_l + r;
            if (oh >= (Idx)p.out[1]) continue; /* not break: the loop must unroll */
            conv_finish<T, Idx>(p, acc[r], bias, z, y, co,
                                conv_offset<Idx>(p.ys, n, co, o0, oh, ow));
        }
    }
}

template <typename T, typename Idx, int RH>
static convnd_status dw_tile_launch_typed(const convnd_launch_args *a,
                                          const convnd_dw_tile_geometry &geo) {
    const convnd_conv_params &p = a->params;
    dw_tile_args g;
    g.tile_h = geo.tile_h;
    g.tile_w = geo.tile_w;
    g.in_h = geo.in_h;
    g.in_w = geo.in_w;
    g.tiles_h = geo.tiles_h;
    g.tiles_w = geo.tiles_w;
    g.blocks = p.N * p.C_out * p.out[0] * geo.tiles_h * geo.tiles_w;
    g.w_smem_offset = (geo.in_h * geo.in_w + 3) / 4 * 4;
    int64_t blocks = g.blocks > 65535 * 16 ? 65535 * 16 : g.blocks; /* the loop strides on */
    auto kernel = &depthwise_tile_kernel<T, Idx, RH>;
    return convnd_launch(kernel, dim3((unsigned)blocks), dim3((unsigned)geo.bx, (unsigned)geo.by),
                         geo.smem, a->stream, p, (const T *)a->x, (const T *)a->w,
                         (const T *)a->bias, (const T *)a->z, (T *)a->y, g);
}

template <typename T, int RH>
static convnd_status dw_tile_launch_dtype(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    convnd_dw_tile_geometry geo;
    if (!convnd_dw_tile_geometry_for(&p, RH, &geo))
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_tile: the tile does not fit");
    const int64_t blocks = p.N * p.C_out * p.out[0] * geo.tiles_h * geo.tiles_w;
    const bool wide = conv_needs_index64(p) || blocks >= ((int64_t)1 << 30);
    if (geo.rh == 1)
        return wide ? dw_tile_launch_typed<T, int64_t, 1>(a, geo)
                    : dw_tile_launch_typed<T, int32_t, 1>(a, geo);
    return wide ? dw_tile_launch_typed<T, int64_t, RH>(a, geo)
                : dw_tile_launch_typed<T, int32_t, RH>(a, geo);
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(depthwise_tile) {
    using namespace CONVND_NS;
    if (a->config < 0 || a->config >= CONVND_DW_CONFIG_COUNT ||
        convnd_dw_config_at(a->config).path != CONVND_DW_PATH_TILE ||
        convnd_dw_config_at(a->config).param != 4)
        return convnd_error(CONVND_ERR_INTERNAL, "depthwise_tile: config %d has no tile kernel",
                            (int)a->config);
    if (a->params.y_numel == 0) return CONVND_OK;
    return convnd_launch_by_dtype(a->params.dtype, "depthwise_tile", [&](auto t) {
        return dw_tile_launch_dtype<typename decltype(t)::type, 4>(a);
    });
}
