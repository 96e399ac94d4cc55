/* Suite CSV parsing and formatting (bench/suite.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"
#include "convnd_bind.h"

#define BENCH_COLUMNS 15
static const char *const column_names[BENCH_COLUMNS] = {
    "name",   "family", "mode",     "N",          "C_in",      "C_out", "groups", "input",
    "kernel", "stride", "dilation", "pad_before", "pad_after", "dtype", "layout"};

/* Trims spaces at both ends, in place. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        ++s;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        --e;
    *e = '\0';
    return s;
}

static int fail(char *err, size_t err_len, const char *column, const char *value,
                const char *what) {
    snprintf(err, err_len, "column '%s' = '%s': %s", column, value, what);
    return 0;
}

/* A signed decimal int64, the whole string. */
static int parse_int(const char *s, int64_t *v) {
    if (!*s) return 0;
    char *end = NULL;
    errno = 0;
    const long long x = strtoll(s, &end, 10);
    if (errno || *end) return 0;
    *v = (int64_t)x;
    return 1;
}

/* 'x'-separated list; returns the count (0 on a bad entry or more than CONVND_MAX_DIMS). */
static int parse_list(const char *s, int64_t v[CONVND_MAX_DIMS]) {
    char buf[128];
    if (strlen(s) >= sizeof buf) return 0;
    strcpy(buf, s);
    int n = 0;
    for (char *tok = buf;; ++n) {
        char *x = strchr(tok, 'x');
        if (x) *x = '\0';
        if (n >= CONVND_MAX_DIMS || !parse_int(trim(tok), &v[n])) return 0;
        if (!x) return n + 1;
        tok = x + 1;
    }
}

/* A per-dim column: `dims` values or one, broadcast. */
static int parse_dims_column(const char *column, const char *s, int32_t dims, int64_t *out,
                             char *err, size_t err_len) {
    int64_t v[CONVND_MAX_DIMS];
    const int n = parse_list(s, v);
    if (n == 0)
        return fail(err, err_len, column, s, "expected integers separated by 'x' (at most 3)");
    if (n != dims && n != 1) {
        char what[128];
        snprintf(what, sizeof what, "%d values, but the input has %d spatial dims", n, (int)dims);
        return fail(err, err_len, column, s, what);
    }
    for (int32_t t = 0; t < dims; ++t)
        out[t] = v[n == 1 ? 0 : t];
    return 1;
}

static int parse_scalar_column(const char *column, const char *s, int64_t *out, char *err,
                               size_t err_len) {
    if (!parse_int(s, out)) return fail(err, err_len, column, s, "expected an integer");
    return 1;
}

static int copy_name(const char *column, const char *s, char *dst, char *err, size_t err_len) {
    if (!*s) return fail(err, err_len, column, s, "must not be empty");
    if (strlen(s) >= BENCH_NAME_LEN) return fail(err, err_len, column, s, "longer than 63 chars");
    strcpy(dst, s);
    return 1;
}

int bench_parse_row(const char *line, bench_problem *out, char *err, size_t err_len) {
    char buf[1024];
    if (strlen(line) >= sizeof buf) {
        snprintf(err, err_len, "row longer than %zu chars", sizeof buf - 1);
        return 0;
    }
    strcpy(buf, line);
    char *f[BENCH_COLUMNS + 1];
    int n = 0;
    for (char *tok = buf; tok && n <= BENCH_COLUMNS;) {
        char *comma = strchr(tok, ',');
        if (comma) *comma = '\0';
        f[n++] = trim(tok);
        tok = comma ? comma + 1 : NULL;
    }
    if (n != BENCH_COLUMNS) {
        snprintf(err, err_len, "%s %d columns, expected %d: %s",
                 n > BENCH_COLUMNS ? "more than" : "got", n > BENCH_COLUMNS ? BENCH_COLUMNS : n,
                 BENCH_COLUMNS, BENCH_CSV_HEADER);
        return 0;
    }
    bench_problem bp;
    memset(&bp, 0, sizeof bp);
    if (!copy_name("name", f[0], bp.name, err, err_len) ||
        !copy_name("family", f[1], bp.family, err, err_len))
        return 0;

    int64_t input[CONVND_MAX_DIMS];
    const int dims = parse_list(f[7], input);
    if (dims == 0)
        return fail(err, err_len, "input", f[7], "expected 1 to 3 sizes separated by 'x'");
    convnd_problem *p = &bp.p;
    convnd_problem_init(p, dims);
    for (int t = 0; t < dims; ++t)
        p->input[t] = input[t];

    bp.dgrad = strcmp(f[2], "dgrad") == 0;
    if (strcmp(f[2], "forward") == 0 || bp.dgrad)
        p->mode = CONVND_FORWARD;
    else if (strcmp(f[2], "transposed") == 0)
        p->mode = CONVND_TRANSPOSED;
    else if (strcmp(f[2], "wgrad") == 0)
        p->mode = CONVND_WGRAD;
    else
        return fail(err, err_len, "mode", f[2], "expected forward, transposed, wgrad or dgrad");

    if (!parse_scalar_column("N", f[3], &p->N, err, err_len) ||
        !parse_scalar_column("C_in", f[4], &p->C_in, err, err_len) ||
        !parse_scalar_column("C_out", f[5], &p->C_out, err, err_len) ||
        !parse_scalar_column("groups", f[6], &p->groups, err, err_len))
        return 0;
    int64_t *per_dim[5] = {p->kernel, p->stride, p->dilation, p->pad_before, p->pad_after};
    for (int c = 0; c < 5; ++c)
        if (!parse_dims_column(column_names[8 + c], f[8 + c], dims, per_dim[c], err, err_len))
            return 0;

    if (strcmp(f[13], "f32") == 0)
        p->dtype = CONVND_F32;
    else if (strcmp(f[13], "f16") == 0)
        p->dtype = CONVND_F16;
    else if (strcmp(f[13], "bf16") == 0)
        p->dtype = CONVND_BF16;
    else
        return fail(err, err_len, "dtype", f[13], "expected f32, f16 or bf16");

    if (strcmp(f[14], "cl") == 0)
        p->x_layout = p->w_layout = CONVND_CHANNELS_LAST;
    else if (strcmp(f[14], "cf") == 0)
        p->x_layout = p->w_layout = CONVND_CHANNELS_FIRST;
    else
        return fail(err, err_len, "layout", f[14], "expected cl (channels-last) or cf");
    p->y_layout = CONVND_LAYOUT_AUTO;

    if (convnd_validate(p) != CONVND_OK) {
        snprintf(err, err_len, "problem '%s' is invalid: %s", bp.name, convnd_last_error());
        return 0;
    }
    bp.forward = *p;
    if (bp.dgrad && convnd_bind_dgrad(&bp.forward, p) != CONVND_OK) {
        snprintf(err, err_len, "problem '%s': dgrad: %s", bp.name, convnd_last_error());
        return 0;
    }
    *out = bp;
    return 1;
}

/* 1 for a line that holds no data: blank, a '#' comment, or the header row. */
static int skip_line(const char *s) {
    while (isspace((unsigned char)*s))
        ++s;
    if (*s == '\0' || *s == '#') return 1;
    return strncmp(s, "name", 4) == 0 && (s[4] == ',' || isspace((unsigned char)s[4]));
}

int bench_load_suite(const char *path, bench_problem **problems, int *count, char *err,
                     size_t err_len) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return 0;
    }
    bench_problem *list = NULL;
    int n = 0, cap = 0, line_no = 0, ok = 1;
    char line[1024], why[512];
    while (ok && fgets(line, sizeof line, f)) {
        ++line_no;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, err_len, "%s:%d: line longer than %zu chars", path, line_no,
                     sizeof line - 2);
            ok = 0;
            break;
        }
        if (skip_line(line)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            bench_problem *grown = realloc(list, (size_t)cap * sizeof *list);
            if (!grown) {
                snprintf(err, err_len, "%s: out of memory", path);
                ok = 0;
                break;
            }
            list = grown;
        }
        if (!bench_parse_row(line, &list[n], why, sizeof why)) {
            snprintf(err, err_len, "%s:%d: %s", path, line_no, why);
            ok = 0;
            break;
        }
        for (int i = 0; i < n; ++i)
            if (strcmp(list[i].name, list[n].name) == 0) {
                snprintf(err, err_len, "%s:%d: problem name '%s' appears twice", path, line_no,
                         list[n].name);
                ok = 0;
            }
        ++n;
    }
    fclose(f);
    if (ok && n == 0) {
        snprintf(err, err_len, "%s: no problems in the file", path);
        ok = 0;
    }
    if (!ok) {
        free(list);
        return 0;
    }
    *problems = list;
    *count = n;
    return 1;
}

const char *bench_format_dims(const int64_t *v, int32_t dims, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t t = 0; t < dims && used < len; ++t) {
        const int w = snprintf(buf + used, len - used, "%s%lld", t ? "x" : "", (long long)v[t]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

const char *bench_format_row(const bench_problem *bp, char *buf, size_t len) {
    const convnd_problem *p = bp->dgrad ? &bp->forward : &bp->p; /* the row as written */
    char d[5][64], in[64];
    const int64_t *per_dim[5] = {p->kernel, p->stride, p->dilation, p->pad_before, p->pad_after};
    for (int c = 0; c < 5; ++c)
        bench_format_dims(per_dim[c], p->dims, d[c], sizeof d[c]);
    snprintf(buf, len, "%s,%s,%s,%lld,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s", bp->name, bp->family,
             bp->dgrad                      ? "dgrad"
             : p->mode == CONVND_TRANSPOSED ? "transposed"
             : p->mode == CONVND_WGRAD      ? "wgrad"
                                            : "forward",
             (long long)p->N, (long long)p->C_in, (long long)p->C_out, (long long)p->groups,
             bench_format_dims(p->input, p->dims, in, sizeof in), d[0], d[1], d[2], d[3], d[4],
             p->dtype == CONVND_F32   ? "f32"
             : p->dtype == CONVND_F16 ? "f16"
                                      : "bf16",
             p->x_layout == CONVND_CHANNELS_LAST ? "cl" : "cf");
    return buf;
}
