/* The tiled-direct configurations (families/depthwise/tiled_direct.c, families/depthwise/tiled_direct.cu) and their
 * launch geometry, listed once in plain C so supports() and the launcher agree on what fits.
 *
 * X(name, CO_T): a thread computes one output position for CO_T output channels of one group.
 * A block is nct channel threads x (tile_h x tile_w) position threads: an output tile for
 * nct * CO_T channels. Per kernel slab k0 and stage of ci_stage input channels it stages the
 * input tile + halo of those channels and their weights ([ci][k1][k2][channel] floats) in
 * shared memory. */
#ifndef CONVND_TILED_CONFIGS_H
#define CONVND_TILED_CONFIGS_H

#include <stddef.h>
#include <stdint.h>

#include "depthwise_configs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONVND_TILED_CONFIGS(X)                                                                    \
    X(co4, 4)                                                                                      \
    X(co8, 8)                                                                                      \
    X(co16, 16)

#define CONVND_TILED_CONFIG_ENTRY(name, CO_T) CO_T,
#define CONVND_TILED_CONFIG_ONE(name, CO_T) +1
#define CONVND_TILED_CONFIG_COUNT (0 CONVND_TILED_CONFIGS(CONVND_TILED_CONFIG_ONE))

/* Output channels per thread of configuration i (0 <= i < CONVND_TILED_CONFIG_COUNT). */
static inline int32_t convnd_tiled_co_per_thread(int32_t i) {
    static const int32_t co[] = {CONVND_TILED_CONFIGS(CONVND_TILED_CONFIG_ENTRY)};
    return co[i];
}

/* Shared memory of the tile: the staged input may use up to this much; opted in above 48 KiB. */
#define CONVND_TILED_SMEM (96 * 1024)
/* Input channels per stage at most (a stem's 3 fit in one). */
#define CONVND_TILED_MAX_CI_STAGE 8

typedef struct convnd_tiled_geometry {
    int32_t nct, tile_h, tile_w, ci_stage; /* threads: nct * tile_h * tile_w */
    int64_t co_block, co_chunks;           /* channels per block; blocks per group */
    int64_t in_h, in_w, tiles_h, tiles_w;
    int64_t x_floats; /* staged input floats, 16-byte rounded */
    size_t smem;
} convnd_tiled_geometry;

static inline int64_t convnd_tiled_stage_floats(const convnd_conv_params *p,
                                                const convnd_tiled_geometry *g, int64_t ci) {
    return (ci * g->in_h * g->in_w + 3) / 4 * 4 + ci * p->k[1] * p->k[2] * g->co_block;
}

/* Geometry of configuration `config` on p. Shrinks the channel block, then the tile, until one
 * input channel's stage fits CONVND_TILED_SMEM; returns 0 when even a 1 x 1 tile does not. */
static inline int convnd_tiled_geometry_for(const convnd_conv_params *p, int32_t config,
                                            convnd_tiled_geometry *g) {
    for (int t = 1; t < 3; ++t)
        if (p->s[t] > CONVND_DW_MAX_EXTENT || p->d[t] > CONVND_DW_MAX_EXTENT ||
            p->k[t] > CONVND_DW_MAX_EXTENT)
            return 0;
    const int64_t co_t = convnd_tiled_co_per_thread(config);
    const int64_t budget = CONVND_TILED_SMEM / 4;
    int64_t nct = convnd_dw_min(4, convnd_dw_pow2_at_least(convnd_dw_div_up(p->cout_g, co_t)));
    int64_t tile_w = 0, tile_h = 0;
    for (int shrink = 0;; ++shrink) {
        if (shrink == 0) {
            const int64_t positions = CONVND_DW_THREADS / nct;
            const int64_t w_cap = p->out[1] == 1 ? positions : 16;
            tile_w = convnd_dw_min(w_cap, convnd_dw_pow2_at_least(p->out[2]));
            tile_h = convnd_dw_min(positions / tile_w, convnd_dw_pow2_at_least(p->out[1]));
        }
        g->nct = (int32_t)nct;
        g->tile_h = (int32_t)tile_h;
        g->tile_w = (int32_t)tile_w;
        g->co_block = nct * co_t;
        g->in_h = (tile_h - 1) * p->s[1] + (p->k[1] - 1) * p->d[1] + 1;
        g->in_w = (tile_w - 1) * p->s[2] + (p->k[2] - 1) * p->d[2] + 1;
        if (convnd_tiled_stage_floats(p, g, 1) <= budget) break;
        if (nct > 1) /* fewer channels per block first: the tile keeps its reuse */
            nct /= 2;
        else if (tile_h > 1)
            tile_h /= 2;
        else if (tile_w > 1)
            tile_w /= 2;
        else
            return 0;
    }
    int64_t ci = convnd_dw_min(convnd_dw_max(p->cin_g, 1), CONVND_TILED_MAX_CI_STAGE);
    while (ci > 1 && convnd_tiled_stage_floats(p, g, ci) > budget)
        --ci;
    g->ci_stage = (int32_t)ci;
    g->co_chunks = convnd_dw_div_up(p->cout_g, g->co_block);
    g->tiles_h = convnd_dw_div_up(p->out[1], tile_h);
    g->tiles_w = convnd_dw_div_up(p->out[2], tile_w);
    g->x_floats = (ci * g->in_h * g->in_w + 3) / 4 * 4;
    g->smem = (size_t)convnd_tiled_stage_floats(p, g, ci) * sizeof(float);
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif
