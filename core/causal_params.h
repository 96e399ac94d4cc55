/* The launch ABI of the stateful causal conv1d kernels (SPEC §13): what core/causal_validate.c
 * schedule (families/causal_conv1d/causal_conv1d.c) builds from a plan's launch arguments and
 * families/causal_conv1d/causal_conv1d.cu reads. Plain C. */
#ifndef CONVND_CAUSAL_PARAMS_H
#define CONVND_CAUSAL_PARAMS_H

#include <stdint.h>

#include "convnd.h"
#include "convnd_causal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How output t finds its sequence's start. */
typedef enum convnd_causal_seqs {
    CONVND_CAUSAL_ROWS = 0,    /* every batch row is one sequence */
    CONVND_CAUSAL_SEQ_IDX = 1, /* per-token sequence ids */
    CONVND_CAUSAL_OFFSETS = 2  /* query_start_loc offsets in a single row */
} convnd_causal_seqs;

typedef struct convnd_causal_params {
    int32_t dtype, layout, width, has_bias, silu, seqs; /* seqs: a convnd_causal_seqs */
    int64_t batch, dim, seqlen;
    int64_t xs_b, xs_d, xs_l; /* element strides of x and y over (b, d, t) */
    int64_t num_seqs;         /* offsets: sequences; rows: batch */
    /* update only */
    int64_t state_len, state_rows;
} convnd_causal_params;

typedef struct convnd_causal_launch_args {
    convnd_causal_params p;
    const void *x, *w, *bias, *init;
    void *final_state, *state, *y;
    const int32_t *seq_idx, *query_start_loc, *cache_seqlens, *state_indices;
    void *stream;
    convnd_device device;
} convnd_causal_launch_args;

#ifdef __cplusplus
}
#endif

#endif
