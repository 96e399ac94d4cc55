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
    CONVND_READS_XY_VIEWS = 4      /* x and y through any strides, z only through y's (the
                                      epilogue reads z at y's offset) */
};

/* A kernel this host file launches (families/FAMILY/NAME.cu): declares both builds and defines the
 * launcher NAME_kernel, launched with CONVND_LAUNCH(&NAME_kernel, a) (core/launch_abi.h). */
#define CONVND_KERNEL(name)                                                                        \
    CONVND_DECLARE_LAUNCHER(name);                                                                 \
    static const convnd_launcher name##_kernel = CONVND_LAUNCHER_OF(name)

/* The table, in planner priority order. */
extern const convnd_schedule *const convnd_schedule_table[];
extern const int32_t convnd_schedule_table_size;

#endif
