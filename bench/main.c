/* convnd-bench: every convnd schedule against cuDNN, cuBLAS (im2col) and a materialized pad, on
 * real layer shapes; validated against the CPU reference before anything is timed. See
 * bench/README.md for how to run it and how to read the numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "candidate.h"
#include "ceilings.h"
#include "cli.h"
#include "copy_free.h"
#include "host_overhead.h"
#include "driver.h"
#include "gemm_backend.h"
#include "gpu_runtime.h"
#include "plot.h"
#include "registry.h"
#include "reduce.h"
#include "report.h"
#include "suite.h"

#ifndef CONVND_BENCH_SOURCE_DIR
#define CONVND_BENCH_SOURCE_DIR "bench"
#endif

#define BENCH_MAX_CANDIDATES 128

/* Above this many multiply-adds in total, the emulated device would run for hours. */
static const double emulated_macs_limit = 5e8;

static void list_everything(void) {
    printf("schedules (name:config; 'convnd-bench --schedule NAME[:CONFIG]' forces one):\n");
    for (int32_t i = 0; i < convnd_schedule_count(); ++i)
        for (int32_t c = 0; c < convnd_schedule_config_count(i); ++c)
            printf("  %s:%s%s\n", convnd_schedule_name(i), convnd_schedule_config_name(i, c),
                   strcmp(convnd_schedule_name(i), "cublas_im2col") == 0
                       ? "    (peer: explicit im2col + cuBLAS GEMM)"
                       : "");
    printf("rows besides the schedules:\n");
    printf("  auto          the planner's choice, shown as 'auto -> schedule:config'\n");
    printf("  pad + conv    (peer) a materialized zero-pad copy, then the planner's schedule on "
           "the zero-padded problem; problems with padding\n");
    printf("  cuDNN         (peer) the fastest algorithm cudnnFind returns, after a "
           "materialized pad copy where cuDNN cannot express the padding; GPU only, %s\n",
           bench_have_cudnn() ? "linked in this build" : "NOT in this build (cuDNN not found)");
}

/* --why: the library's own account of each problem's routing (convnd_plan_explain). */
static int explain_problems(const bench_problem *problems, int n) {
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        size_t needed = 0;
        convnd_status st = convnd_plan_explain(&problems[i].p, NULL, NULL, 0, &needed);
        char *text = needed ? malloc(needed) : NULL;
        if (text) st = convnd_plan_explain(&problems[i].p, NULL, text, needed, NULL);
        if (!text || st != CONVND_OK) {
            fprintf(stderr, "convnd-bench: --why %s: %s\n", problems[i].name,
                    text ? convnd_last_error() : "out of memory");
            bad = 1;
        } else {
            printf("== %s\n%s", problems[i].name, text);
        }
        free(text);
    }
    return bad;
}

static int mkdir_p(const char *dir) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; ++p) {
        const char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                perror(buf);
                return 0;
            }
            *p = c;
        }
        if (c == '\0') return 1;
    }
}

static void fill_meta(bench_meta *m, int emulated) {
    memset(m, 0, sizeof *m);
    m->emulated = emulated;
    snprintf(m->device, sizeof m->device, "%s",
             emulated ? "the emulated device (kernels on the CPU)" : convnd_device_name());
    const time_t now = time(NULL);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    const char *commit = getenv("CONVND_COMMIT");
    snprintf(m->commit, sizeof m->commit, "%s", commit ? commit : "");
    snprintf(m->baseline, sizeof m->baseline, "%s",
             emulated || !bench_have_cudnn() ? "direct" : "cuDNN");
    snprintf(m->host_blas, sizeof m->host_blas, "%s", convnd_gemm_host_backend());
    m->l2_bytes = emulated ? 0 : bench_gpu_l2_bytes();
}

/* The problems to run: --problem rows, else the suite; --filter applied. */
static int load_problems(const bench_cli *cli, bench_problem **out, int *count) {
    char err[1024];
    bench_problem *list = NULL;
    int n = 0;
    if (cli->num_problems) {
        list = calloc((size_t)cli->num_problems, sizeof *list);
        if (!list) return 0;
        for (int i = 0; i < cli->num_problems; ++i)
            if (!bench_parse_row(cli->problems[i], &list[n++], err, sizeof err)) {
                fprintf(stderr, "convnd-bench: --problem '%s': %s\n", cli->problems[i], err);
                free(list);
                return 0;
            }
    } else {
        const char *path = cli->suite ? cli->suite : CONVND_BENCH_SOURCE_DIR "/suites/suite.csv";
        if (!bench_load_suite(path, &list, &n, err, sizeof err)) {
            fprintf(stderr, "convnd-bench: %s\n", err);
            return 0;
        }
    }
    int kept = 0;
    for (int i = 0; i < n; ++i)
        if (!cli->filter || strstr(list[i].name, cli->filter)) list[kept++] = list[i];
    if (kept == 0) {
        fprintf(stderr, "convnd-bench: no problem matches --filter '%s'\n", cli->filter);
        free(list);
        return 0;
    }
    *out = list;
    *count = kept;
    return 1;
}

static int write_outputs(const char *dir, const bench_row *rows, int32_t n, const bench_meta *m) {
    if (!mkdir_p(dir)) return 0;
    char csv[1200], json[1200], md[1200], dat[1200], png[1200], why[2048];
    snprintf(csv, sizeof csv, "%s/results.csv", dir);
    snprintf(json, sizeof json, "%s/results.json", dir);
    snprintf(md, sizeof md, "%s/results.md", dir);
    snprintf(dat, sizeof dat, "%s/plot.dat", dir);
    snprintf(png, sizeof png, "%s/plot.png", dir);
    int ok = bench_write_csv(csv, rows, n, m) && bench_write_json(json, rows, n, m) &&
             bench_write_markdown(md, rows, n, m) && bench_write_plot_data(dat, rows, n);
    char title[256];
    snprintf(title, sizeof title, "convnd-bench on %s%s", m->device,
             m->emulated ? " (EMULATED: CPU timings, not GPU timings)" : "");
    if (ok && !bench_render_plot(dat, png, m->baseline, title, why, sizeof why)) {
        fprintf(stderr, "convnd-bench: no plot: %s\n", why);
        png[0] = '\0';
    }
    if (ok) printf("wrote %s, %s, %s, %s%s%s\n", csv, json, md, dat, png[0] ? ", " : "", png);
    return ok;
}

/* --copy-free: the copy-free rows alone (small shapes on the emulated device unless --force). */
static int run_copy_free(const bench_cli *cli, int emulated) {
    bench_timing_config timing = emulated ? bench_timing_emulated : bench_timing_gpu;
    if (cli->reps) timing.min_reps = timing.max_reps = cli->reps;
    const uint64_t seed = cli->have_seed ? cli->seed : (uint64_t)time(NULL);
    bench_copy_free_row rows[BENCH_COPY_FREE_ROWS];
    const int32_t bad =
        bench_copy_free_run(cli->small || (emulated && !cli->force), &timing, seed, rows);
    bench_copy_free_print(stdout, rows, BENCH_COPY_FREE_ROWS, emulated ? "EMULATED" : "GPU");
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    bench_cli cli;
    char err[1024];
    if (!bench_parse_cli(argc, argv, &cli, err, sizeof err)) {
        fprintf(stderr, "convnd-bench: %s\n", err);
        bench_print_usage(stderr);
        return 2;
    }
    if (cli.help) {
        bench_print_usage(stdout);
        return 0;
    }
    if (cli.device &&
        convnd_set_device(strcmp(cli.device, "gpu") == 0 ? CONVND_DEVICE_GPU
                                                         : CONVND_DEVICE_EMULATED) != CONVND_OK) {
        fprintf(stderr, "convnd-bench: --device %s: %s\n", cli.device, convnd_last_error());
        return 2;
    }
    if (cli.list == 2) { /* the README's schedule table */
        const size_t n = convnd_schedule_table_markdown(NULL, 0);
        char *table = malloc(n + 1);
        if (!table) return 1;
        convnd_schedule_table_markdown(table, n + 1);
        fputs(table, stdout);
        free(table);
        return 0;
    }
    if (cli.list) {
        list_everything();
        return 0;
    }
    const int emulated = convnd_active_device() != CONVND_DEVICE_GPU;
    if (cli.copy_free) return run_copy_free(&cli, emulated);

    bench_problem *problems = NULL;
    int np = 0;
    if (!load_problems(&cli, &problems, &np)) return 2;
    if (cli.host_overhead) {
        const int bad = bench_host_overhead(problems, np, cli.host_overhead, stdout);
        free(problems);
        return bad ? 1 : 0;
    }
    if (cli.why) {
        const int bad = explain_problems(problems, np);
        free(problems);
        return bad ? 1 : 0;
    }

    bench_config cfg = {.small = cli.small,
                        .timing = emulated ? bench_timing_emulated : bench_timing_gpu,
                        .max_sets = BENCH_MAX_SETS,
                        .device_label = emulated ? "EMULATED" : "GPU",
                        .log = cli.quiet ? NULL : stderr};
    cfg.seed = cli.have_seed ? cli.seed : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    if (cli.reps) cfg.timing.min_reps = cfg.timing.max_reps = cli.reps;

    if (emulated && !cli.small && !cli.force) {
        double macs = 0.0;
        for (int i = 0; i < np; ++i)
            macs += bench_problem_macs(&problems[i].p);
        if (macs > emulated_macs_limit) {
            fprintf(stderr,
                    "convnd-bench: no GPU here: these problems take %.3g multiply-adds, hours on "
                    "the emulated device. Use --small (the reduced suite), or --force.\n",
                    macs);
            free(problems);
            return 2;
        }
    }

    bench_candidate cands[BENCH_MAX_CANDIDATES];
    int32_t nc = 0;
    const bench_selection sel = {.schedules = cli.schedules,
                                 .every_config = cli.every_config,
                                 .peers = cli.peers,
                                 .auto_row = cli.auto_row};
    if (!bench_candidates(&sel, cands, BENCH_MAX_CANDIDATES, &nc, err, sizeof err)) {
        fprintf(stderr, "convnd-bench: %s\n", err);
        free(problems);
        return 2;
    }

    bench_meta meta;
    fill_meta(&meta, emulated);
    meta.small = cli.small;
    meta.seed = cfg.seed;
    cfg.baseline = meta.baseline;
    cfg.l2_bytes = meta.l2_bytes;
    if (!emulated && cli.ceilings) {
        if (cfg.log) fprintf(cfg.log, "convnd-bench: measuring the copy and GEMM ceilings\n");
        if (bench_measure_ceilings(&cfg.ceilings) != CONVND_OK)
            fprintf(stderr, "convnd-bench: measuring the ceilings failed: %s\n",
                    convnd_last_error());
    }
    meta.ceilings = cfg.ceilings;

    bench_row *rows = calloc((size_t)np * (size_t)nc, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "convnd-bench: out of memory\n");
        free(problems);
        return 2;
    }
    bench_print_header(stdout, &meta);
    fflush(stdout);
    int32_t nrows = 0, bad = 0;
    for (int i = 0; i < np; ++i) {
        bench_row *r = &rows[nrows];
        cfg.seed += 1; /* fresh data per problem */
        bench_run_problem(&problems[i], cands, nc, &cfg, r);
        for (int32_t j = 0; j < nc; ++j) {
            if (r[j].status != BENCH_SKIPPED || cli.show_skipped) bench_print_row(stdout, &r[j]);
            bad |= r[j].status == BENCH_FAILED || r[j].status == BENCH_ERROR;
        }
        fflush(stdout);
        nrows += nc;
    }
    bench_print_summary(stdout, rows, nrows, &meta);
    int ok = 1;
    if (cli.out_dir) ok = write_outputs(cli.out_dir, rows, nrows, &meta);
    free(rows);
    free(problems);
    return !ok ? 2 : bad ? 1 : 0;
}
