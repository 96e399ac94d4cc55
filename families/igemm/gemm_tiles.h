/* What the implicit-GEMM schedules (igemm_tc/igemm_simt, forward) and the phase-decomposed
 * transposed ones (convT_tc/convT_simt) share on the host: their tile tables
 * (families/igemm/igemm_configs.h, one list for both families), the numerics checks of the tensor-core
 * and CUDA-core variants, the 32-bit-index and grid limits, and the planner's tile heuristic
 * (the table in families/igemm/igemm.c's header comment). */
#ifndef CONVND_GEMM_TILES_H
#define CONVND_GEMM_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "convnd.h"
#include "conv_params.h"
#include "igemm_configs.h"

/* One configuration's output tile: BM output rows (pixels) x BN output channels, BK input
 * channels per k-tile. */
typedef struct convnd_gemm_tile {
    int32_t bm, bn, bk;
} convnd_gemm_tile;

/* A family's configurations, largest tile first. */
typedef struct convnd_gemm_tiles {
    int32_t count;
    const char *const *names;
    const convnd_gemm_tile *tiles;
} convnd_gemm_tiles;

extern const convnd_gemm_tiles convnd_gemm_tc_tiles;   /* tensor cores (mma.sync) */
extern const convnd_gemm_tiles convnd_gemm_simt_tiles; /* CUDA cores, exact f32 */

/* The same as constant expressions, for the registry's static schedule tables. */
#define CONVND_GEMM_ONE(...) +1
#define CONVND_GEMM_TC_COUNT (0 CONVND_IGEMM_TC_CONFIGS(CONVND_GEMM_ONE))
#define CONVND_GEMM_SIMT_COUNT (0 CONVND_IGEMM_SIMT_CONFIGS(CONVND_GEMM_ONE))
extern const char *const convnd_gemm_tc_names[];
extern const char *const convnd_gemm_simt_names[];

/* supports() of a family member named `who` (e.g. "igemm_tc"; the caller checks the mode):
 * config in range, the numerics of its variant (tensor cores: f16, bf16, f32 with ALLOW_TF32;
 * simt: f32; `sibling` names the other variant in the reason), 32-bit indices
 * (families/igemm/igemm_limits.cu) and the grid's limits on groups and column blocks. */
int32_t convnd_gemm_supports(const convnd_conv_params *params, const convnd_gemm_tiles *t,
                             int32_t config, int32_t tensor_cores, const char *who,
                             const char *sibling, char *reason, size_t reason_len);

/* The first (largest) tensor-core configuration whose shared memory fits a block of the active
 * device for dtype. */
int32_t convnd_gemm_tc_first_fitting(convnd_dtype dtype);

/* 1 when this build has tensor-core configuration `config`; else 0 with the reason (CMake
 * CONVND_SKIP_TC_CONFIGS left it out). The families ask it last, so a problem a configuration
 * could not run anyway is refused for that reason in every build. */
int32_t convnd_gemm_tc_built_or_refuse(int32_t config, char *reason, size_t reason_len);

/* The planner's heuristic for config of t on a problem of `mode`: GEMM-shaped (C_in/g and
 * C_out/g >= 8); the last (smallest) tile takes any such problem; a larger one needs
 * C_out/g >= 3/4 BN, C_in/g >= BK/2 and >= 96 blocks (3/4 of a wave on an H200's 132 SMs). */
int32_t convnd_gemm_worth_routing(const convnd_conv_params *params, convnd_mode mode,
                                  const convnd_gemm_tiles *t, int32_t config);

#endif
