/* Result rows and their outputs: an aligned table on stdout, CSV and JSON with every figure. */
#ifndef CONVND_BENCH_REPORT_H
#define CONVND_BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "candidate.h"
#include "ceilings.h"
#include "suite.h"

typedef enum bench_status {
    BENCH_OK = 0,      /* validated and timed */
    BENCH_FAILED = 1,  /* validation failed: never timed */
    BENCH_SKIPPED = 2, /* the candidate does not run this problem (reason in note) */
    BENCH_ERROR = 3    /* the candidate returned an error (message in note) */
} bench_status;

const char *bench_status_name(bench_status s);

typedef struct bench_row {
    char problem[BENCH_NAME_LEN], family[BENCH_NAME_LEN];
    char definition[384]; /* the problem as a suite CSV row (after --small reduction) */
    char device[16];      /* "GPU" or "EMULATED" */
    char candidate[BENCH_LABEL_LEN], series[BENCH_LABEL_LEN], plan[BENCH_LABEL_LEN];
    char note[320];
    int32_t is_peer;
    bench_status status;
    convnd_dtype dtype;
    double flops, bytes; /* SPEC counts of the timed problem */
    /* validation on the reduced copy */
    char validated_on[384];
    double val_rel_l2, val_worst;
    /* timing; NaN when not timed */
    double median_ms, min_ms, max_ms;
    int32_t reps, sets;
    size_t workspace_bytes;
    double tflops, gbps;
    double pct_compute, pct_bandwidth; /* of the measured ceilings; NaN when not measured */
    double vs_best_peer;               /* best peer's median / this median (> 1: faster) */
    double vs_baseline;                /* baseline's median / this median (the plot's bar) */
} bench_row;

typedef struct bench_meta {
    char device[160]; /* "NVIDIA H200" or "emulated device (CPU)" */
    int32_t emulated;
    char date[40];                  /* UTC, ISO 8601 */
    char commit[64];                /* $CONVND_COMMIT when set */
    char baseline[BENCH_LABEL_LEN]; /* the plot's reference series */
    char host_blas[64];
    size_t l2_bytes;
    int32_t small; /* the --small reduction of the suite */
    uint64_t seed; /* --seed to reproduce the data (problem i uses seed + i + 1) */
    bench_ceilings ceilings;
} bench_meta;

/* Sets the row's note (printf-style, truncated to fit). */
void bench_row_note(bench_row *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Row initialised: NaN metrics, status OK. */
void bench_row_init(bench_row *r);

/* The row's display name: "auto -> igemm:t128" for the planner's row, else the label. */
const char *bench_row_display(const bench_row *r, char *buf, size_t len);

void bench_print_header(FILE *f, const bench_meta *m);
void bench_print_row(FILE *f, const bench_row *r);
/* The closing summary: counts per status and the note on emulated timings. */
void bench_print_summary(FILE *f, const bench_row *rows, int32_t n, const bench_meta *m);

/* Return 0 with a message on stderr when the file cannot be written. */
int bench_write_csv(const char *path, const bench_row *rows, int32_t n, const bench_meta *m);
int bench_write_json(const char *path, const bench_row *rows, int32_t n, const bench_meta *m);
/* A Markdown summary for bench/RESULTS.md: the run's header, one table row per timed candidate,
 * and the rows that FAILED or errored. */
int bench_write_markdown(const char *path, const bench_row *rows, int32_t n, const bench_meta *m);

#endif
