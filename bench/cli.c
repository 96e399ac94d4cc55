/* Command-line parsing (bench/cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void bench_print_usage(FILE *f) {
    fputs("usage: convnd-bench [options]\n"
          "  --list               every schedule and configuration, and the peers; then exit\n"
          "  --list-markdown      the README's schedule table (name, sources, summary); then exit\n"
          "  --suite FILE         problems from a suite CSV (default: bench/suites/suite.csv)\n"
          "  --problem ROW        one problem in the suite's CSV format (repeatable), e.g.\n"
          "                       --problem \"my3x3,test,forward,8,64,64,1,56x56,3x3,1x1,1x1,1x1,"
          "1x1,bf16,cl\"\n"
          "  --small              the reduced suite (same parameters, small N, spatial size and\n"
          "                       channels): the emulated device runs it in a few minutes\n"
          "  --schedule LIST      only these schedules (comma-separated name[:config])\n"
          "  --configs            one row per configuration instead of per schedule\n"
          "  --no-peers           no cuDNN / pad + conv rows\n"
          "  --no-auto            no row for the planner's choice\n"
          "  --no-ceilings        skip measuring the copy/GEMM ceilings (no % columns)\n"
          "  --filter TEXT        only problems whose name contains TEXT\n"
          "  --device gpu|emulated  (default: the GPU when there is one)\n"
          "  --out DIR            write results.csv/.json/.md, plot.dat and plot.png there\n"
          "  --seed N             data seed (default: a fresh one per run)\n"
          "  --reps N             timed repeats (default: GPU 10-100 for ~200 ms, emulated 1-3)\n"
          "  --force              run the full suite on the emulated device anyway (hours)\n"
          "  --quiet              no progress lines on stderr\n"
          "  --host-overhead N    only the host cost up to the launch of a bare launch,\n"
          "                       convnd_plan_execute and conv_nd, N calls per batch\n"
          "  --copy-free          only the copy-free rows: a prefix/state and a channel-slice\n"
          "                       output against cat/pad/copy peers (small shapes with --small\n"
          "                       or on the emulated device)\n"
          "  --why                for each problem (--problem, --suite, --filter), every\n"
          "                       schedule:config's verdict (supports, worth routing, or its\n"
          "                       reason to refuse) and the planner's choice; then exit\n"
          "  --show-skipped       also print the rows of candidates that do not support a problem\n"
          "                       (always in results.csv/json, with the schedule's reason)\n"
          "Exit status: 0 all rows ok or skipped, 1 some row FAILED or errored, 2 usage error.\n",
          f);
}

static int need_value(int i, int argc, char **argv, char *err, size_t err_len) {
    if (i + 1 < argc) return 1;
    snprintf(err, err_len, "%s needs a value", argv[i]);
    return 0;
}

int bench_parse_cli(int argc, char **argv, bench_cli *cli, char *err, size_t err_len) {
    memset(cli, 0, sizeof *cli);
    cli->peers = 1;
    cli->auto_row = 1;
    cli->ceilings = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--list") == 0)
            cli->list = 1;
        else if (strcmp(a, "--list-markdown") == 0)
            cli->list = 2;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            cli->help = 1;
        else if (strcmp(a, "--host-overhead") == 0) {
            if (!need_value(i, argc, argv, err, err_len)) return 0;
            cli->host_overhead = atoi(argv[++i]);
            if (cli->host_overhead < 1) {
                snprintf(err, err_len, "--host-overhead %s: expected a count >= 1", argv[i]);
                return 0;
            }
        } else if (strcmp(a, "--small") == 0)
            cli->small = 1;
        else if (strcmp(a, "--configs") == 0)
            cli->every_config = 1;
        else if (strcmp(a, "--no-peers") == 0)
            cli->peers = 0;
        else if (strcmp(a, "--no-auto") == 0)
            cli->auto_row = 0;
        else if (strcmp(a, "--no-ceilings") == 0)
            cli->ceilings = 0;
        else if (strcmp(a, "--force") == 0)
            cli->force = 1;
        else if (strcmp(a, "--quiet") == 0)
            cli->quiet = 1;
        else if (strcmp(a, "--copy-free") == 0)
            cli->copy_free = 1;
        else if (strcmp(a, "--show-skipped") == 0)
            cli->show_skipped = 1;
        else if (strcmp(a, "--why") == 0)
            cli->why = 1;
        else if (strcmp(a, "--suite") == 0 || strcmp(a, "--problem") == 0 ||
                 strcmp(a, "--schedule") == 0 || strcmp(a, "--device") == 0 ||
                 strcmp(a, "--out") == 0 || strcmp(a, "--filter") == 0 ||
                 strcmp(a, "--seed") == 0 || strcmp(a, "--reps") == 0) {
            if (!need_value(i, argc, argv, err, err_len)) return 0;
            const char *v = argv[++i];
            if (strcmp(a, "--suite") == 0)
                cli->suite = v;
            else if (strcmp(a, "--schedule") == 0)
                cli->schedules = v;
            else if (strcmp(a, "--out") == 0)
                cli->out_dir = v;
            else if (strcmp(a, "--filter") == 0)
                cli->filter = v;
            else if (strcmp(a, "--device") == 0) {
                if (strcmp(v, "gpu") != 0 && strcmp(v, "emulated") != 0) {
                    snprintf(err, err_len, "--device %s: expected gpu or emulated", v);
                    return 0;
                }
                cli->device = v;
            } else if (strcmp(a, "--problem") == 0) {
                if (cli->num_problems >= BENCH_MAX_CLI_PROBLEMS) {
                    snprintf(err, err_len, "more than %d --problem rows", BENCH_MAX_CLI_PROBLEMS);
                    return 0;
                }
                cli->problems[cli->num_problems++] = v;
            } else {
                char *end = NULL;
                errno = 0;
                const unsigned long long n = strtoull(v, &end, 10);
                if (errno || *end || !*v || (strcmp(a, "--reps") == 0 && (n < 1 || n > 200))) {
                    snprintf(err, err_len, "%s %s: expected %s", a, v,
                             strcmp(a, "--reps") == 0 ? "1 to 200" : "a non-negative integer");
                    return 0;
                }
                if (strcmp(a, "--seed") == 0)
                    cli->seed = n, cli->have_seed = 1;
                else
                    cli->reps = (int32_t)n;
            }
        } else {
            snprintf(err, err_len, "unknown option '%s' (see --help)", a);
            return 0;
        }
    }
    if (cli->suite && cli->num_problems) {
        snprintf(err, err_len, "give --suite or --problem, not both");
        return 0;
    }
    return 1;
}
