/* The depthwise configurations and the launch geometry of the depthwise and grouped kernels,
 * listed once in plain C: the registries (families/depthwise/depthwise.c, families/depthwise/grouped.c) compute
 * supports() with the same functions the launchers (families/depthwise/depthwise_*.cu, families/depthwise/grouped.cu)
 * size their blocks and shared memory with, so a problem a configuration accepts always fits.
 *
 * Depthwise: X(name, PATH, P)
 *   CONVND_DW_PATH_CL      families/depthwise/depthwise_cl.cu: a thread owns a vector of output channels
 *                          (16 bytes of T) and a run of P outputs along W, sliding the inputs of
 *                          each kernel row through registers; weights staged in shared memory
 *   CONVND_DW_PATH_TILE    families/depthwise/depthwise_tile.cu: an output tile of one channel plane per
 *                          block, its input tile + halo in shared memory (channels-first)
 *   CONVND_DW_PATH_STREAM  families/depthwise/depthwise_stream.cu: a thread walks a long run along W
 *                          keeping the last P inputs in registers (the 1-D causal conv); needs
 *                          a kernel that is 1 in the leading dims and spans D*(K-1)+1 <= P */
#ifndef CONVND_DEPTHWISE_CONFIGS_H
#define CONVND_DEPTHWISE_CONFIGS_H

#include <stddef.h>
#include <stdint.h>

#include "convnd.h"
#include "conv_params.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CONVND_DW_PATH_CL = 0, CONVND_DW_PATH_TILE = 1, CONVND_DW_PATH_STREAM = 2 };

#define CONVND_DEPTHWISE_CONFIGS(X)                                                                \
    X(cl_r4, CONVND_DW_PATH_CL, 4)                                                                 \
    X(cl_r8, CONVND_DW_PATH_CL, 8)                                                                 \
    X(cf_tile, CONVND_DW_PATH_TILE, 4)                                                             \
    X(stream4, CONVND_DW_PATH_STREAM, 4)                                                           \
    X(stream8, CONVND_DW_PATH_STREAM, 8)

typedef struct convnd_dw_config {
    int32_t path, param;
} convnd_dw_config;

#define CONVND_DW_CONFIG_ENTRY(name, path, param) {path, param},
#define CONVND_DW_CONFIG_ONE(name, path, param) +1
#define CONVND_DW_CONFIG_COUNT (0 CONVND_DEPTHWISE_CONFIGS(CONVND_DW_CONFIG_ONE))

/* Configuration i (0 <= i < CONVND_DW_CONFIG_COUNT). */
static inline convnd_dw_config convnd_dw_config_at(int32_t i) {
    static const convnd_dw_config configs[] = {CONVND_DEPTHWISE_CONFIGS(CONVND_DW_CONFIG_ENTRY)};
    return configs[i];
}

/* Kernel widths (along W) with a depthwise_cl kernel of their own, for stride 1 and dilation 1:
 * the common depthwise widths and the causal 2-4 (families/depthwise/depthwise_cl.cu). */
#define CONVND_DW_CL_WIDTHS(X) X(2) X(3) X(4) X(5) X(7) X(9) X(31)

/* Threads per block of every kernel here. */
#define CONVND_DW_THREADS 256
/* Staged weights: within the default 48 KiB (no opt-in), room for several blocks per SM. */
#define CONVND_DW_WEIGHT_SMEM (48 * 1024)
/* Input tile + halo: large kernels and strides need more; opted in above 48 KiB. */
#define CONVND_DW_TILE_SMEM (96 * 1024)
/* A stride, dilation or kernel size beyond this cannot fit a tile (and keeps products small). */
#define CONVND_DW_MAX_EXTENT ((int64_t)1 << 20)

static inline int64_t convnd_dw_div_up(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
static inline int64_t convnd_dw_min(int64_t a, int64_t b) {
    return a < b ? a : b;
}
static inline int64_t convnd_dw_max(int64_t a, int64_t b) {
    return a > b ? a : b;
}
static inline int64_t convnd_dw_pow2_at_least(int64_t v) {
    int64_t r = 1;
    while (r < v)
        r *= 2;
    return r;
}

/* Elements of T per 16-byte vector: the channels a depthwise thread owns. */
static inline int32_t convnd_dw_vec(int32_t dtype) {
    return dtype == CONVND_F32 ? 4 : 8;
}

/* Effective kernel extent D*(K-1)+1 along W (the stream path's register window). */
static inline int64_t convnd_dw_span_w(const convnd_conv_params *p) {
    return p->d[2] * (p->k[2] - 1) + 1;
}

/* ---- channel units x spatial items (depthwise_cl and grouped) --------------------------------
 * A block is tx channel units (a depthwise channel vector, or a grouped group slice) by ty
 * spatial items (n, o0, o1, a run along W). The weights of the block's units are staged in
 * shared memory by kernel rows (k0, k1), all K2 taps of a row at once: every row when they fit
 * (staged once per block), else rows_per_stage rows at a time. */
typedef struct convnd_unit_geometry {
    int32_t tx, ty;
    int64_t chunks;         /* blocks along the units */
    int32_t rows_per_stage; /* kernel rows per stage */
    int32_t staged_once;    /* every row fits: staged once, before the spatial loop */
    size_t smem;            /* dynamic shared memory bytes */
} convnd_unit_geometry;

/* units: channel units; tap_floats: staged weight floats per tap and unit. Returns 0 when one
 * kernel row of one unit does not fit the weight budget. */
static inline int convnd_unit_geometry_for(const convnd_conv_params *p, int64_t units,
                                           int64_t tap_floats, convnd_unit_geometry *g) {
    const int64_t rows = p->k[0] * p->k[1], k2 = p->k[2];
    const int64_t budget = CONVND_DW_WEIGHT_SMEM / 4;
    tap_floats = convnd_dw_max(tap_floats, 1); /* C_in = 0 stages nothing */
    if (k2 > budget || tap_floats > budget || k2 * tap_floats > budget) return 0;
    const int64_t row_floats = k2 * tap_floats; /* one row of one unit */
    units = convnd_dw_max(units, 1);
    int64_t chunks = convnd_dw_div_up(units, 32);
    int64_t tx = convnd_dw_div_up(units, chunks); /* balanced: no mostly-idle last chunk */
    tx = convnd_dw_min(tx, budget / row_floats);
    g->tx = (int32_t)tx;
    g->ty = (int32_t)convnd_dw_max(1, CONVND_DW_THREADS / tx);
    g->chunks = convnd_dw_div_up(units, tx);
    g->rows_per_stage = (int32_t)convnd_dw_min(rows, budget / (tx * row_floats));
    g->staged_once = g->rows_per_stage >= rows;
    g->smem = (size_t)g->rows_per_stage * (size_t)(tx * row_floats) * sizeof(float);
    return 1;
}

/* ---- channels-first tile (depthwise_tile) ------------------------------------------------- */
typedef struct convnd_dw_tile_geometry {
    int32_t bx, by, rh; /* bx x by threads, each rh output rows of one column */
    int64_t tile_h, tile_w, in_h, in_w, tiles_h, tiles_w;
    size_t smem; /* input tile + one k0 slab of weights, floats */
} convnd_dw_tile_geometry;

/* rh: rows per thread for 2-D planes (1-D planes, O1 == 1, use one). Returns 0 when the tile
 * exceeds CONVND_DW_TILE_SMEM. */
static inline int convnd_dw_tile_geometry_for(const convnd_conv_params *p, int32_t rh,
                                              convnd_dw_tile_geometry *g) {
    for (int t = 1; t < 3; ++t)
        if (p->s[t] > CONVND_DW_MAX_EXTENT || p->d[t] > CONVND_DW_MAX_EXTENT ||
            p->k[t] > CONVND_DW_MAX_EXTENT)
            return 0;
    const int one_row = p->out[1] == 1;
    g->rh = one_row ? 1 : rh;
    g->bx = (int32_t)convnd_dw_min(one_row ? CONVND_DW_THREADS : 32,
                                   convnd_dw_pow2_at_least(p->out[2]));
    g->by =
        one_row
            ? 1
            : (int32_t)convnd_dw_min(CONVND_DW_THREADS / g->bx,
                                     convnd_dw_pow2_at_least(convnd_dw_div_up(p->out[1], g->rh)));
    g->tile_w = g->bx;
    g->tile_h = (int64_t)g->by * g->rh;
    g->in_h = (g->tile_h - 1) * p->s[1] + (p->k[1] - 1) * p->d[1] + 1;
    g->in_w = (g->tile_w - 1) * p->s[2] + (p->k[2] - 1) * p->d[2] + 1;
    g->tiles_h = convnd_dw_div_up(p->out[1], g->tile_h);
    g->tiles_w = convnd_dw_div_up(p->out[2], g->tile_w);
    const int64_t in_floats = (g->in_h * g->in_w + 3) / 4 * 4; /* weights stay 16-byte aligned */
    g->smem = (size_t)(in_floats + p->k[1] * p->k[2]) * sizeof(float);
    return g->smem <= CONVND_DW_TILE_SMEM;
}

/* ---- stream (depthwise_stream) ------------------------------------------------------------ */

/* Outputs along W per thread: long enough that reloading the window (span - 1 inputs) at each
 * run's start is small, short enough to fill an H200 (132 SMs x 2048 threads). */
static inline int64_t convnd_dw_stream_run(const convnd_conv_params *p) {
    const int64_t lanes =
        p->N * p->out[0] * p->out[1] * convnd_dw_div_up(p->C_out, convnd_dw_vec(p->dtype));
    const int64_t target_threads = 132 * 2048;
    const double run = (double)p->out[2] * (double)lanes / (double)target_threads;
    /* a multiple of 4: the stride-1 loop takes 4 outputs at a time */
    return run < 4.0 ? 4 : run > 512.0 ? 512 : ((int64_t)run + 3) / 4 * 4;
}

#ifdef __cplusplus
}
#endif

#endif
