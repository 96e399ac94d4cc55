/* The Hopper tier: a warp-specialized, persistent implicit GEMM for forward and transposed
 * convolution with channels-last x, w and y (the schedule's domain: families/hopper_igemm/hopper_igemm.c).
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
 * blocks walk the tiles in a raster of 8-row-block groups (L2 reuse of the weight columns).
 *
 * Transposed mode (TR): each output phase (o mod S per dimension, convT_phase.h) is a forward
 * convolution over x with stride 1, dilation D', padding P0' and the phase's taps, flipped (tap
 * j reads weight tap k_last - j*kappa). One launch per phase, each with the phase's im2col map
 * (its corners from P0' and the phase's output count); a launch per phase rather than one grid
 * over all phases keeps the tensor maps __grid_constant__ parameters of a fixed count, the
 * forward kernel's tile walk unchanged, and costs prod(S) launches. The transposed weight
 * [C_in][K...][C_out] keeps output channels contiguous, so B arrives MN-major: BN / 64 boxes of
 * 64 input-channel rows x 128 bytes of output channels, read by wgmma with imm-trans-b (16-bit
 * types only: .tf32 wgmma takes K-major operands alone, PTX ISA 9.7.15.5.1). The epilogue stores
 * from registers: a phase's 64 consecutive rows are not one box of y (they wrap rows of the
 * phase's grid at stride S), and TMA stores address tiled boxes only. A phase no tap reaches
 * (T = 0) runs no k-loop: its tiles get the epilogue of a zero accumulator (SPEC §3). */
/* convnd-image: sm_90a (wgmma, setmaxnreg: families/CMakeLists.txt builds this file into its own
 * image, and the static checks read it from there) */
#include "portability.cuh"
#include "hopper_primitives.cuh"
#include "stmatrix.cuh"
#include "conv_index.cuh"
#include "hopper_igemm.h"
#include "convT_phase.h"
#include "launch_abi.h"
#include "error.h"
#include "planted_bugs.h"

#if defined(CONVND_GPU) && CONVND_GPU
#include "hopper_tmap_gpu.cuh"
#endif

/* Full unrolling keeps the accumulators in registers on the GPU; the emulator gains nothing from
 * it but compile time. */
#if defined(CONVND_GPU) && CONVND_GPU
#define HOPPER_UNROLL(n) CONVND_UNROLL(n)
#else
#define HOPPER_UNROLL(n)
#endif

namespace CONVND_NS {

/* What the kernel needs besides the tensor maps: the forward view of the launch (in transposed
 * mode, of the phase: stride 1, dilation D', padding P0', the phase's taps and outputs). */
struct hopper_geom {
    int64_t M;                /* GEMM rows: N * prod(out) */
    int32_t tiles_m, tiles_n; /* BM x BN tiles */
    int32_t cblocks, taps;    /* K blocks per tap, taps = prod(k) (0: epilogue only) */
    int32_t k[3], dil[3], s[3], p0[3], out[3];
    /* weight tap of tap step (j0, j1, j2): w_tap0 + sum j[d] * w_tap_step[d] */
    int32_t w_tap0, w_tap_step[3];
    /* transposed: row q of the phase's grid is y position q * o_step + o_first per dimension */
    int32_t o_step[3], o_first[3];
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

template <typename T, int BN, int STAGES, int RANK, bool TR>
__global__ void __launch_bounds__(CONVND_HOPPER_THREADS, 1)
    hopper_igemm_kernel(const convnd_conv_params p, const CONVND_GRID_CONSTANT convnd_tmap xmap,
                        const CONVND_GRID_CONSTANT convnd_tmap wmap,
                        const CONVND_GRID_CONSTANT convnd_tmap ymap, const T *bias, const T *z,
                        T *y, const hopper_geom g) {
    constexpr int BM = CONVND_HOPPER_BM, ROW = CONVND_HOPPER_ROW_BYTES;
    constexpr int BK = ROW / (int)sizeof(T);   /* channels per K block */
    constexpr int KSTEP = 32 / (int)sizeof(T); /* wgmma K: 16 (16-bit), 8 (tf32) */
    constexpr uint32_t A_BYTES = BM * ROW, B_BYTES = BN * ROW;
    /* B descriptor steps per wgmma K step (16-byte units): 32 bytes along a K-major row, or
     * KSTEP rows of 128 bytes MN-major */
    constexpr uint64_t B_KSTEP = TR ? KSTEP * ROW / 16 : 2;
    static_assert(!TR || sizeof(T) == 2, "MN-major B (transposed weight): 16-bit types only");
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
                const int32_t wtap = g.w_tap0 + kk[0] * g.w_tap_step[0] + kk[1] * g.w_tap_step[1] +
                                     kk[2] * g.w_tap_step[2];
                if constexpr (!TR) {
                    const int32_t wc[3] = {cb * BK, wtap, nb * BN};
                    convnd_tma_load<3>(b_ring + s * B_BYTES, wmap, &full[s], wc);
                } else { /* BK input-channel rows x 128 bytes of output channels per box */
                    for (int c = 0; c < BN / BK; ++c) {
                        const int32_t wc[3] = {nb * BN + c * BK, wtap, cb * BK};
                        convnd_tma_load<3>(b_ring + s * B_BYTES + c * BK * ROW, wmap, &full[s], wc);
                    }
                }
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
            /* B MN-major (TR): LBO steps the boxes of 64 output channels, SBO 8 K rows */
            const uint64_t db = TR ? convnd_wgmma_desc(b_base + s * B_BYTES, BK * ROW, 8 * ROW, 1)
                                   : convnd_wgmma_desc(b_base + s * B_BYTES, 16, 1024, 1);
            HOPPER_UNROLL(4)
            for (int k = 0; k < BK / KSTEP; ++k) /* A: + 32 bytes of K per step */
                convnd_wgmma<W, BN, TR>(acc, da + 2 * k, db + B_KSTEP * k, ki > 0 || k > 0);
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
        /* kiters = 0 (a phase no tap reaches): no stage taken, the accumulators stay 0 */
        if (CONVND_PLANTED_BUG != CONVND_PLANT_HOPPER_RELEASE_IN_FLIGHT && kiters > 0)
            convnd_mbarrier_arrive(&empty[prev]);

        /* epilogue: 64 rows x BN, in chunks of 128 bytes of columns. acc[i] is row
         * 16*warp + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2 of the consumer's
         * 64 x BN tile (wgmma's D fragment): per 8-column block, two 8x8 matrices in stmatrix's
         * layout. */
        constexpr int CW = ROW / (int)sizeof(T);
        const int64_t row0 = (int64_t)mb * BM + cw * 64;
        const int32_t col0 = nb * BN;
        if constexpr (TR) {
            /* from registers: this thread's two rows, columns in pairs */
            HOPPER_UNROLL(2)
            for (int h = 0; h < 2; ++h) {
                int64_t q = row0 + 16 * (int)warp + (int)lane / 4 + 8 * h;
                if (q >= g.M) continue;
                int64_t o[3];
                for (int d = 2; d >= 0; --d) {
                    o[d] = (q % g.out[d]) * g.o_step[d] + g.o_first[d];
                    q /= g.out[d];
                }
                const int64_t pix = ((q * p.out[0] + o[0]) * p.out[1] + o[1]) * p.out[2] + o[2];
                HOPPER_UNROLL(32)
                for (int j = 0; j < BN / 8; ++j) {
                    const int64_t n = col0 + 8 * j + 2 * ((int)lane % 4);
                    if (n >= p.C_out) break; /* C_out is a multiple of 8: n + 1 is in range */
                    HOPPER_UNROLL(2)
                    for (int e = 0; e < 2; ++e)
                        conv_finish(p, acc[4 * j + 2 * h + e], bias, z, y, n + e,
                                    pix * p.C_out + n + e);
                }
            }
            continue;
        }
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

/* Tensor maps: the emulator's encoder, or the driver's (hopper_tmap_gpu.cuh). */
static convnd_status hopper_encode(convnd_tmap *map, const convnd_tmap_desc *d, bool im2col) {
#if defined(CONVND_EMU) && CONVND_EMU
    return im2col ? convnd_emu_tmap_encode_im2col(map, d) : convnd_emu_tmap_encode_tiled(map, d);
#else
    return convnd_gpu_tmap_encode(map, d, im2col);
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

/* x as (C, W[, H[, D]], N): an im2col map whose bounding box walks the output grid `out` of a
 * forward view with strides s and padding p0 (the conv's, or a transposed phase's). */
template <typename T, int RANK>
static convnd_status hopper_encode_x(convnd_tmap *xmap, const convnd_launch_args *a,
                                     const int32_t (&out)[3], const int32_t (&s)[3],
                                     const int32_t (&p0)[3]) {
    const convnd_conv_params &p = a->params;
    const uint64_t es = sizeof(T);
    convnd_tmap_desc xd = convnd_tmap_desc_make((convnd_dtype)p.dtype, RANK, a->x);
    xd.dims[0] = (uint64_t)p.C_in;
    uint64_t stride = (uint64_t)p.C_in * es;
    for (int i = 0; i < RANK - 2; ++i) {
        const int d = 2 - i;
        xd.dims[1 + i] = (uint64_t)p.in[d];
        xd.strides[i] = stride;
        stride *= (uint64_t)p.in[d];
        xd.element_strides[1 + i] = (uint32_t)s[d];
        xd.lower_corner[i] = -p0[d];
        xd.upper_corner[i] = (int32_t)((out[d] - 1) * s[d] - p0[d] - (p.in[d] - 1));
    }
    xd.dims[RANK - 1] = (uint64_t)p.N;
    xd.strides[RANK - 2] = stride;
    xd.channels_per_pixel = CONVND_HOPPER_ROW_BYTES / (uint32_t)es;
    xd.pixels_per_column = CONVND_HOPPER_BM;
    xd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    return hopper_encode(xmap, &xd, true);
}

/* w as (inner, taps, outer) with a box of (box0, 1, box2): forward (C_in, taps, C_out) read
 * K-major, transposed (C_out, taps, C_in) read MN-major. */
template <typename T>
static convnd_status hopper_encode_w(convnd_tmap *wmap, const convnd_launch_args *a, int64_t inner,
                                     int64_t outer, uint32_t box0, uint32_t box2) {
    const convnd_conv_params &p = a->params;
    const uint64_t es = sizeof(T);
    const int64_t taps = p.k[0] * p.k[1] * p.k[2];
    convnd_tmap_desc wd = convnd_tmap_desc_make((convnd_dtype)p.dtype, 3, a->w);
    wd.dims[0] = (uint64_t)inner;
    wd.dims[1] = (uint64_t)taps;
    wd.dims[2] = (uint64_t)outer;
    wd.strides[0] = (uint64_t)inner * es;
    wd.strides[1] = (uint64_t)inner * es * (uint64_t)taps;
    wd.box[0] = box0;
    wd.box[1] = 1;
    wd.box[2] = box2;
    wd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    return hopper_encode(wmap, &wd, false);
}

/* The launch-wide part of the geometry; the caller fills the forward view's dims and taps. */
template <int BN>
static void hopper_tiles(hopper_geom &g, const convnd_conv_params &p, int32_t bk) {
    g.M = p.N * (int64_t)g.out[0] * g.out[1] * g.out[2];
    g.tiles_m = (int32_t)((g.M + CONVND_HOPPER_BM - 1) / CONVND_HOPPER_BM);
    g.tiles_n = (int32_t)((p.C_out + BN - 1) / BN);
    g.cblocks = (int32_t)((p.C_in + bk - 1) / bk);
    g.taps = g.k[0] * g.k[1] * g.k[2];
}

template <typename T, int BN, int STAGES, int RANK, bool TR>
static convnd_status hopper_launch_geom(const convnd_launch_args *a, int32_t config,
                                        const convnd_tmap &xmap, const convnd_tmap &wmap,
                                        const convnd_tmap &ymap, const hopper_geom &g) {
    const int32_t tiles = g.tiles_m * g.tiles_n;
    auto k = &hopper_igemm_kernel<T, BN, STAGES, RANK, TR>;
    return convnd_launch(k, dim3((unsigned)hopper_grid(tiles)), dim3(CONVND_HOPPER_THREADS),
                         convnd_hopper_smem_bytes(config), a->stream, a->params, xmap, wmap, ymap,
                         static_cast<const T *>(a->bias), static_cast<const T *>(a->z),
                         static_cast<T *>(a->y), g);
}

template <typename T, int BN, int STAGES, int RANK>
static convnd_status hopper_run(const convnd_launch_args *a, int32_t config) {
    const convnd_conv_params &p = a->params;
    const uint64_t es = sizeof(T);
    constexpr int BK = CONVND_HOPPER_ROW_BYTES / (int)sizeof(T);
    hopper_geom g;
    memset(&g, 0, sizeof g);
    for (int d = 0; d < 3; ++d) {
        g.k[d] = (int32_t)p.k[d];
        g.dil[d] = (int32_t)p.d[d];
        g.s[d] = (int32_t)p.s[d];
        g.p0[d] = (int32_t)p.p0[d];
        g.out[d] = (int32_t)p.out[d];
    }
    hopper_tiles<BN>(g, p, BK);
    g.w_tap_step[0] = g.k[1] * g.k[2];
    g.w_tap_step[1] = g.k[2];
    g.w_tap_step[2] = 1;
    convnd_tmap xmap, wmap, ymap;
    convnd_status st = hopper_encode_x<T, RANK>(&xmap, a, g.out, g.s, g.p0);
    if (st != CONVND_OK) return st;
    if ((st = hopper_encode_w<T>(&wmap, a, p.C_in, p.C_out, BK, BN)) != CONVND_OK) return st;
    /* y as (C_out, M): 64-row chunks of 128 bytes */
    convnd_tmap_desc yd = convnd_tmap_desc_make((convnd_dtype)p.dtype, 2, a->y);
    yd.dims[0] = (uint64_t)p.C_out;
    yd.dims[1] = (uint64_t)g.M;
    yd.strides[0] = (uint64_t)p.C_out * es;
    yd.box[0] = BK;
    yd.box[1] = 64;
    yd.swizzle = CONVND_TMAP_SWIZZLE_128B;
    if ((st = hopper_encode(&ymap, &yd, false)) != CONVND_OK) return st;
    return hopper_launch_geom<T, BN, STAGES, RANK, false>(a, config, xmap, wmap, ymap, g);
}

/* Transposed: one launch per output phase with outputs (see the top of the file). */
template <typename T, int BN, int STAGES, int RANK>
static convnd_status hopper_run_transposed(const convnd_launch_args *a, int32_t config) {
    const convnd_conv_params &p = a->params;
    constexpr int BK = CONVND_HOPPER_ROW_BYTES / (int)sizeof(T);
    convnd_tmap wmap, ymap; /* y is stored from registers: ymap stays unused */
    memset(&ymap, 0, sizeof ymap);
    convnd_status st = hopper_encode_w<T>(&wmap, a, p.C_out, p.C_in, BK, BK);
    if (st != CONVND_OK) return st;
    const int32_t wstride[3] = {(int32_t)(p.k[1] * p.k[2]), (int32_t)p.k[2], 1};
    int32_t r[3];
    for (r[0] = 0; r[0] < p.s[0]; ++r[0])
        for (r[1] = 0; r[1] < p.s[1]; ++r[1])
            for (r[2] = 0; r[2] < p.s[2]; ++r[2]) {
                hopper_geom g;
                memset(&g, 0, sizeof g);
                for (int d = 0; d < 3; ++d) {
                    const convnd_convT_dim e =
                        convnd_convT_dim_phase(p.s[d], p.d[d], p.k[d], p.p0[d], p.out[d], r[d]);
                    g.k[d] = (int32_t)e.T;
                    g.dil[d] = (int32_t)e.D;
                    g.s[d] = 1;
                    g.p0[d] = (int32_t)e.P0;
                    g.out[d] = (int32_t)e.O;
                    g.w_tap0 += (int32_t)e.k_last * wstride[d];
                    g.w_tap_step[d] = -(int32_t)e.kappa * wstride[d];
                    g.o_step[d] = (int32_t)p.s[d];
                    g.o_first[d] = r[d];
                }
                hopper_tiles<BN>(g, p, BK);
                if (g.M == 0) continue; /* no outputs in this phase */
                convnd_tmap xmap;       /* unread when no tap reaches the phase */
                memset(&xmap, 0, sizeof xmap);
                if (g.taps > 0 &&
                    (st = hopper_encode_x<T, RANK>(&xmap, a, g.out, g.s, g.p0)) != CONVND_OK)
                    return st;
                st = hopper_launch_geom<T, BN, STAGES, RANK, true>(a, config, xmap, wmap, ymap, g);
                if (st != CONVND_OK) return st;
            }
    return CONVND_OK;
}

template <typename T, int BN, int STAGES, int RANK>
static convnd_status hopper_mode(const convnd_launch_args *a, int32_t config) {
    if (a->params.mode != CONVND_TRANSPOSED) return hopper_run<T, BN, STAGES, RANK>(a, config);
    if constexpr (sizeof(T) == 2) return hopper_run_transposed<T, BN, STAGES, RANK>(a, config);
    return convnd_error(CONVND_ERR_UNSUPPORTED,
                        "hopper_igemm: transposed mode needs a 16-bit dtype (MN-major B)");
}

template <typename T> static convnd_status hopper_dispatch(const convnd_launch_args *a) {
    const int32_t dims = a->params.dims;
    switch (a->config) {
#define HOPPER_CONFIG_CASE(e, name, BN, STAGES)                                                    \
    case e:                                                                                        \
        return dims == 1   ? hopper_mode<T, BN, STAGES, 3>(a, a->config)                           \
               : dims == 2 ? hopper_mode<T, BN, STAGES, 4>(a, a->config)                           \
                           : hopper_mode<T, BN, STAGES, 5>(a, a->config);
        CONVND_HOPPER_CONFIGS(HOPPER_CONFIG_CASE)
#undef HOPPER_CONFIG_CASE
    default:
        return convnd_error(CONVND_ERR_INTERNAL, "hopper_igemm: config %d out of range",
                            (int)a->config);
    }
}

} // namespace CONVND_NS

CONVND_DEFINE_LAUNCHER(hopper_igemm) {
    switch (a->params.dtype) {
    case CONVND_F16:
        return CONVND_NS::hopper_dispatch<convnd_half>(a);
    case CONVND_BF16:
        return CONVND_NS::hopper_dispatch<convnd_bf16>(a);
    default:
        return CONVND_NS::hopper_dispatch<float>(a);
    }
}
