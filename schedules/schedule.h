/* The schedule registry's entry type. One table (registry.c) drives conv_nd's dispatch, the
 * planner, the benchmark's list and the forced-schedule tests' parameter list. */
#ifndef CONVND_SCHEDULE_H
#define CONVND_SCHEDULE_H

#include <stddef.h>
#include "convnd.h"
#include "launch_abi.h"

typedef struct convnd_schedule {
    const char *name;
    /* what it is and where it lives, one line each: the README's schedule table is made from
     * these (convnd_schedule_table_markdown; a test keeps the two equal) */
    const char *summary;
    const char *sources;
    int32_t num_configs;
    const char *const *config_names;
    /* Each question below is asked about the launch parameters of a valid problem (y_layout
     * resolved), computed once per plan (core/conv_params.h) and never re-derived here: they are
     * all a schedule sees of the problem. */
    /* 1 if it can run the problem with this config; else 0 and a human-readable reason. */
    int32_t (*supports)(const convnd_conv_params *params, int32_t config, char *reason,
                        size_t reason_len);
    /* 1 when it should beat the universal fallback on the problem (the planner's hint). */
    int32_t (*worth_routing)(const convnd_conv_params *params, int32_t config);
    /* Scratch bytes taken from the caller's workspace. NULL means none. */
    size_t (*workspace_size)(const convnd_conv_params *params, int32_t config);
    convnd_status (*launch)(const convnd_launch_args *a);
    /* The GPU architectures it runs on: compute capability min_sm (x 10) and newer, for what
     * arch_needs says; supports() is asked through convnd_schedule_supports_here (arch.h). */
    int32_t min_sm;
    const char *arch_needs;
    /* CONVND_READS_* bits: what beyond packed tensors its kernels address; problems that need
     * more are refused before supports() (schedules/views_support.c) */
    int32_t reads;
} convnd_schedule;

enum {
    CONVND_READS_VIEWS = 1,        /* x, y (dy) and z through any element strides (SPEC §11) */
    CONVND_READS_PREFIX_STATE = 2, /* a prefix input and a state output (SPEC §12) */
    CONVND_READS_XY_VIEWS = 4,     /* x and y through any strides, z only through y's (the
                                      epilogue reads z at y's offset) */
    CONVND_READS_SEQUENCES = 8,    /* a stateful causal conv1d (SPEC §13: problem.sequences),
                                      and only that */
    CONVND_READS_PROLOGUE = 16     /* x through an input prologue (SPEC §15: problem.prologue) */
};

/* The architectures schedules need, each said once: (min_sm, arch_needs), for CONVND_ARCH in an
 * entry. The sm_80 baseline is what every CUDA-core kernel's portability layer uses. */
#define CONVND_NEEDS_SM80                                                                          \
    80, "primitives/portability_gpu.cuh uses sm_80 intrinsics: TF32 rounding, cp.async"
#define CONVND_NEEDS_SM80_MMA                                                                      \
    80, "mma.sync m16n8k16 (f16/bf16) and m16n8k8 (TF32), ldmatrix, cp.async: sm_80"
#define CONVND_NEEDS_SM90A                                                                         \
    90, "wgmma and TMA of sm_90a; supports() also refuses GPUs other than 9.0"
#define CONVND_NEEDS_CUBLAS_BF16 80, "cuBLAS bf16 GEMM (cublasGemmEx with CUDA_R_16BF)"
#define CONVND_ARCH(...) CONVND_ARCH_(__VA_ARGS__)
#define CONVND_ARCH_(sm, needs) .min_sm = (sm), .arch_needs = (needs)

/* One registry entry, `const convnd_schedule convnd_schedule_NAME`, from its host file's
 * functions PREFIX_supports, PREFIX_worth_routing and PREFIX_launch: the boilerplate written
 * once. WORKSPACE: its workspace_size function or NULL; ARCH: a CONVND_NEEDS_*; READS: its
 * CONVND_READS_* bits. */
#define CONVND_SCHEDULE_ENTRY(NAME, PREFIX, SUMMARY, SOURCES, NUM_CONFIGS, CONFIG_NAMES,           \
                              WORKSPACE, ARCH, READS)                                              \
    const convnd_schedule convnd_schedule_##NAME = {                                               \
        .name = #NAME,                                                                             \
        .summary = SUMMARY,                                                                        \
        .sources = SOURCES,                                                                        \
        .num_configs = NUM_CONFIGS,                                                                \
        .config_names = CONFIG_NAMES,                                                              \
        .supports = PREFIX##_supports,                                                             \
        .worth_routing = PREFIX##_worth_routing,                                                   \
        .workspace_size = WORKSPACE,                                                               \
        .launch = PREFIX##_launch,                                                                 \
        CONVND_ARCH(ARCH),                                                                         \
        .reads = READS,                                                                            \
    }

/* A kernel this host file launches (families/FAMILY/NAME.cu): declares both builds and defines the
 * launcher NAME_kernel, launched with CONVND_LAUNCH(&NAME_kernel, a) (core/launch_abi.h). */
#define CONVND_KERNEL(name)                                                                        \
    CONVND_DECLARE_LAUNCHER(name);                                                                 \
    static const convnd_launcher name##_kernel = CONVND_LAUNCHER_OF(name)

/* The table, in planner priority order. */
extern const convnd_schedule *const convnd_schedule_table[];
extern const int32_t convnd_schedule_table_size;

#endif
