/* Grouped convolution with few channels per group (ResNeXt's g = 32 with 4 to 32 channels per
 * group), forward, 1/2/3-D: the grouped schedule.
 *
 * The GEMM view runs one GEMM per group whose column tile is mostly empty when C_out/groups is
 * small. Here a thread owns a slice of CO output channels of one group and a run of R outputs
 * along W; a block holds up to 32 slices side by side (several groups when they are small) by
 * ty runs, so every lane has work. The weights of the block's slices are staged in shared
 * memory by kernel rows as [tap][ci][slice][CO] floats: per input channel a thread reads its
 * CO weights with 128-bit loads and does R x CO FMAs. Channels-last x whose group channel
 * count is a whole number of 16-byte vectors loads 16 bytes of input channels at once; other
 * layouts load element by element through the same loops. */
#include "portability.cuh"
#include "launch_dtype.cuh"
#include "conv_index.cuh"
#include "depthwise_common.cuh"
#include "grouped_configs.h"
#include "launch_abi.h"
#include "error.h"

namespace CONVND_NS {

/* Group slices as units: unit u is slice u % slices of group u / slices. */
template <typename Idx> struct grouped_units {
    Idx units, slices, cout_g;
    int co_per_slice;
    __device__ __forceinline__ Idx co(Idx unit, int lane) const {
        if (unit >= units) return (Idx)-1;
        const Idx in_group = (unit % slices) * (Idx)co_per_slice + (Idx)lane;
        return in_group < cout_g ? (unit / slices) * cout_g + in_group : (Idx)-1;
    }
};

/* Input channels per inner step: a 16-byte vector (VECIO) or one. */
template <typename T, bool VECIO> struct grouped_step {
    static constexpr int value = VECIO ? dw_vec_width<T>::value : 1;
};

/* Accumulates one kernel row (all K2 taps, every input channel of the group) into R x CO
 * outputs. xrow: the row's input at the group's first channel; wrow: this slice's staged
 * weights of the row, taps tap_stride floats apart, input channels ci_stride apart. */
template <typename T, typename Idx, int R, int CO, bool VECIO>
__device__ __forceinline__ void grouped_row(const convnd_conv_params &p, const T *xrow,
                                            const float *wrow, int tap_stride, int ci_stride,
                                            Idx ow0, float (&acc)[R][CO]) {
    constexpr int CV = grouped_step<T, VECIO>::value;
    const int K2 = (int)p.k[2], cin_g = (int)p.cin_g;
    const Idx S = (Idx)p.s[2], D = (Idx)p.d[2], P = (Idx)p.p0[2], I2 = (Idx)p.in[2];
    const Idx O2 = (Idx)p.out[2];
    const Idx xs_c = (Idx)p.xs[1], xs_w = (Idx)p.xs[4];
    for (int k2 = 0; k2 < K2; ++k2) {
        Idx xoff[R]; /* offset of each output's input, -1 in the padding */
        CONVND_UNROLL(8)
        for (int r = 0; r < R; ++r) {
            const Idx i2 = conv_clamp_out(ow0 + r, O2) * S - P + (Idx)k2 * D;
            xoff[r] = i2 >= 0 && i2 < I2 ? i2 * xs_w : (Idx)-1;
        }
        const float *wtap = wrow + k2 * tap_stride;
        for (int ci = 0; ci < cin_g; ci += CV) {
            float xv[R][CV];
            CONVND_UNROLL(8)
            for (int r = 0; r < R; ++r) {
                if (xoff[r] < 0) {
                    CONVND_UNROLL(16)
                    for (int j = 0; j < CV; ++j)
                        xv[r][j] = 0.0f;
                } else if constexpr (VECIO) {
                    dw_load16<T, CV>(xrow + xoff[r] + ci, xv[r]);
                } else {
                    xv[r][0] = conv_load(xrow, xoff[r] + (Idx)ci * xs_c);
                }
            }
            CONVND_UNROLL(16)
            for (int j = 0; j < CV; ++j) {
                float wv[CO];
                dw_lds<CO>(wtap + (ci + j) * ci_stride, wv);
                CONVND_UNROLL(8)
                for (int r = 0; r < R; ++r) {
                    CONVND_UNROLL(16)
                    for (int c = 0; c < CO; ++c)
                        acc[r][c] = fmaf(xv[r][j], wv[c], acc[r][c]);
                }
            }
        }
    }
}

/* One thread: CO output channels of a group (a slice, the unit) x R outputs along W, on
 * dw_staged_rows's item loop. */
template <typename T, typename Idx, int R, int CO, bool VECIO>
__global__ void __launch_bounds__(CONVND_DW_THREADS, 1)
    grouped_kernel(const convnd_conv_params p, const T *__restrict__ x, const T *__restrict__ w,
                   const T *__restrict__ bias, const T *z, T *y, const dw_rows_args g,
                   const int64_t slices_per_group) {
    CONVND_DYNAMIC_SHARED(float, wsm);
    const int tx = (int)threadIdx.x, txn = (int)blockDim.x;
    const int cin_g = (int)p.cin_g, K2 = (int)p.k[2];
    const Idx slices = (Idx)slices_per_group, cout_g = (Idx)p.cout_g;
    const Idx units_total = (Idx)p.groups * slices;
    const grouped_units<Idx> units{units_total, slices, cout_g, CO};
    const Idx unit0 = (Idx)blockIdx.x * (Idx)txn, unit = unit0 + (Idx)tx;
    const Idx group = unit / slices, first = (unit % slices) * CO; /* first channel in group */
    const int lanes =
        unit < units_total ? (int)(cout_g - first < CO ? cout_g - first : (Idx)CO) : 0;
    const Idx co0 = group * cout_g + first;
    /* staged layout [row][k2][ci][slice][CO] */
    const int ci_stride = txn * CO, tap_stride = (cin_g > 0 ? cin_g : 1) * ci_stride;
    const Idx x_group = group * (Idx)cin_g * (Idx)p.xs[1];
    dw_staged_rows<T, Idx, R, CO>(
        p, w, wsm, g, units, unit0, CO, cin_g, lanes > 0,
        [&](int rl, Idx x_off, const dw_item<Idx> &at, float(&acc)[R][CO]) {
            grouped_row<T, Idx, R, CO, VECIO>(p, x + x_off + x_group,
                                              wsm + rl * K2 * tap_stride + tx * CO, tap_stride,
                                              ci_stride, at.ow0, acc);
        },
        [&](const dw_item<Idx> &at, float(&acc)[R][CO]) {
            CONVND_UNROLL(16)
            for (int r = 0; r < R; ++r) {
                const Idx ow = at.ow0 + r;
                if (ow >= (Idx)p.out[2]) continue; /* not break: the loop must unroll */
                const Idx y_off = conv_offset<Idx>(p.ys, at.n, co0, at.o0, at.o1, ow);
                CONVND_UNROLL(16)
                for (int c = 0; c < CO; ++c)
                    if (c < lanes)
                        conv_finish<T, Idx>(p, acc[r][c], bias, z, y, co0 + c,
                                            y_off + (Idx)c * (Idx)p.ys[1]);
            }
        });
}

/* 16-byte input vectors apply: channels innermost in x, the group's channels whole vectors,
 * every other x stride a whole number of vectors, x 16-byte aligned. */
static bool grouped_vector_x(const convnd_launch_args *a, int vec) {
    const convnd_conv_params &p = a->params;
    if (p.xs[1] != 1 || p.cin_g % vec != 0) return false;
    for (int t = 0; t < 5; ++t)
        if (t != 1 && p.xs[t] % vec != 0) return false;
    return (uintptr_t)a->x % 16 == 0;
}

template <typename T, typename Idx, int R, int CO, bool VECIO>
static convnd_status grouped_launch_typed(const convnd_launch_args *a,
                                          const convnd_unit_geometry &geo, int64_t slices) {
    const convnd_conv_params &p = a->params;
    unsigned groups;
    const dw_rows_args g = dw_rows_args_for<R>(p, geo, &groups);
    auto kernel = &grouped_kernel<T, Idx, R, CO, VECIO>;
    return convnd_launch(kernel, dim3((unsigned)geo.chunks, groups),
                         dim3((unsigned)geo.tx, (unsigned)geo.ty), geo.smem, a->stream, p,
                         (const T *)a->x, (const T *)a->w, (const T *)a->bias, (const T *)a->z,
                         (T *)a->y, g, slices);
}

template <typename T, int R, int CO>
static convnd_status grouped_launch_dtype(const convnd_launch_args *a) {
    const convnd_conv_params &p = a->params;
    int64_t slices;
    convnd_unit_geometry geo;
    if (!convnd_grouped_geometry_for(&p, convnd_grouped_config{R, CO}, &slices, &geo))
        return convnd_error(CONVND_ERR_INTERNAL, "grouped: the weights do not fit");
    if (geo.chunks > 0x7fffffff)
        return convnd_error(CONVND_ERR_INTERNAL, "grouped: %lld slice blocks",
                            (long long)geo.chunks);
    const bool vec = grouped_vector_x(a, dw_vec_width<T>::value), wide = conv_needs_index64(p);
    if (vec)
        return wide ? grouped_launch_typed<T, int64_t, R, CO, true>(a, geo, slices)
                    : grouped_launch_typed<T, int32_t, R, CO, true>(a, geo, slices);
    return wide ? grouped_launch_typed<T, int64_t, R, CO, false>(a, geo, slices)
                : grouped_launch_typed<T, int32_t, R, CO, false>(a, geo, slices);
}

template <int R, int CO> static convnd_status grouped_launch_config(const convnd_launch_args *a) {
    return convnd_launch_by_dtype(a->params.dtype, "grouped", [&](auto t) {
        return grouped_launch_dtype<typename decltype(t)::type, R, CO>(a);
    });
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(grouped) {
    using namespace CONVND_NS;
    if (a->config < 0 || a->config >= CONVND_GROUPED_CONFIG_COUNT)
        return convnd_error(CONVND_ERR_INTERNAL, "grouped: config %d out of range [0, %d)",
                            (int)a->config, (int)CONVND_GROUPED_CONFIG_COUNT);
    if (a->params.y_numel == 0) return CONVND_OK;
        /* one instance per configuration of grouped_configs.h */
#define CONVND_GROUPED_CASE(name, R, CO)                                                           \
    if (c.r == R && c.co == CO) return grouped_launch_config<R, CO>(a);
    const convnd_grouped_config c = convnd_grouped_config_at(a->config);
    CONVND_GROUPED_CONFIGS(CONVND_GROUPED_CASE)
#undef CONVND_GROUPED_CASE
    return convnd_error(CONVND_ERR_INTERNAL, "grouped: no kernel for config %d", (int)a->config);
}
