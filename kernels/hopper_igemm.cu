/* The Hopper tier: a warp-specialized, persistent implicit GEMM for forward convolution with
 * channels-last x, w and y (the schedule's domain: schedules/hopper_igemm.c).
 *
 *   GEMM: D[m][n] = sum over (tap, c) of A[m][(tap, c)] * B[n][(tap, c)], m = output pixel
 *   (n_img, o0, o1, o2), n = output channel. K runs tap-major in blocks of BK channels (128 bytes).
 *
 * Block: 384 threads. Warpgroup 0 is the producer: one elected thread issues, per K block, a TMA
 * im2col load of the 128 x BK activation tile (the tap as the im2col offset; padding and tails
 * zero-filled by the bounding box and the tensor bounds) and a TMA tiled load of the BN x BK
 * weight tile, into a ring of STAGES stages guarded by full / empty mbarriers. Warpgroups 1-2
 * are consumers, 64 rows each: wgmma.mma_async m64nBNk16 (k8 for tf32) from the 128B-swizzled
 * stages, one commit group per K block, wait_group 1 to release the previous stage. setmaxnreg
 * moves registers from the producer to the consumers. The epilogue (alpha, bias, beta * z,
 * activation) runs on the accumulators, writes 64 x (128-byte) chunks into a swizzled staging
 * tile (stmatrix.x4 for 16-bit outputs: 16 bytes per lane and instruction), fence.proxy.async,
 * and one thread stores each chunk with TMA. The grid is persistent:
 * blocks walk the tiles in a raster of 8-row-block groups (L2 reuse of the weight columns). */
#include "portability.cuh"
#include "hopper_primitives.cuh"
#include "stmatrix.cuh"
#include "conv_index.cuh"
#include "hopper_igemm.h"
#include "launchers.h"
#include "error.h"
#include "planted_bugs.h"

#if defined(CONVND_GPU) && CONVND_GPU
#include <cuda.h>
#endif

/* Full unrolling keeps the accumulators in registers on the GPU; the emulator gains nothing from
 * it but compile time. */
#if defined(CONVND_GPU) && CONVND_GPU
#define HOPPER_UNROLL(n) CONVND_UNROLL(n)
#else
#define HOPPER_UNROLL(n)
#endif

namespace CONVND_NS {

/* What the kernel needs besides the tensor maps. */
struct hopper_geom {
    int64_t M;                /* output pixels: N * prod(O) */
    int32_t tiles_m, tiles_n; /* BM x BN tiles */
    int32_t cblocks, taps;    /* K blocks per tap, taps = prod(k) */
    int32_t k[3], dil[3], s[3], p0[3], out[3];
};

template <typename T> struct hopper_mma;
template <> struct hopper_mma<convnd_half> { typedef convnd_wgmma_f16 type; };
template <> struct hopper_mma<convnd_bf16> { typedef convnd_wgmma_bf16 type; };
template <> struct hopper_mma<float> { typedef convnd_wgmma_tf32 type; };

/* Tile t of the persistent walk -> (row block, column block): groups of 8 row blocks, column
 * blocks inner, so consecutive blocks share weight columns and x rows in L2. */
__device__ __forceinline__ void hopper_raster(int32_t t, int32_t tiles_m, int32_t tiles_n,
                                              int32_t &mb, int32_t &nb) {
    const int32_t group = t / (8 * tiles_n), first = group * 8;
    const int32_t rows = min(8, tiles_m - first), r = t % (8 * tiles_n);
    mb = first + r % rows;
    nb = r / rows;
}

template <typename T, int BN, int STAGES, int RANK>
__global__ void __launch_bounds__(CONVND_HOPPER_THREADS, 1)
    hopper_igemm_kernel(const convnd_conv_params p, const CONVND_GRID_CONSTANT convnd_tmap xmap,
                        const CONVND_GRID_CONSTANT convnd_tmap wmap,
                        const CONVND_GRID_CONSTANT convnd_tmap ymap, const T *bias, const T *z,
                        const hopper_geom g) {
    constexpr int BM = CONVND_HOPPER_BM, ROW = CONVND_HOPPER_ROW_BYTES;
    constexpr int BK = ROW / (int)sizeof(T);   /* channels per K block */
    constexpr int KSTEP = 32 / (int)sizeof(T); /* wgmma K: 16 (16-bit), 8 (tf32) */
    constexpr uint32_t A_BYTES = BM * ROW, B_BYTES = BN * ROW;
    typedef typename hopper_mma<T>::type W;

    CONVND_DYNAMIC_SHARED(unsigned char, smem_raw);
    /* 1024-byte alignment: the 128B swizzle pattern repeats every 8 rows of 128 bytes */
    const uint32_t raw = convnd_smem_addr(smem_raw);
    unsigned char *smem = smem_raw + ((1024 - raw % 1024) % 1024);
    unsigned char *a_ring = smem;
    unsigned char *b_ring = a_ring + STAGES * A_BYTES;
    unsigned char *staging = b_ring + STAGES * B_BYTES;
    uint64_t *full = reinterpret_cast<uint64_t *>(staging + 2 * 64 * ROW);
    uint64_t *empty = full + STAGES;

    const unsigned t = threadIdx.x, wg = t / 128, warp = t / 32 % 4, lane = t % 32;
    if (t == 0) {
        for (int s = 0; s < STAGES; ++s) {
            convnd_mbarrier_init(&full[s], 1);    /* the producer's arrive.expect_tx */
            convnd_mbarrier_init(&empty[s], 256); /* every consumer thread */
        }
        convnd_fence_mbarrier_init();
    }
    __syncthreads();

    const int32_t tiles = g.tiles_m * g.tiles_n, kiters = g.cblocks * g.taps;
    if (wg == 0) { /* producer */
        convnd_setmaxnreg_dec<40>();
        if (warp != 0 || !convnd_elect_one_sync()) return;
        uint32_t it = 0;
        for (int32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int32_t mb, nb;
            hopper_raster(tile, g.tiles_m, g.tiles_n, mb, nb);
            /* the tile's first pixel: its window's corner is the im2col start */
            int64_t m = (int64_t)mb * BM;
            int32_t base[3];
            for (int d = 2; d >= 0; --d) {
                const int32_t o = (int32_t)(m % g.out[d]);
                m /= g.out[d];
                base[d] = o * g.s[d] - g.p0[d];
            }
            const int32_t img = (int32_t)m;
            for (int32_t ki = 0; ki < kiters; ++ki, ++it) {
                const uint32_t s = it % STAGES, phase = (it / STAGES) & 1u;
                const int32_t tap = ki / g.cblocks, cb = ki % g.cblocks;
                const int32_t kk[3] = {tap / (g.k[1] * g.k[2]), tap / g.k[2] % g.k[1],
                                       tap % g.k[2]};
                convnd_mbarrier_wait_parity(&empty[s], phase ^ 1u);
                convnd_mbarrier_arrive_expect_tx(&full[s], A_BYTES + B_BYTES);
                /* spatial dims innermost first: W (2), H (1), D (0) */
                int32_t c[RANK];
                uint16_t off[RANK - 2];
                c[0] = cb * BK;
                for (int i = 0; i < RANK - 2; ++i) {
                    c[1 + i] = base[2 - i];
                    off[i] = (uint16_t)(kk[2 - i] * g.dil[2 - i]);
                }
                c[RANK - 1] = img;
                convnd_tma_load_im2col<RANK>(a_ring + s * A_BYTES, xmap, &full[s], c, off);
                const int32_t wc[3] = {cb * BK, tap, nb * BN};
                convnd_tma_load<3>(b_ring + s * B_BYTES, wmap, &full[s], wc);
            }
        }
        return;
    }

    /* consumers */
    convnd_setmaxnreg_inc<232>();
    const unsigned cw = wg - 1, ct = t - 128 * wg; /* consumer index, thread in warpgroup */
    unsigned char *stage_out = staging + cw * 64 * ROW;
    const uint32_t a_base = convnd_smem_addr(a_ring) + cw * 64 * ROW;
    const uint32_t b_base = convnd_smem_addr(b_ring);
    uint32_t it = 0;
    float acc[BN / 2];
    for (int32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int32_t mb, nb;
        hopper_raster(tile, g.tiles_m, g.tiles_n, mb, nb);
        HOPPER_UNROLL(128)
        for (int i = 0; i < BN / 2; ++i)
            acc[i] = 0.0f;
        uint32_t prev = 0;
        for (int32_t ki = 0; ki < kiters; ++ki, ++it) {
            const uint32_t s = it % STAGES, phase = (it / STAGES) & 1u;
            if (CONVND_PLANTED_BUG != CONVND_PLANT_HOPPER_NO_FULL_WAIT)
                convnd_mbarrier_wait_parity(&full[s], phase);
            convnd_wgmma_fence_operands(acc);
            convnd_wgmma_fence();
            const uint64_t da = convnd_wgmma_desc(a_base + s * A_BYTES, 16, 1024, 1);
            const uint64_t db = convnd_wgmma_desc(b_base + s * B_BYTES, 16, 1024, 1);
            HOPPER_UNROLL(4)
            for (int k = 0; k < BK / KSTEP; ++k) /* + 32 bytes of K per step */
                convnd_wgmma<W, BN>(acc, da + 2 * k, db + 2 * k, ki > 0 || k > 0);
            convnd_wgmma_commit_group();
            convnd_wgmma_fence_operands(acc);
            convnd_wgmma_wait_group<1>(); /* the previous K block's MMAs are done */
            if (CONVND_PLANTED_BUG == CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT)
                convnd_mbarrier_arrive(&empty[s]);
            else if (ki > 0)
                convnd_mbarrier_arrive(&empty[prev]);
            prev = s;
        }
        convnd_wgmma_wait_group<0>();
        convnd_wgmma_fence_operands(acc);
        if (CONVND_PLANTED_BUG != CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT)
            convnd_mbarrier_arrive(&empty[prev]);

        /* epilogue: 64 rows x BN, in chunks of 128 bytes of columns. acc[i] is row
         * 16*warp + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2 of the consumer's
         * 64 x BN tile (wgmma's D fragment): per 8-column block, two 8x8 matrices in stmatrix's
         * layout. */
        constexpr int CW = ROW / (int)sizeof(T);
        const int64_t row0 = (int64_t)mb * BM + cw * 64;
        const int32_t col0 = nb * BN;
        auto value = [&](int i) {
            const int64_t m = row0 + 16 * (int)warp + (int)lane / 4 + 8 * ((i / 2) % 2);
            const int64_t n = col0 + 8 * (i / 4) + 2 * ((int)lane % 4) + i % 2;
            float v = acc[i];
            if (m < g.M && n < p.C_out) {
                const float bias_v = p.has_bias ? conv_load(bias, n) : 0.0f;
                const float z_v = conv_reads_z(p) ? conv_load(z, m * p.C_out + n) : 0.0f;
                v = conv_epilogue_values(p, v, bias_v, z_v);
            }
            return v;
        };
        /* staging byte of (row, column in the chunk): 128B swizzle of 16-byte units */
        auto staged = [](int rl, int cc) {
            const uint32_t byte = (uint32_t)(rl * ROW + cc * (int)sizeof(T));
            return byte ^ (((byte >> 7) & 7u) << 4);
        };
        HOPPER_UNROLL(8)
        for (int ch = 0; ch < BN / CW; ++ch) {
            if (col0 + ch * CW >= p.C_out) break;
            if constexpr (sizeof(T) == 2) {
                /* stmatrix.x4 per two 8-column blocks j, j+1: matrix q is block j + q/2, rows
                 * + 8*(q%2); lane 8q + r addresses its row r (16 contiguous bytes: the swizzle
                 * moves whole 16-byte units) */
                const int q = (int)lane / 8, rr = (int)lane % 8;
                HOPPER_UNROLL(4)
                for (int jj = 0; jj < CW / 8; jj += 2) {
                    const int j = ch * (CW / 8) + jj;
                    uint32_t r[4];
                    HOPPER_UNROLL(4)
                    for (int mq = 0; mq < 4; ++mq) {
                        const int i = 4 * (j + mq / 2) + 2 * (mq % 2);
                        r[mq] = convnd_pack2(convnd_from_f32<T>(value(i)),
                                             convnd_from_f32<T>(value(i + 1)));
                    }
                    convnd_stmatrix<4, false>(
                        r, stage_out + staged(16 * (int)warp + rr + 8 * (q % 2), 8 * (jj + q / 2)));
                }
            } else { /* f32 (TF32 math): stmatrix moves 16-bit elements only */
                HOPPER_UNROLL(128)
                for (int i = 0; i < BN / 2; ++i) {
                    const int rl = 16 * (int)warp + (int)lane / 4 + 8 * ((i / 2) % 2);
                    const int cl = 8 * (i / 4) + 2 * ((int)lane % 4) + i % 2;
                    if (cl / CW != ch) continue;
                    *reinterpret_cast<T *>(stage_out + staged(rl, cl - ch * CW)) =
                        convnd_from_f32<T>(value(i));
                }
            }
            convnd_fence_proxy_async(); /* ordinary stores -> the TMA store's reads */
            convnd_named_barrier_sync(1 + cw, 128);
            if (ct == 0) {
                const int32_t yc[2] = {col0 + ch * CW, (int32_t)row0};
                convnd_tma_store<2>(ymap, stage_out, yc);
                convnd_bulk_commit_group();
                convnd_bulk_wait_group_read<0>(); /* staging is read: it may be overwritten */
            }
            convnd_named_barrier_sync(1 + cw, 128);
        }
    }
}

/* ---- host side ----------------------------------------------------------------------------- */

/* Tensor maps: the emulator's encoder, or the driver's through its entry point. */
static convnd_status hopper_encode(convnd_tmap *map, const convnd_tmap_desc *d, bool im2col) {
#if defined(CONVND_EMU) && CONVND_EMU
    return im2col ? convnd_emu_tmap_encode_im2col(map, d) : convnd_emu_tmap_encode_tiled(map, d);
#else
    const CUtensorMapDataType dt = d->dtype == CONVND_F16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : d->dtype == CONVND_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    cudaDriverEntryPointQueryResult q;
    void *fn = nullptr;
    const char *name = im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !fn)
        return convnd_error(CONVND_ERR_DEVICE, "hopper_igemm: driver entry point %s not found",
                            name);
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], es[5];
    for (uint32_t i = 0; i < d->rank; ++i) {
        dims[i] = d->dims[i];
        box[i] = d->box[i];
        es[i] = d->element_strides[i];
        if (i + 1 < d->rank) strides[i] = d->strides[i];
    }
    const CUtensorMapSwizzle sw = (CUtensorMapSwizzle)d->swizzle;
    CUresult r;
    if (im2col) {
        typedef CUresult (*enc_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const int *, const int *,
                                  cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);
        r = ((enc_t)fn)((CUtensorMap *)map, dt, d->rank, const_cast<void *>(d->address), dims,
                        strides, d->lower_corner, d->upper_corner, d->channels_per_pixel,
                        d->pixels_per_column, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    } else {
        typedef CUresult (*enc_t)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
        r = ((enc_t)fn)((CUtensorMap *)map, dt, d->rank, const_cast<void *>(d->address), dims,
                        strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    if (r != CUDA_SUCCESS)
        return convnd_error(CONVND_ERR_DEVICE, "hopper_igemm: %s failed with CUresult %d", name,
                            (int)r);
    return CONVND_OK;
#endif
}

/* Blocks of the persistent grid: the emulated device uses 2, so every block walks several tiles
 * and the ring's phases carry across tiles, as on a GPU with more tiles than SMs. */
static int32_t hopper_grid(int32_t tiles) {
#if defined(CONVND_EMU) && CONVND_EMU
    const int32_t sms = 2;
#else
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) == cudaSuccess)
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
#endif
    return tiles < sms ? tiles : sms;
}

template <typename T, int BN, int STAGES, int RANK>
static convnd_status hopper_run(const convnd_launch_args *a, int32_t config) {
    const convnd_conv_params &p = a->params;
    const convnd_dtype dt = (convnd_dtype)p.dtype;
    const uint64_t es = sizeof(T);
    constexpr int BK = CONVND_HOPPER_ROW_BYTES / (int)sizeof(T);
    hopper_geom g;
    g.M = p.N * p.out[0] * p.out[1] * p.out[2];
    g.tiles_m = (int32_t)((g.M + CONVND_HOPPER_BM - 1) / CONVND_HOPPER_BM);
    g.tiles_n = (int32_t)((p.C_out + BN - 1) / BN);
    g.cblocks = (int32_t)((p.C_in + BK - 1) / BK);
    g.taps = (int32_t)(p.k[0] * p.k[1] * p.k[2]);
    for (int d = 0; d < 3; ++d) {
        g.k[d] = (int32_t)p.k[d];
        g.dil[d] = (int32_t)p.d[d];
        g.s[d] = (int32_t)p.s[d];
        g.p0[d] = (int32_t)p.p0[d];
        g.out[d] = (int32_t)p.out[d];
    }
    /* x as (C, W[, H[, D]], N): an im2col map with the conv's bounding box */
    convnd_tmap xmap, wmap, ymap;
    convnd_tmap_desc xd = convnd_tmap_desc_make(dt, RANK, a->x);
    xd.dims[0] = (uint64_t)p.C_in;
    uint64_t stride = (uint64_t)p.C_in * es;
    for (int i = 0; i < RANK - 2; ++i) {
        const int d = 2 - i;
        xd.dims[1 + i] = (uint64_t)p.in[d];
        xd.strides[i] = stride;
        stride *= (uint64_t)p.in[d];
        xd.element_strides[1 + i] = (uint32_t)p.s[d];
        xd.lower_corner[i] = (int32_t)-p.p0[d];
        xd.upper_corner[i] = (int32_t)((p.out[d] - 1) * p.s[d] - p.p0[d] - (p.in[d] - 1));
    }
    xd.dims[RANK - 1] = (uint64_t)p.N;
    xd.strides[RANK - 2] = stride;
    xd.channels_per_pixel = BK;
    xd.pixels_per_column = CONVND_HOPPER_BM;
    xd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    convnd_status st = hopper_encode(&xmap, &xd, true);
    if (st != CONVND_OK) return st;
    /* w as (C_in, taps, C_out) */
    convnd_tmap_desc wd = convnd_tmap_desc_make(dt, 3, a->w);
    wd.dims[0] = (uint64_t)p.C_in;
    wd.dims[1] = (uint64_t)g.taps;
    wd.dims[2] = (uint64_t)p.C_out;
    wd.strides[0] = (uint64_t)p.C_in * es;
    wd.strides[1] = (uint64_t)p.C_in * es * (uint64_t)g.taps;
    wd.box[0] = BK;
    wd.box[1] = 1;
    wd.box[2] = BN;
    wd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    if ((st = hopper_encode(&wmap, &wd, false)) != CONVND_OK) return st;
    /* y as (C_out, M): 64-row chunks of 128 bytes */
    convnd_tmap_desc yd = convnd_tmap_desc_make(dt, 2, a->y);
    yd.dims[0] = (uint64_t)p.C_out;
    yd.dims[1] = (uint64_t)g.M;
    yd.strides[0] = (uint64_t)p.C_out * es;
    yd.box[0] = BK;
    yd.box[1] = 64;
    yd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    if ((st = hopper_encode(&ymap, &yd, false)) != CONVND_OK) return st;

    const int32_t tiles = g.tiles_m * g.tiles_n;
    auto k = &hopper_igemm_kernel<T, BN, STAGES, RANK>;
    return convnd_launch(k, dim3((unsigned)hopper_grid(tiles)), dim3(CONVND_HOPPER_THREADS),
                         convnd_hopper_smem_bytes(config), a->stream, p, xmap, wmap, ymap,
                         static_cast<const T *>(a->bias), static_cast<const T *>(a->z), g);
}

template <typename T> static convnd_status hopper_dispatch(const convnd_launch_args *a) {
    const int32_t dims = a->problem->dims;
    if (a->config == CONVND_HOPPER_128x256) {
        if (dims == 1) return hopper_run<T, 256, 4, 3>(a, a->config);
        if (dims == 2) return hopper_run<T, 256, 4, 4>(a, a->config);
        return hopper_run<T, 256, 4, 5>(a, a->config);
    }
    if (dims == 1) return hopper_run<T, 128, 6, 3>(a, a->config);
    if (dims == 2) return hopper_run<T, 128, 6, 4>(a, a->config);
    return hopper_run<T, 128, 6, 5>(a, a->config);
}

} // namespace CONVND_NS

extern "C" convnd_status CONVND_LAUNCHER(hopper_igemm)(const convnd_launch_args *a) {
    switch (a->params.dtype) {
    case CONVND_F16:
        return CONVND_NS::hopper_dispatch<convnd_half>(a);
    case CONVND_BF16:
        return CONVND_NS::hopper_dispatch<convnd_bf16>(a);
    default:
        return CONVND_NS::hopper_dispatch<float>(a);
    }
}
