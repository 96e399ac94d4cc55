/* The grouped-convolution configurations (families/depthwise/grouped.c, families/depthwise/grouped.cu), listed once:
 * X(name, R, CO). A thread computes a run of R outputs along W for CO output channels of one
 * group (a "slice"; ceil(C_out/groups / CO) slices per group); a block holds up to 32 slices,
 * so with few channels per group it covers several groups and no tile is wasted. The launch
 * geometry is families/depthwise/depthwise_configs.h's units geometry with CO * C_in/groups weight floats
 * per tap and slice. */
#ifndef CONVND_GROUPED_CONFIGS_H
#define CONVND_GROUPED_CONFIGS_H

#include <stdint.h>

#include "depthwise_configs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONVND_GROUPED_CONFIGS(X)                                                                  \
    X(r4_co4, 4, 4)                                                                                \
    X(r4_co8, 4, 8)                                                                                \
    X(r2_co16, 2, 16)

typedef struct convnd_grouped_config {
    int32_t r, co;
} convnd_grouped_config;

#define CONVND_GROUPED_CONFIG_ENTRY(name, R, CO) {R, CO},
#define CONVND_GROUPED_CONFIG_ONE(name, R, CO) +1
#define CONVND_GROUPED_CONFIG_COUNT (0 CONVND_GROUPED_CONFIGS(CONVND_GROUPED_CONFIG_ONE))

/* Configuration i (0 <= i < CONVND_GROUPED_CONFIG_COUNT). */
static inline convnd_grouped_config convnd_grouped_config_at(int32_t i) {
    static const convnd_grouped_config configs[] = {
        CONVND_GROUPED_CONFIGS(CONVND_GROUPED_CONFIG_ENTRY)};
    return configs[i];
}

/* Slices (units) and the geometry of configuration c on p. Returns 0 when the weights of one
 * kernel row of one slice do not fit shared memory. */
static inline int convnd_grouped_geometry_for(const convnd_conv_params *p, convnd_grouped_config c,
                                              int64_t *slices, convnd_unit_geometry *g) {
    *slices = convnd_dw_div_up(p->cout_g, c.co);
    return convnd_unit_geometry_for(p, p->groups * *slices, p->cin_g * c.co, g);
}

#ifdef __cplusplus
}
#endif

#endif
