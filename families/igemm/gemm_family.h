/* The GEMM families' host side, declared one way: a convnd_gemm_family descriptor (its schedules'
 * names, kernels by dtype, the family's questions) and one CONVND_GEMM_FAMILY_SCHEDULE line per
 * variant. Forward implicit GEMM (igemm.c) and transposed by phase (convT.c) share the tile
 * skeleton and are each their own refusal plus one CONVND_GEMM_FAMILY line; wgrad_igemm.c and
 * hopper_igemm.c bring their own questions. */
#ifndef CONVND_GEMM_FAMILY_H
#define CONVND_GEMM_FAMILY_H

#include "gemm_tiles.h"
#include "schedule.h"

typedef enum convnd_gemm_variant {
    CONVND_GEMM_TC = 0,  /* tensor cores: f16, bf16, f32 with TF32 allowed */
    CONVND_GEMM_SIMT = 1 /* CUDA cores, exact f32 */
} convnd_gemm_variant;

/* One GEMM family: its schedules by variant, their kernels by dtype as data, and the family's
 * questions, asked with the variant. igemm and convT (the forward-GEMM tile skeleton below),
 * wgrad_igemm and hopper_igemm are all declared this way; CONVND_GEMM_FAMILY_SCHEDULE makes a
 * variant's registry entry. */
typedef struct convnd_gemm_family convnd_gemm_family;
struct convnd_gemm_family {
    const char *names[2];          /* its schedules, [variant]; NULL where it has none */
    convnd_launcher kernels[2][3]; /* [variant][dtype: f16, bf16, f32 (TF32 or exact)] */
    int32_t (*supports)(const convnd_gemm_family *f, convnd_gemm_variant v,
                        const convnd_conv_params *params, int32_t config, char *reason,
                        size_t reason_len);
    int32_t (*worth_routing)(const convnd_gemm_family *f, convnd_gemm_variant v,
                             const convnd_conv_params *params, int32_t config);
    /* NULL: no workspace */
    size_t (*workspace_size)(const convnd_gemm_family *f, convnd_gemm_variant v,
                             const convnd_conv_params *params, int32_t config);
    /* NULL: kernels[v][dtype] (convnd_gemm_family_launch) */
    convnd_status (*launch)(const convnd_gemm_family *f, convnd_gemm_variant v,
                            const convnd_launch_args *a);
    /* the forward-GEMM tile skeleton's own data (igemm, convT; convnd_gemm_tiles_*) */
    convnd_mode mode;
    /* the family's own refusals (mode, limits), before the shared tile and numerics checks */
    int32_t (*refuses)(const convnd_conv_params *params, char *reason, size_t reason_len);
    /* 1 when the family's kernels read a prefix and write a state (SPEC §12) on the
     * configurations with BK <= CONVND_IGEMM_IO_MAX_BK */
    int32_t prefix_state;
};

/* The forward-GEMM tile skeleton (convnd_gemm_tiles: igemm_configs.h's tables): the family's
 * refusal, the shared tile and numerics checks, the prefix/state instance, the built configs. */
int32_t convnd_gemm_tiles_supports(const convnd_gemm_family *f, convnd_gemm_variant v,
                                   const convnd_conv_params *params, int32_t config, char *reason,
                                   size_t reason_len);
int32_t convnd_gemm_tiles_worth_routing(const convnd_gemm_family *f, convnd_gemm_variant v,
                                        const convnd_conv_params *params, int32_t config);
/* f->launch, or the variant's kernel for the dtype */
convnd_status convnd_gemm_family_launch(const convnd_gemm_family *f, convnd_gemm_variant v,
                                        const convnd_launch_args *a);

/* kernels[v] of a variant with one kernel per dtype, or one kernel for every dtype */
#define CONVND_GEMM_KERNELS_BY_DTYPE(f16, bf16, f32)                                               \
    { CONVND_LAUNCHER_OF(f16), CONVND_LAUNCHER_OF(bf16), CONVND_LAUNCHER_OF(f32) }
#define CONVND_GEMM_KERNEL_EVERY_DTYPE(k)                                                          \
    { CONVND_LAUNCHER_OF(k), CONVND_LAUNCHER_OF(k), CONVND_LAUNCHER_OF(k) }

/* Defines the registry entry convnd_schedule_<sched>: variant V (TC or SIMT) of family f, with
 * `count` configurations named by `config_names`, its summary and sources (the README's table),
 * the compute capability it needs and why, and what it reads as views (CONVND_READS_*). */
#define CONVND_GEMM_FAMILY_SCHEDULE(sched, f, V, count, config_names_, what, files, arch, reads_)  \
                                                                                                   \
    static int32_t sched##_supports(const convnd_conv_params *params, int32_t config,              \
                                    char *reason, size_t reason_len) {                             \
        return f.supports(&f, CONVND_GEMM_##V, params, config, reason, reason_len);                \
    }                                                                                              \
    static int32_t sched##_worth_routing(const convnd_conv_params *params, int32_t config) {       \
        return f.worth_routing(&f, CONVND_GEMM_##V, params, config);                               \
    }                                                                                              \
    static size_t sched##_workspace_size(const convnd_conv_params *params, int32_t config) {       \
        return f.workspace_size ? f.workspace_size(&f, CONVND_GEMM_##V, params, config) : 0;       \
    }                                                                                              \
    static convnd_status sched##_launch(const convnd_launch_args *a) {                             \
        return convnd_gemm_family_launch(&f, CONVND_GEMM_##V, a);                                  \
    }                                                                                              \
    const convnd_schedule convnd_schedule_##sched = {                                              \
        .name = #sched,                                                                            \
        .summary = what,                                                                           \
        .sources = files,                                                                          \
        .num_configs = count,                                                                      \
        .config_names = config_names_,                                                             \
        .supports = sched##_supports,                                                              \
        .worth_routing = sched##_worth_routing,                                                    \
        .workspace_size = sched##_workspace_size,                                                  \
        .launch = sched##_launch,                                                                  \
        CONVND_ARCH(arch),                                                                         \
        .reads = reads_,                                                                           \
    }

/* A forward-GEMM tile family `prefix` (descriptor and the schedules prefix_tc and prefix_simt, on
 * the launchers prefix_tc_f16, prefix_tc_bf16, prefix_tc_tf32 and prefix_simt) in one line;
 * reads_prefix_state: 1 when its kernels read a prefix input and write a state (SPEC §12);
 * tc_what, simt_what: the two schedules' summaries; host: the family's host file. x, y through
 * their strides; z at y's offsets. */
#define CONVND_GEMM_FAMILY(prefix, family_mode, refusal, reads_prefix_state, tc_what, simt_what,   \
                           host)                                                                   \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_f16);                                                      \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_bf16);                                                     \
    CONVND_DECLARE_LAUNCHER(prefix##_tc_tf32);                                                     \
    CONVND_DECLARE_LAUNCHER(prefix##_simt);                                                        \
    static const convnd_gemm_family prefix##_family = {                                            \
        .names = {#prefix "_tc", #prefix "_simt"},                                                 \
        .kernels = {CONVND_GEMM_KERNELS_BY_DTYPE(prefix##_tc_f16, prefix##_tc_bf16,                \
                                                 prefix##_tc_tf32),                                \
                    CONVND_GEMM_KERNEL_EVERY_DTYPE(prefix##_simt)},                                \
        .supports = convnd_gemm_tiles_supports,                                                    \
        .worth_routing = convnd_gemm_tiles_worth_routing,                                          \
        .mode = family_mode,                                                                       \
        .refuses = refusal,                                                                        \
        .prefix_state = reads_prefix_state,                                                        \
    };                                                                                             \
    CONVND_GEMM_FAMILY_SCHEDULE(                                                                   \
        prefix##_tc, prefix##_family, TC, CONVND_GEMM_TC_COUNT, convnd_gemm_tc_names, tc_what,     \
        host ", families/igemm/" #prefix "_tc_*.cu", CONVND_NEEDS_SM80_MMA,                        \
        CONVND_READS_XY_VIEWS | (reads_prefix_state ? CONVND_READS_PREFIX_STATE : 0));             \
    CONVND_GEMM_FAMILY_SCHEDULE(                                                                   \
        prefix##_simt, prefix##_family, SIMT, CONVND_GEMM_SIMT_COUNT, convnd_gemm_simt_names,      \
        simt_what, host ", families/igemm/" #prefix "_simt.cu", CONVND_NEEDS_SM80,                 \
        CONVND_READS_XY_VIEWS | (reads_prefix_state ? CONVND_READS_PREFIX_STATE : 0))

#endif
