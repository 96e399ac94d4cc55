/* The benchmark's suite CSV parser (bench/suite.c) and its problem reduction (bench/reduce.c). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reduce.h"
#include "suite.h"

#define SUITE_PATH CONVND_BENCH_SOURCE_DIR "/suites/suite.csv"

TestSuite(bench_suite, .timeout = 60);

static bench_problem parse_ok(const char *row) {
    bench_problem bp;
    char err[512] = "";
    cr_assert(bench_parse_row(row, &bp, err, sizeof err), "row '%s' rejected: %s", row, err);
    return bp;
}

/* Parses a row that must fail, and checks the message names each of `needles`. */
static void parse_fails(const char *row, const char *needle1, const char *needle2) {
    bench_problem bp;
    char err[512] = "";
    cr_assert_not(bench_parse_row(row, &bp, err, sizeof err), "row '%s' was accepted", row);
    cr_assert(strstr(err, needle1), "message '%s' does not name '%s'", err, needle1);
    if (needle2) cr_assert(strstr(err, needle2), "message '%s' does not name '%s'", err, needle2);
}

Test(bench_suite, parses_a_2d_row_with_asymmetric_padding) {
    const bench_problem bp =
        parse_ok("wan_down_asym,asym_pad,forward,4,192,96,1,240x416,3x3,2x2,1x1,0x0,1x1,bf16,cl");
    const convnd_problem *p = &bp.p;
    cr_assert_str_eq(bp.name, "wan_down_asym");
    cr_assert_str_eq(bp.family, "asym_pad");
    cr_assert_eq(p->dims, 2);
    cr_assert_eq(p->mode, CONVND_FORWARD);
    cr_assert_eq(p->N, 4);
    cr_assert_eq(p->C_in, 192);
    cr_assert_eq(p->C_out, 96);
    cr_assert_eq(p->groups, 1);
    cr_assert(p->input[0] == 240 && p->input[1] == 416);
    cr_assert(p->kernel[0] == 3 && p->kernel[1] == 3);
    cr_assert(p->stride[0] == 2 && p->stride[1] == 2);
    cr_assert(p->dilation[0] == 1 && p->dilation[1] == 1);
    cr_assert(p->pad_before[0] == 0 && p->pad_before[1] == 0);
    cr_assert(p->pad_after[0] == 1 && p->pad_after[1] == 1);
    cr_assert_eq(p->dtype, CONVND_BF16);
    cr_assert_eq(p->x_layout, CONVND_CHANNELS_LAST);
    cr_assert_eq(p->w_layout, CONVND_CHANNELS_LAST);
    cr_assert_eq(p->y_layout, CONVND_LAYOUT_AUTO);
}

Test(bench_suite, parses_1d_3d_transposed_negative_padding_and_spaces) {
    bench_problem bp = parse_ok(
        " causal , causal , forward , 1 , 8 , 8 , 8 , 100 , 4 , 1 , 2 , 6 , 0 , f16 , cf ");
    cr_assert_eq(bp.p.dims, 1);
    cr_assert_eq(bp.p.groups, 8);
    cr_assert_eq(bp.p.dilation[0], 2);
    cr_assert_eq(bp.p.pad_before[0], 6);
    cr_assert_eq(bp.p.dtype, CONVND_F16);
    cr_assert_eq(bp.p.x_layout, CONVND_CHANNELS_FIRST);

    bp = parse_ok("up,t,transposed,2,16,8,2,5x6x7,3x3x3,2x1x2,1,1x-1x0,0x2x-1,f32,cl");
    cr_assert_eq(bp.p.dims, 3);
    cr_assert_eq(bp.p.mode, CONVND_TRANSPOSED);
    cr_assert(bp.p.stride[0] == 2 && bp.p.stride[1] == 1 && bp.p.stride[2] == 2);
    /* a single value is used for every dim */
    cr_assert(bp.p.dilation[0] == 1 && bp.p.dilation[1] == 1 && bp.p.dilation[2] == 1);
    cr_assert(bp.p.pad_before[1] == -1 && bp.p.pad_after[2] == -1);
    cr_assert_eq(bp.p.dtype, CONVND_F32);
}

Test(bench_suite, rejects_bad_rows_naming_the_column_and_value) {
    parse_fails("a,b,forward,1,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,bf16", "got 14 columns", NULL);
    parse_fails("a,b,sideways,1,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,bf16,cl", "mode", "sideways");
    parse_fails("a,b,forward,1,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,f64,cl", "dtype", "f64");
    parse_fails("a,b,forward,1,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,bf16,nhwc", "layout", "nhwc");
    parse_fails("a,b,forward,1,8,8,1,8x8,3x3x3,1x1,1x1,1x1,1x1,bf16,cl", "kernel", "3x3x3");
    parse_fails("a,b,forward,1,8,8,1,8x8,3x3,1x1,1x1,1xq,1x1,bf16,cl", "pad_before", "1xq");
    parse_fails("a,b,forward,one,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,bf16,cl", "'N'", "one");
    parse_fails("a,b,forward,1,8,8,1,8x8x8x8,3,1,1,1,1,bf16,cl", "input", "8x8x8x8");
    parse_fails(",b,forward,1,8,8,1,8x8,3x3,1x1,1x1,1x1,1x1,bf16,cl", "name", "empty");
    /* parsed, but the problem breaks the SPEC: the validator's message comes through */
    parse_fails("bad,b,forward,1,8,8,3,8x8,3x3,1x1,1x1,1x1,1x1,bf16,cl", "bad", "groups=3");
    parse_fails("bad2,b,forward,1,8,8,1,2x2,5x5,1x1,1x1,0x0,0x0,bf16,cl", "bad2", "invalid");
}

Test(bench_suite, format_row_round_trips) {
    const char *rows[] = {
        "resnet50_stem_7x7,stem,forward,32,3,64,1,224x224,7x7,2x2,1x1,3x3,3x3,bf16,cl",
        "causal_dw_conv1d,causal,forward,1,12288,12288,12288,16384,4,1,1,3,0,bf16,cl",
        "up,t,transposed,2,16,8,2,5x6x7,3x3x3,2x1x2,1x1x1,1x-1x0,0x2x-1,f32,cf",
        "g,b,wgrad,2,8,8,2,9x9,3x3,2x2,1x1,1x1,0x0,f16,cl",
        "d,b,dgrad,2,8,4,1,8x8,3x3,2x2,1x1,1x1,1x1,bf16,cf"};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const bench_problem bp = parse_ok(rows[i]);
        char buf[512];
        cr_assert_str_eq(bench_format_row(&bp, buf, sizeof buf), rows[i]);
    }
}

Test(bench_suite, loads_the_shipped_suite) {
    bench_problem *list = NULL;
    int n = 0;
    char err[1024] = "";
    cr_assert(bench_load_suite(SUITE_PATH, &list, &n, err, sizeof err), "%s", err);
    cr_assert_eq(n, 34, "the suite holds 34 problems, read %d", n);
    cr_assert_str_eq(list[0].name, "resnet50_3x3_56");
    cr_assert_str_eq(list[n - 1].name, "resnet50_3x3_14_f32_wgrad");
    int transposed = 0, dims3 = 0, dims1 = 0, wgrad = 0, dgrad = 0;
    for (int i = 0; i < n; ++i) {
        transposed += list[i].p.mode == CONVND_TRANSPOSED;
        wgrad += list[i].p.mode == CONVND_WGRAD;
        dgrad += list[i].dgrad;
        dims3 += list[i].p.dims == 3;
        dims1 += list[i].p.dims == 1;
    }
    cr_assert_eq(transposed, 7, "2 transposed rows and 5 dgrad rows (run transposed)");
    cr_assert_eq(wgrad, 8);
    cr_assert_eq(dgrad, 5);
    cr_assert_eq(dims3, 3);
    cr_assert_eq(dims1, 3);
    free(list);
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_suite(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/convnd_bench_suite_XXXXXX");
    const int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

Test(bench_suite, skips_comments_blank_lines_and_the_header) {
    const char *path = temp_suite("# a comment\n\n" BENCH_CSV_HEADER "\n"
                                  "  # indented comment\n"
                                  "p1,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f32,cf\n"
                                  "\n"
                                  "p2,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f32,cf\n");
    bench_problem *list = NULL;
    int n = 0;
    char err[512] = "";
    cr_assert(bench_load_suite(path, &list, &n, err, sizeof err), "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(list[1].name, "p2");
    free(list);
    unlink(path);
}

Test(bench_suite, file_errors_name_the_file_and_line) {
    const char *path = temp_suite("# header comment\n"
                                  "p1,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f32,cf\n"
                                  "p1,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f32,cf\n");
    bench_problem *list = NULL;
    int n = 0;
    char err[512] = "";
    cr_assert_not(bench_load_suite(path, &list, &n, err, sizeof err));
    cr_assert(strstr(err, path) && strstr(err, ":3:") && strstr(err, "twice"), "%s", err);
    unlink(path);

    path = temp_suite("p1,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f32,cf\n"
                      "p2,f,forward,1,4,4,1,8x8,3x3,1x1,1x1,1x1,1x1,f31,cf\n");
    cr_assert_not(bench_load_suite(path, &list, &n, err, sizeof err));
    cr_assert(strstr(err, ":2:") && strstr(err, "f31"), "%s", err);
    unlink(path);

    cr_assert_not(bench_load_suite("/nonexistent/suite.csv", &list, &n, err, sizeof err));
    cr_assert(strstr(err, "/nonexistent/suite.csv"), "%s", err);
}

/* ---- reduction ------------------------------------------------------------------------------ */

static void expect_same_parameters(const convnd_problem *a, const convnd_problem *b,
                                   const char *name) {
    cr_assert_eq(a->dims, b->dims, "%s", name);
    cr_assert_eq(a->mode, b->mode, "%s", name);
    cr_assert_eq(a->dtype, b->dtype, "%s", name);
    cr_assert_eq(a->x_layout, b->x_layout, "%s", name);
    for (int32_t t = 0; t < a->dims; ++t) {
        cr_assert_eq(a->kernel[t], b->kernel[t], "%s", name);
        cr_assert_eq(a->stride[t], b->stride[t], "%s", name);
        cr_assert_eq(a->dilation[t], b->dilation[t], "%s", name);
        cr_assert_eq(a->pad_before[t], b->pad_before[t], "%s", name);
        cr_assert_eq(a->pad_after[t], b->pad_after[t], "%s", name);
        cr_assert_leq(b->input[t], a->input[t], "%s: dim %d grew", name, (int)t);
    }
    /* channels per group kept (or capped), grouped stays grouped */
    cr_assert_eq(a->groups > 1, b->groups > 1, "%s", name);
    cr_assert_eq(a->groups == a->C_in, b->groups == b->C_in, "%s: depthwise-ness", name);
}

Test(bench_suite, reductions_keep_the_parameters_and_fit_their_budgets) {
    bench_problem *list = NULL;
    int n = 0;
    char err[1024] = "";
    cr_assert(bench_load_suite(SUITE_PATH, &list, &n, err, sizeof err), "%s", err);
    for (int i = 0; i < n; ++i) {
        const convnd_problem *p = &list[i].p;
        convnd_problem v, s;
        cr_assert_eq(bench_reduce(p, &bench_validation_limits, &v), CONVND_OK, "%s: %s",
                     list[i].name, convnd_last_error());
        expect_same_parameters(p, &v, list[i].name);
        cr_assert_eq(v.C_in, p->C_in, "%s: validation keeps the channels", list[i].name);
        cr_assert_leq(v.N, 2);
        cr_assert_eq(bench_reduce(p, &bench_small_limits, &s), CONVND_OK, "%s: %s", list[i].name,
                     convnd_last_error());
        expect_same_parameters(p, &s, list[i].name);
        cr_assert_leq(s.C_in, 32, "%s", list[i].name);
        cr_assert_leq(s.C_out, 32, "%s", list[i].name);
        cr_assert_leq(bench_problem_macs(&s), bench_small_limits.max_macs, "%s: %g MACs",
                      list[i].name, bench_problem_macs(&s));
        /* the remainder (I + P0 + P1 - E) mod S is kept: an unused trailing row stays unused */
        for (int32_t t = 0; t < p->dims && p->mode == CONVND_FORWARD; ++t) {
            const int64_t E = p->dilation[t] * (p->kernel[t] - 1) + 1;
            cr_assert_eq((p->input[t] + p->pad_before[t] + p->pad_after[t] - E) % p->stride[t],
                         (s.input[t] + s.pad_before[t] + s.pad_after[t] - E) % s.stride[t],
                         "%s dim %d", list[i].name, (int)t);
        }
    }
    free(list);
}

Test(bench_suite, reduction_of_a_small_problem_changes_nothing) {
    const bench_problem bp = parse_ok("tiny,f,forward,1,4,6,2,7x5,3x2,2x1,1x2,1x0,-1x1,f32,cf");
    convnd_problem v;
    cr_assert_eq(bench_reduce(&bp.p, &bench_validation_limits, &v), CONVND_OK);
    cr_assert(v.N == bp.p.N && v.C_in == bp.p.C_in && v.C_out == bp.p.C_out &&
              v.groups == bp.p.groups);
    for (int32_t t = 0; t < bp.p.dims; ++t)
        cr_assert_eq(v.input[t], bp.p.input[t]);
    expect_same_parameters(&bp.p, &v, "tiny");
}
