/* Stateful causal depthwise conv1d (SPEC §13): the `causal_conv1d_fn` / `causal_conv1d_update`
 * contract of Mamba-style models, on convnd's devices.
 *
 *   y[b, d, t] = act(bias[d] + sum_{k<W} w[d, k] * X[b, d, t + k]),
 *   X = cat(initial_states[b, d, 0:W-1], x[b, d, 0:L])   (zeros without initial states)
 *   final_states[b, d, j] = X[b, d, L + j], j < W-1
 *
 * All tensors are device memory of `dtype` (f32, f16, bf16; accumulation in f32) unless noted;
 * the int32 index tensors are device memory too. Weight [D, W] and bias [D] are packed, states
 * are packed [S, D, W-1]. On any error the call returns a status, convnd_last_error() names the
 * parameter and its values, and nothing is written. */
#ifndef CONVND_CAUSAL_H
#define CONVND_CAUSAL_H

#include <stdint.h>

#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Widths 1..CONVND_CAUSAL_MAX_WIDTH; width 1 has no state (states of length 0: their pointers may
 * be NULL). */
#define CONVND_CAUSAL_MAX_WIDTH 256

/* x and y: (B, D, L) channels-first, or (B, L, D) channels-last; both packed. */
typedef enum convnd_causal_layout {
    CONVND_CAUSAL_BDL = 0,
    CONVND_CAUSAL_BLD = 1
} convnd_causal_layout;

typedef struct convnd_causal_problem {
    int64_t batch;  /* B (1 for a packed batch given by query_start_loc) */
    int64_t dim;    /* D, channels */
    int64_t seqlen; /* L, tokens per batch row (all tokens of a packed batch) */
    int32_t width;  /* W */
    convnd_dtype dtype;
    convnd_causal_layout layout;
    int32_t has_bias; /* 0 or 1 */
    int32_t silu;     /* 0: no activation, 1: SiLU */
    /* Packed variable-length batch by offsets: num_seqs sequences, sequence s being tokens
     * [query_start_loc[s], query_start_loc[s+1]) of the single batch row. 0: not packed. */
    int64_t num_seqs;
} convnd_causal_problem;

typedef struct convnd_causal_tensors {
    const void *x;      /* [B, D, L] or [B, L, D] */
    const void *weight; /* [D, W] */
    const void *bias;   /* [D], when has_bias */
    /* Optional, int32 [B, L]: a tap reads x only where seq_idx equals the output's seq_idx
     * (packed sequences without states). Excludes query_start_loc and the states. */
    const int32_t *seq_idx;
    /* int32 [num_seqs + 1], non-decreasing from 0 to L, when num_seqs > 0 (offsets outside
     * that give unspecified values, never an access out of bounds). */
    const int32_t *query_start_loc;
    /* Optional, [S, D, W-1] with S = num_seqs when packed, else B. */
    const void *initial_states;
    /* Optional, [S, D, W-1]; may be initial_states itself (updated in place). */
    void *final_states;
    void *y; /* like x */
} convnd_causal_tensors;

convnd_status convnd_causal_conv1d(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                                   void *stream);

/* The decode step: seqlen (>= 1) new tokens per batch row against a state of state_len >= W-1
 * entries per (row, channel).
 *  - linear state (cache_seqlens NULL): the state holds the last state_len inputs, oldest first;
 *    afterwards it is shifted left by seqlen with the new tokens appended.
 *  - circular state (cache_seqlens int32 [B]): token number n of sequence b lives in slot
 *    n mod state_len; cache_seqlens[b] tokens were seen before this call (the caller advances it).
 *  - conv_state_indices (int32 [B], optional): batch row b uses state row conv_state_indices[b]
 *    (< state_rows); a negative index skips row b (its y and state are left untouched), and
 *    so does one >= state_rows (indices live on the device: never an access out of bounds).
 * Feeding a sequence token by token equals convnd_causal_conv1d on it whole. */
typedef struct convnd_causal_update_problem {
    int64_t batch, dim, seqlen; /* B, D, new tokens per row */
    int32_t width;
    convnd_dtype dtype;
    convnd_causal_layout layout;
    int32_t has_bias, silu;
    int64_t state_len;  /* >= W-1 */
    int64_t state_rows; /* rows of conv_state (B when there are no indices) */
} convnd_causal_update_problem;

typedef struct convnd_causal_update_tensors {
    const void *x;                     /* [B, D, seqlen] or [B, seqlen, D] */
    void *conv_state;                  /* [state_rows, D, state_len], read and written */
    const void *weight;                /* [D, W] */
    const void *bias;                  /* [D], when has_bias */
    const int32_t *cache_seqlens;      /* optional, [B] */
    const int32_t *conv_state_indices; /* optional, [B] */
    void *y;                           /* like x */
} convnd_causal_update_tensors;

convnd_status convnd_causal_conv1d_update(const convnd_causal_update_problem *p,
                                          const convnd_causal_update_tensors *t, void *stream);

/* The two calls above as a problem and its tensors (SPEC §13 on convnd_problem: its sequences
 * field), every argument checked as the calls check them (the pointers when the plan runs, in
 * convnd_plan_execute_io): what the calls plan and execute through the registry (the
 * causal_conv1d schedule), so that convnd_plan_explain, forced schedules, errata and the self-test
 * see them as every other problem. Nothing is written on an error. */
convnd_status convnd_bind_causal_conv1d(const convnd_causal_problem *p,
                                        const convnd_causal_tensors *t, convnd_problem *out,
                                        convnd_io *io);
convnd_status convnd_bind_causal_conv1d_update(const convnd_causal_update_problem *p,
                                               const convnd_causal_update_tensors *t,
                                               convnd_problem *out, convnd_io *io);

#ifdef __cplusplus
}
#endif

#endif
