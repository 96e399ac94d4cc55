/* convnd-selftest's engine: every schedule:config the registry lists, run on the active device on
 * small problems it supports (one per mode x dtype x layout class; the forced-schedule suite's
 * feature table plus weight-gradient and view rows), each compared with the CPU reference and
 * with the direct schedule on the same device under the forced-schedule tests' tolerances
 * (tests/support/test_tolerance.h); weight gradients also run twice per thread order and must be
 * bit-identical. Failures are appended to the errata file (docs/errata.md), so that the planner
 * never routes to them on this device again. */
#ifndef CONVND_SELFTEST_H
#define CONVND_SELFTEST_H

#include <stdint.h>
#include <stdio.h>

#include "convnd.h"
#include "test_conv_case.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum selftest_level {
    SELFTEST_QUICK,   /* one case per configuration */
    SELFTEST_DEFAULT, /* one case per mode x dtype x layout (x views) class */
    SELFTEST_FULL     /* every case the configuration supports */
} selftest_level;

/* Runs spec on c instead of conv_nd (test seam: tests/test_selftest.c launches a planted-bug
 * kernel for one configuration); returns the run's status, y downloaded into c->hy. */
typedef convnd_status (*selftest_conv_runner)(void *ctx, test_conv_case *c, const char *spec);

typedef struct selftest_options {
    selftest_level level;
    const char *only;   /* comma-separated schedule[:config] list; NULL: every one */
    const char *errata; /* the file failures are appended to; NULL: convnd_errata_path's */
    int32_t no_errata;  /* 1: write nothing */
    uint64_t seed;
    FILE *out;      /* the table and the summary (NULL: stdout) */
    FILE *progress; /* one updating line while it runs (NULL: none) */
    selftest_conv_runner run;
    void *run_ctx;
} selftest_options;

typedef struct selftest_summary {
    int32_t configs, cases, passed, failed;
    int32_t errata_lines; /* lines appended to the errata file */
    char errata[1024];    /* that file ("" when none was written) */
    double seconds;
} selftest_summary;

/* Runs the self-test. CONVND_OK when it ran (failures or not: see the summary); another status
 * when it could not (a bad `only`, an errata file that cannot be written). The errata in effect
 * are ignored while it runs (every configuration is tried) and restored after. */
convnd_status selftest_run(const selftest_options *opts, selftest_summary *summary);

#ifdef __cplusplus
}
#endif

#endif
