/* Benchmark problems: a named convnd_problem, read from a suite CSV row (format of
 * bench/suites/suite.csv) or from the command line in the same format. */
#ifndef CONVND_BENCH_SUITE_H
#define CONVND_BENCH_SUITE_H

#include <stddef.h>
#include "convnd.h"

#define BENCH_NAME_LEN 64

typedef struct bench_problem {
    char name[BENCH_NAME_LEN];
    char family[BENCH_NAME_LEN];
    convnd_problem p;
    /* mode dgrad: p is the data gradient (convnd_bind_dgrad) of the forward row in `forward` */
    int32_t dgrad;
    convnd_problem forward;
} bench_problem;

/* The CSV columns, in order. */
#define BENCH_CSV_HEADER                                                                           \
    "name,family,mode,N,C_in,C_out,groups,input,kernel,stride,dilation,pad_before,pad_after,"      \
    "dtype,layout"

/* Parses one data row (no comment, no header). Sizes are 'x'-separated, outermost first; the
 * input decides the number of spatial dims, and kernel/stride/dilation/pads must give that many
 * values (or one, used for every dim). mode: forward|transposed|wgrad (the weight gradient of
 * the forward row)|dgrad (the data gradient of the forward row, run as its transposed
 * problem); dtype: f32|f16|bf16; layout:
 * cl (channels-last x and w) | cf (channels-first). The problem is validated (SPEC §8).
 * On error returns 0 with a message naming the column and value in err. */
int bench_parse_row(const char *line, bench_problem *out, char *err, size_t err_len);

/* Reads a suite file: '#' starts a comment line, blank lines and a header row (first field
 * "name") are skipped. On success *problems is malloc'ed (caller frees) and *count set. On error
 * returns 0 and err names the file, line and problem. */
int bench_load_suite(const char *path, bench_problem **problems, int *count, char *err,
                     size_t err_len);

/* Writes the problem back as a CSV row (what bench_parse_row reads). Returns buf. */
const char *bench_format_row(const bench_problem *bp, char *buf, size_t len);

/* "56x56" for v[0..dims-1]. Returns buf. */
const char *bench_format_dims(const int64_t *v, int32_t dims, char *buf, size_t len);

#endif
