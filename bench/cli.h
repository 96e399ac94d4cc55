/* convnd-bench's command line. */
#ifndef CONVND_BENCH_CLI_H
#define CONVND_BENCH_CLI_H

#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_CLI_PROBLEMS 64

typedef struct bench_cli {
    int32_t list, help, /* list: 1 --list, 2 --list-markdown */ small, every_config, peers, auto_row, force, quiet, ceilings, show_skipped;
    const char *suite;                            /* NULL: the default suite, unless problems */
    const char *problems[BENCH_MAX_CLI_PROBLEMS]; /* --problem rows */
    int32_t num_problems;
    const char *schedules; /* --schedule list */
    const char *device;    /* "gpu", "emulated" or NULL (auto) */
    const char *out_dir;
    const char *filter; /* substring of problem names */
    uint64_t seed;
    int32_t have_seed;
    int32_t reps;          /* 0: the device's default */
    int32_t host_overhead; /* --host-overhead N: calls per batch; 0: off */
    int32_t copy_free;     /* --copy-free: the copy-free rows (bench/copy_free.h) instead */
    int32_t why;           /* --why: each problem's planner reasoning (convnd_plan_explain) */
} bench_cli;

/* Parses argv. Returns 1 on success; 0 with a message in err (usage errors). */
int bench_parse_cli(int argc, char **argv, bench_cli *cli, char *err, size_t err_len);

void bench_print_usage(FILE *f);

#endif
