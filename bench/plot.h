/* The PNG plot: speed of every candidate relative to a baseline series (cuDNN on a GPU, the
 * direct schedule on the emulated device) per problem, one bar per candidate, drawn by
 * bench/plot.gnuplot (or bench/plot.py where gnuplot is missing). */
#ifndef CONVND_BENCH_PLOT_H
#define CONVND_BENCH_PLOT_H

#include <stddef.h>
#include "report.h"

/* Tab-separated: "problem" then one column per series (first-appearance order), the rows'
 * vs_baseline or '-'. Returns 0 with a message on stderr on a write error. */
int bench_write_plot_data(const char *path, const bench_row *rows, int32_t n);

/* Runs gnuplot (else python3 with matplotlib) on the data. Returns 1 when png was written;
 * else 0 and the reason in why. */
int bench_render_plot(const char *dat, const char *png, const char *baseline, const char *title,
                      char *why, size_t why_len);

#endif
