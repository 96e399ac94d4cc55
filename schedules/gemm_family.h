/* The GEMM family's host side, once: forward implicit GEMM (igemm.c) and transposed by
 * phase (convT.c) are each their own refusal plus one CONVND_GEMM_FAMILY line (descriptor:
 * mode, names, launchers); supports, worth_routing and launch are the skeleton below. */
#ifndef CONVND_GEMM_FAMILY_H
#define CONVND_GEMM_FAMILY_H

#include "gemm_tiles.h"
#include "schedule.h"

typedef enum convnd_gemm_variant {
    CONVND_GEMM_TC = 0,  /* tensor cores: f16, bf16, f32 with TF32 allowed */
    CONVND_GEMM_SIMT = 1 /* CUDA cores, exact f32 */
} convnd_gemm_variant;

typedef struct convnd_gemm_family {
    convnd_mode mode;
    const char *names[2]; /* [variant] */
    /* the family's own refusals (mode, limits), before the shared tile and numerics checks */
    int32_t (*refuses)(const convnd_conv_params *params, char *reason, size_t reason_len);
    convnd_launcher tc[3]; /* by dtype: f16, bf16, f32 (TF32) */
    convnd_launcher simt;
    /* 1 when the family's kernels read a prefix and write a state (SPEC §12) on the
     * configurations with BK <= CONVND_IGEMM_IO_MAX_BK */
    int32_t prefix_state;
} convnd_gemm_family;

int32_t convnd_gemm_family_supports(const convnd_gemm_family *f, convnd_gemm_variant v,
                                    const convnd_conv_params *params, int32_t config, char *reason,
                                    size_t reason_len);
int32_t convnd_gemm_family_worth_routing(const convnd_gemm_family *f, convnd_gemm_variant v,
                                         const convnd_conv_params *params, int32_t config);
convnd_status convnd_gemm_family_launch(const convnd_gemm_family *f, convnd_gemm_variant v,
                                        const convnd_launch_args *a);

/* Defines the registry entry convnd_schedule_<sched> of variant V (TC or SIMT) of family f. */
#define CONVND_GEMM_FAMILY_SCHEDULE(sched, f, V, what, files)                                      \
    static int32_t sched##_supports(const convnd_conv_params *params, int32_t config,              \
                                    char *reason, size_t reason_len) {                             \
        return convnd_gemm_family_supports(&f, CONVND_GEMM_##V, params, config, reason,            \
                                           reason_len);                                            \
    }                                                                                              \
    static int32_t sched##_worth_routing(const convnd_conv_params *params, int32_t config) {       \
        return convnd_gemm_family_worth_routing(&f, CONVND_GEMM_##V, params, config);              \
    }                                                                                              \
    static convnd_status sched##_launch(const convnd_launch_args *a) {                             \
        return convnd_gemm_family_launch(&f, CONVND_GEMM_##V, a);                                  \
    }                                                                                              \
    const convnd_schedule convnd_schedule_##sched = {                                              \
        .name = #sched,                                                                            \
        .summary = what,                                                                           \
        .sources = files,                                                                          \
        .num_configs = CONVND_GEMM_##V##_COUNT,                                                    \
        .config_names = CONVND_GEMM_##V##_NAMES,                                                   \
        .supports = sched##_supports,                                                              \
        .worth_routing = sched##_worth_routing,                                                    \
        .workspace_size = NULL,                                                                    \
        .launch = sched##_launch,                                                                  \
        .min_sm = 80,                                                                              \
        .arch_needs =                                                                              \
            "cp.async and bf16/f16/TF32 tensor-core MMA", /* x, y through their strides; z at y's  \
                                                             offsets; a prefix and a state if the  \
                                                             family's */                           \
        .reads = CONVND_READS_XY_VIEWS | (f##_prefix_state ? CONVND_READS_PREFIX_STATE : 0),       \
    }

/* The whole family `prefix` (descriptor and the schedules prefix_tc and prefix_simt, on the
 * launchers prefix_tc_f16, prefix_tc_bf16, prefix_tc_tf32 and prefix_simt) in one line;
 * reads_prefix_state: 1 when its kernels read a prefix input and write a state (SPEC §12);
 * tc_what, simt_what: the two schedules' summaries; host: the family's host file. */
#define CONVND_GEMM_FAMILY(prefix, family_mode, refusal, reads_prefix_state, tc_what, simt_what,   \
                           host)                                                                   \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_f16);                                                      \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_bf16);                                                     \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_tf32);                                                     \
    CONVND_DECLARE_LAUNCHER(prefix##_simt);                                                        \
    enum { prefix##_family_prefix_state = reads_prefix_state };                                    \
    static const convnd_gemm_family prefix##_family = {                                            \
        .mode = family_mode,                                                                       \
        .names = {#prefix "_tc", #prefix "_simt"},                                                 \
        .refuses = refusal,                                                                        \
        .tc = {CONVND_LAUNCHER_OF(prefix##_tc_f16), CONVND_LAUNCHER_OF(prefix##_tc_bf16),          \
               CONVND_LAUNCHER_OF(prefix##_tc_tf32)},                                              \
        .simt = CONVND_LAUNCHER_OF(prefix##_simt),                                                 \
        .prefix_state = reads_prefix_state,                                                        \
    };                                                                                             \
    CONVND_GEMM_FAMILY_SCHEDULE(prefix##_tc, prefix##_family, TC, tc_what,                         \
                                host ", kernels/" #prefix "_tc_*.cu");                             \
    CONVND_GEMM_FAMILY_SCHEDULE(prefix##_simt, prefix##_family, SIMT, simt_what,                   \
                                host ", kernels/" #prefix "_simt.cu")

#define CONVND_GEMM_TC_NAMES convnd_gemm_tc_names
#define CONVND_GEMM_SIMT_NAMES convnd_gemm_simt_names

#endif
