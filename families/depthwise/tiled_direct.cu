/* Tiled direct convolution, forward, 1/2/3-D, any groups: the tiled_direct schedule, for small
 * C_in (stems: C_in = 3 starves a GEMM's reduction tile) and shapes the GEMM view serves poorly.
 *
 * A block computes a tile_h x tile_w output tile for co_block output channels of one group and
 * one (n, o0). Per kernel slab k0 and stage of input channels it copies the input tile + halo
 * of those channels into shared memory as f32 (zeros in the padding; channel-innermost order
 * when x is channels-last, W-innermost otherwise, so the copy is coalesced either way) and the
 * matching weights as [ci][k1][k2][channel]. A thread then owns one output position and CO_T
 * channels: per tap and input channel one shared load of the input and CO_T/4 128-bit loads of
 * weights (the same address across the block's positions) feed CO_T FMAs. Geometry:
 * families/depthwise/tiled_configs.h. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "depthwise_common.cuh"
#include "tiled_configs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

struct tiled_args {
    int64_t in_h, in_w, tiles_h, tiles_w, co_block, co_chunks, x_floats, blocks;
    int32_t nct, tile_h, tile_w, ci_stage, x_cl;
};

/* Stages input channels [cs, cs + nci) of the group's tile (slab i0) and their weights. */
template <typename T, typename Idx>
__device__ __forceinline__ void tiled_stage(const convnd_conv_params &p, const T *__restrict__ w,
                                            float *xs, float *ws, const tiled_args &g,
                                            const T *xgroup, Idx i0, Idx ih0, Idx iw0, int k0,
                                            Idx coc0, int co_n, int cs, int nci) {
    const int tid = (int)threadIdx.x, nthreads = (int)blockDim.x;
    const int in_w = (int)g.in_w, in_n = (int)(g.in_h * g.in_w);
    const int xn = nci * in_n;
    for (int i = tid; i < xn; i += nthreads) {
        /* x channels-last: consecutive threads take consecutive channels of one position */
        const int ci = g.x_cl ? i % nci : i / in_n;
        const int pos = g.x_cl ? i / nci : i % in_n;
        const Idx ih = ih0 + pos / in_w, iw = iw0 + pos % in_w;
        xs[ci * in_n + pos] =
            ih >= 0 && ih < (Idx)p.in[1] && iw >= 0 && iw < (Idx)p.in[2]
                ? conv_load(xgroup, (Idx)(cs + ci) * (Idx)p.xs[1] +
                                        conv_spatial_offset<Idx>(p.xs, i0, ih, iw))
                : 0.0f;
    }
    const int K2 = (int)p.k[2], taps = (int)(p.k[1] * p.k[2]), cb = (int)g.co_block;
    const int wn = nci * taps * cb;
    for (int i = tid; i < wn; i += nthreads) {
        const int c = i % cb, tap = (i / cb) % taps, ci = i / (cb * taps);
        ws[i] = c < co_n ? conv_load(w, conv_offset<Idx>(p.ws, coc0 + c, (Idx)(cs + ci), (Idx)k0,
                                                         (Idx)(tap / K2), (Idx)(tap % K2)))
                         : 0.0f;
    }
}

/* 1-D block of nct * tile_h * tile_w threads; thread (tc, position) with tc fastest. The block
 * loop is block-uniform so that every thread reaches the barriers. */
template <typename T, typename Idx, int CO_T>
__global__ void __launch_bounds__(CONVND_DW_THREADS, 1)
    tiled_direct_kernel(const convnd_conv_params p, const T *__restrict__ x,
                        const T *__restrict__ w, const T *__restrict__ bias, const T *z, T *y,
                        const tiled_args g) {
    CONVND_DYNAMIC_SHARED(float, smem);
    float *const xs = smem;
    float *const ws = smem + g.x_floats;
    const int tc = (int)threadIdx.x % g.nct, pos = (int)threadIdx.x / g.nct;
    const int oh_l = pos / g.tile_w, ow_l = pos % g.tile_w;
    const int in_w = (int)g.in_w, in_n = (int)(g.in_h * g.in_w);
    const int K1 = (int)p.k[1], K2 = (int)p.k[2], taps = K1 * K2, cb = (int)g.co_block;
    const int S1 = (int)p.s[1], S2 = (int)p.s[2], D1 = (int)p.d[1], D2 = (int)p.d[2];
    const int cin_g = (int)p.cin_g;
    const Idx tiles_w = (Idx)g.tiles_w, tiles_h = (Idx)g.tiles_h, O0 = (Idx)p.out[0];
    const Idx chunks = (Idx)g.co_chunks, G = (Idx)p.groups, cout_g = (Idx)p.cout_g;
    for (Idx b = (Idx)blockIdx.x; b < (Idx)g.blocks; b += (Idx)gridDim.x) {
        Idx rest = b;
        const Idx tw = rest % tiles_w;
        rest /= tiles_w;
        const Idx th = rest % tiles_h;
        rest /= tiles_h;
        const Idx o0 = rest % O0;
        rest /= O0;
        const Idx chunk = rest % chunks;
        rest /= chunks;
        const Idx grp = rest % G, n = rest / G;
        const Idx first = chunk * (Idx)cb; /* first channel of the block within the group */
        const Idx coc0 = grp * cout_g + first;
        const int co_n = (int)(cout_g - first < (Idx)cb ? cout_g - first : (Idx)cb);
        const Idx oh0 = th * (Idx)g.tile_h, ow0 = tw * (Idx)g.tile_w;
        const Idx oh = oh0 + oh_l, ow = ow0 + ow_l;
        const Idx ih0 = oh0 * (Idx)p.s[1] - (Idx)p.p0[1], iw0 = ow0 * (Idx)p.s[2] - (Idx)p.p0[2];
        const T *xgroup = x + n * (Idx)p.xs[0] + grp * (Idx)cin_g * (Idx)p.xs[1];
        float acc[CO_T];
        CONVND_UNROLL(16)
        for (int j = 0; j < CO_T; ++j)
            acc[j] = 0.0f;
        for (int k0 = 0; k0 < (int)p.k[0]; ++k0) {
            Idx i0;
            if (!conv_forward_input<Idx>(o0, k0, p.s[0], p.d[0], p.p0[0], p.in[0], i0))
                continue; /* uniform across the block */
            for (int cs = 0; cs < cin_g; cs += g.ci_stage) {
                const int nci = cin_g - cs < g.ci_stage ? cin_g - cs : g.ci_stage;
                __syncthreads(); /* the previous stage is no longer read */
                tiled_stage<T, Idx>(p, w, xs, ws, g, xgroup, i0, ih0, iw0, k0, coc0, co_n, cs, nci);
                __syncthreads();
                for (int ci = 0; ci < nci; ++ci) {
                    const float *xrow = xs + ci * in_n + oh_l * S1 * in_w + ow_l * S2;
                    const float *wci = ws + ci * taps * cb + tc * CO_T;
                    for (int k1 = 0; k1 < K1; ++k1)
                        for (int k2 = 0; k2 < K2; ++k2) {
                            const float xv = xrow[k1 * D1 * in_w + k2 * D2];
                            float wv[CO_T];
                            dw_lds<CO_T>(wci + (k1 * K2 + k2) * cb, wv);
                            CONVND_UNROLL(16)
                            for (int j = 0; j < CO_T; ++j)
                                acc[j] = fmaf(xv, wv[j], acc[j]);
                        }
                }
            }
        }
        if (oh >= (Idx)p.out[1] || ow >= (Idx)p.out[2]) continue;
        const Idx y_off = conv_offset<Idx>(p.ys, n, coc0, o0, oh, ow);
        CONVND_UNROLL(16)
        for (int j = 0; j < CO_T; ++j) {
            const int c = tc * CO_T + j;
            if (c < co_n)
                conv_finish<T, Idx>(p, acc[j], bias, z, y, coc0 + c, y_off + (Idx)c * (Idx)p.ys[1]);
        }
    }
}

template <typename T, typename Idx, int CO_T>
static convnd_status tiled_launch_typed(const convnd_launch_args *a,
                                        const convnd_tiled_geometry &geo) {
    const convnd_conv_params &p = a->params;
    tiled_args g;
    g.in_h = geo.in_h;
    g.in_w = geo.in_w;
    g.tiles_h = geo.tiles_h;
    g.tiles_w = geo.tiles_w;
    g.co_block = geo.co_block;
    g.co_chunks = geo.co_chunks;
    g.x_floats = geo.x_floats;
    g.blocks = p.N * p.groups * geo.co_chunks * p.out[0] * geo.tiles_h * geo.tiles_w;
    g.nct = geo.nct;
    g.tile_h = geo.tile_h;
    g.tile_w = geo.tile_w;
    g.ci_stage = geo.ci_stage;
    g.x_cl = p.xs[1] == 1;
    const int64_t blocks = g.blocks > 65535 * 16 ? 65535 * 16 : g.blocks; /* the loop strides */
    const unsigned threads = (unsigned)(geo.nct * geo.tile_h * geo.tile_w);
    auto kernel = &tiled_direct_kernel<T, Idx, CO_T>;
    return convnd_launch(kernel, dim3((unsigned)blocks), dim3(threads), geo.smem, a->stream, p,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y, g);
}

template <typename T, int CO_T>
static convnd_status tiled_launch_dtype(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    convnd_tiled_geometry geo;
    if (!convnd_tiled_geometry_for(&p, a->config, &geo))
        return convnd_error(CONVND_ERR_INTERNAL, "tiled_direct: the tile does not fit");
    const int64_t blocks = p.N * p.groups * geo.co_chunks * p.out[0] * geo.tiles_h * geo.tiles_w;
    const bool wide = conv_needs_index64(p) || blocks >= ((int64_t)1 << 30);
    return wide ? tiled_launch_typed<T, int64_t, CO_T>(a, geo)
                : tiled_launch_typed<T, int32_t, CO_T>(a, geo);
}

template <int CO_T> static convnd_status tiled_launch_config(const convnd_launch_args *a) {
    return convnd_launch_by_dtype(a->params.dtype, "tiled_direct", [&](auto t) {
        return tiled_launch_dtype<typename decltype(t)::type, CO_T>(a);
    });
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(tiled_direct) {
    using namespace CONVND_NS;
    if (a->config < 0 || a->config >= CONVND_TILED_CONFIG_COUNT)
        return convnd_error(CONVND_ERR_INTERNAL, "tiled_direct: config %d out of range [0, %d)",
                            (int)a->config, (int)CONVND_TILED_CONFIG_COUNT);
    if (a->params.y_numel == 0) return CONVND_OK;
#define CONVND_TILED_CASE(name, CO_T)                                                              \
    if (convnd_tiled_co_per_thread(a->config) == CO_T) return tiled_launch_config<CO_T>(a);
    CONVND_TILED_CONFIGS(CONVND_TILED_CASE)
#undef CONVND_TILED_CASE
    return convnd_error(CONVND_ERR_INTERNAL, "tiled_direct: no kernel for config %d",
                        (int)a->config);
}
