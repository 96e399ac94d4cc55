/* Plot data and rendering (bench/plot.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot.h"

#ifndef CONVND_BENCH_SOURCE_DIR
#define CONVND_BENCH_SOURCE_DIR "bench"
#endif

#define PLOT_MAX_SERIES 64

int bench_write_plot_data(const char *path, const bench_row *rows, int32_t n) {
    /* the series with at least one bar, in first-appearance order */
    const char *series[PLOT_MAX_SERIES];
    int32_t ns = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (rows[i].status != BENCH_OK || !(rows[i].vs_baseline > 0.0)) continue;
        int32_t j = 0;
        while (j < ns && strcmp(series[j], rows[i].series) != 0)
            ++j;
        if (j == ns && ns < PLOT_MAX_SERIES) series[ns++] = rows[i].series;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    fputs("problem", f);
    for (int32_t j = 0; j < ns; ++j)
        fprintf(f, "\t%s", series[j]);
    fputc('\n', f);
    for (int32_t i = 0; i < n;) {
        /* the rows of one problem are consecutive */
        int32_t end = i;
        while (end < n && strcmp(rows[end].problem, rows[i].problem) == 0)
            ++end;
        fputs(rows[i].problem, f);
        for (int32_t j = 0; j < ns; ++j) {
            double v = NAN;
            for (int32_t r = i; r < end; ++r)
                if (strcmp(rows[r].series, series[j]) == 0 && rows[r].status == BENCH_OK)
                    v = rows[r].vs_baseline;
            if (isnan(v) || v <= 0.0)
                fputs("\t-", f);
            else
                fprintf(f, "\t%.6g", v);
        }
        fputc('\n', f);
        i = end;
    }
    const int ok = fclose(f) == 0;
    if (!ok) perror(path);
    return ok;
}

/* Paths go into a shell command inside single quotes: refuse any that hold one. */
static int shell_safe(const char *s) {
    return strchr(s, '\'') == NULL && strchr(s, '"') == NULL;
}

static int file_nonempty(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

int bench_render_plot(const char *dat, const char *png, const char *baseline, const char *title,
                      char *why, size_t why_len) {
    if (!shell_safe(dat) || !shell_safe(png) || !shell_safe(baseline) || !shell_safe(title)) {
        snprintf(why, why_len, "a path or title holds a quote character");
        return 0;
    }
    const char *dir = getenv("CONVND_BENCH_DIR");
    if (!dir || !*dir) dir = CONVND_BENCH_SOURCE_DIR;
    char cmd[4096];
    remove(png);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "gnuplot -e \"datafile='%s'; outfile='%s'; baseline='%s'; ptitle='%s'\" "
                 "'%s/plot.gnuplot'",
                 dat, png, baseline, title, dir);
        if (system(cmd) == 0 && file_nonempty(png)) return 1;
        snprintf(why, why_len, "gnuplot failed: %s", cmd);
    } else {
        snprintf(why, why_len, "no gnuplot on PATH");
    }
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import matplotlib' >/dev/null 2>&1 && python3 '%s/plot.py' '%s' '%s' "
             "'%s' '%s'",
             dir, dat, png, baseline, title);
    if (system(cmd) == 0 && file_nonempty(png)) return 1;
    const size_t used = strlen(why);
    snprintf(why + used, why_len - used, "; no python3 with matplotlib either");
    return 0;
}
