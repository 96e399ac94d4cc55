/* Copy-free rows (issue #17, SPEC §11-§12): a convolution that reads a prefix and writes a state
 * or writes into a channel slice, against the copy-based peer that a framework runs instead:
 *
 *   wan_causal_conv3d_cache  the causal conv3d of a video VAE decoder chunk with Wan's 2-frame
 *                            cache: fused (prefix + state, convnd_plan_execute_io) vs cat + pad +
 *                            conv + the cache copy (torch.cat, F.pad, conv, x[:, :, -2:]).
 *   channel_slice_output     a DenseNet-style conv writing into channels [c0, c0 + C_out) of the
 *                            concatenated features: fused (a y view) vs conv + the copy of cat.
 *
 * Each row is validated first (a small copy against the CPU reference: y within the dtype's
 * rounding, the state bit for bit, the buffer's other channels untouched), then timed with the
 * host clock around run + synchronize (median of the repeats). On the emulated device the times
 * are CPU emulation times, never GPU figures. The peers' copies are 2-D strided copies
 * (cudaMemcpy2DAsync on a GPU); their conv is the planner's choice on the packed problem. */
#ifndef CONVND_BENCH_COPY_FREE_H
#define CONVND_BENCH_COPY_FREE_H

#include <stdint.h>
#include <stdio.h>

#include "convnd.h"
#include "timing.h"

typedef struct bench_copy_free_row {
    char scenario[48];
    char candidate[48]; /* "fused" or the peer's steps */
    char plan[96];      /* the convolution's schedule:config */
    int32_t validated;  /* 1 when the small copy matched the reference */
    double rel_err;     /* max |y - ref| / max |ref| of that check */
    double median_ms;   /* 0 when not timed */
    int32_t reps;
    double vs_peer; /* the peer's median / this row's (1 for the peer) */
    char note[160];
} bench_copy_free_row;

/* Rows the scenarios produce (two per scenario). */
#define BENCH_COPY_FREE_ROWS 4

/* Runs every scenario on the active device: validation on the small shapes, timing on the small
 * shapes when `small`, else on the full ones. rows holds BENCH_COPY_FREE_ROWS. Returns the
 * number of rows that failed validation or errored (0: all good). */
int32_t bench_copy_free_run(int32_t small, const bench_timing_config *timing, uint64_t seed,
                            bench_copy_free_row *rows);

/* A Markdown table of the rows, labelled with the device ("GPU" or "EMULATED"). */
void bench_copy_free_print(FILE *f, const bench_copy_free_row *rows, int32_t n,
                           const char *device_label);

#endif
