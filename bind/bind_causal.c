/* The stateful causal conv1d's calls (SPEC §13, include/convnd_causal.h) as a problem: a
 * depthwise 1-D forward conv, P0 = W-1, whose sequences and states problem.sequences carries,
 * planned and run through the registry like every other problem (the causal_conv1d schedule).
 * Every argument is checked here with the calls' own messages; the pointers when the plan runs
 * (core/causal_validate.c). */
#include <inttypes.h>
#include <string.h>

#include "convnd_causal.h"
#include "error.h"
#include "problem_internal.h"

/* The fields both calls share. */
static convnd_status check_common(int64_t batch, int64_t dim, int64_t seqlen, int32_t width,
                                  convnd_dtype dtype, convnd_causal_layout layout, int32_t has_bias,
                                  int32_t silu) {
    if (convnd_dtype_bytes(dtype) == 0)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "dtype=%d is not supported (0 f32, 1 f16, 2 bf16)", (int)dtype);
    if (layout != CONVND_CAUSAL_BDL && layout != CONVND_CAUSAL_BLD)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "layout=%d is not a convnd_causal_layout (0 (B, D, L), 1 (B, L, D))",
                            (int)layout);
    if (batch < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "batch=%" PRId64 " must be >= 0", batch);
    if (dim < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "dim=%" PRId64 " must be >= 0", dim);
    if (seqlen < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "seqlen=%" PRId64 " must be >= 0", seqlen);
    if (width < 1 || width > CONVND_CAUSAL_MAX_WIDTH)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "width=%d must be in 1..%d", (int)width,
                            CONVND_CAUSAL_MAX_WIDTH);
    if (has_bias != 0 && has_bias != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "has_bias=%d must be 0 or 1",
                            (int)has_bias);
    if (silu != 0 && silu != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "silu=%d must be 0 or 1", (int)silu);
    return CONVND_OK;
}

/* The bound problem validated into *out, and io with the tensors both calls have. */
static convnd_status finish(const convnd_problem *q, const void *x, const void *w, const void *bias,
                            void *y, convnd_problem *out, convnd_io *io) {
    const convnd_status st = convnd_validate(q);
    if (st) return st;
    *out = *q;
    memset(io, 0, sizeof *io);
    io->x = x;
    io->w = w;
    io->bias = bias;
    io->y = y;
    return CONVND_OK;
}

/* The depthwise causal conv both calls are: x and y [B, D, L] in the layout, w [D, 1, W]. */
static void causal_problem(int64_t batch, int64_t dim, int64_t seqlen, int32_t width,
                           convnd_dtype dtype, convnd_causal_layout layout, int32_t has_bias,
                           int32_t silu, convnd_problem *p) {
    convnd_problem_init(p, 1);
    p->N = batch;
    p->C_in = p->C_out = dim;
    p->groups = dim > 0 ? dim : 1;
    p->input[0] = seqlen;
    p->kernel[0] = width;
    p->pad_before[0] = width - 1;
    p->dtype = dtype;
    p->x_layout = p->y_layout =
        layout == CONVND_CAUSAL_BLD ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST;
    p->w_layout = CONVND_CHANNELS_FIRST;
    p->has_bias = has_bias;
    p->activation = silu ? CONVND_ACT_SILU : CONVND_ACT_NONE;
}

convnd_status convnd_bind_causal_conv1d(const convnd_causal_problem *p,
                                        const convnd_causal_tensors *t, convnd_problem *out,
                                        convnd_io *io) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (!t) return convnd_error(CONVND_ERR_NULL_POINTER, "tensors is NULL");
    if (!out || !io) return convnd_error(CONVND_ERR_NULL_POINTER, "out or io is NULL");
    convnd_status st = check_common(p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout,
                                    p->has_bias, p->silu);
    if (st) return st;
    if (p->num_seqs < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "num_seqs=%" PRId64 " must be >= 0",
                            p->num_seqs);
    if (p->num_seqs > 0 && p->batch != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "num_seqs=%" PRId64
                            " (a packed batch) needs batch=1, got batch=%" PRId64,
                            p->num_seqs, p->batch);
    if (p->num_seqs == 0 && t->query_start_loc)
        return convnd_error(
            CONVND_ERR_INVALID_ARGUMENT,
            "query_start_loc is given but num_seqs=0 (set num_seqs to its length - 1)");
    if (t->seq_idx && p->num_seqs > 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "seq_idx and query_start_loc (num_seqs=%" PRId64 ") are exclusive",
                            p->num_seqs);
    if (t->seq_idx && (t->initial_states || t->final_states))
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "seq_idx cannot be combined with initial_states/final_states "
                            "(use query_start_loc for packed sequences with states)");
    convnd_problem q;
    causal_problem(p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout, p->has_bias, p->silu,
                   &q);
    q.sequences.kind = t->seq_idx        ? CONVND_SEQS_IDX
                       : p->num_seqs > 0 ? CONVND_SEQS_OFFSETS
                                         : CONVND_SEQS_ROWS;
    q.sequences.num_seqs = p->num_seqs;
    q.sequences.initial_states = t->initial_states != NULL;
    q.sequences.final_states = t->final_states != NULL;
    if ((st = finish(&q, t->x, t->weight, t->bias, t->y, out, io))) return st;
    io->x_prefix = t->initial_states;
    io->state = t->final_states;
    io->seq_idx = t->seq_idx;
    io->query_start_loc = p->num_seqs > 0 ? t->query_start_loc : NULL;
    return CONVND_OK;
}

convnd_status convnd_bind_causal_conv1d_update(const convnd_causal_update_problem *p,
                                               const convnd_causal_update_tensors *t,
                                               convnd_problem *out, convnd_io *io) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (!t) return convnd_error(CONVND_ERR_NULL_POINTER, "tensors is NULL");
    if (!out || !io) return convnd_error(CONVND_ERR_NULL_POINTER, "out or io is NULL");
    convnd_status st = check_common(p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout,
                                    p->has_bias, p->silu);
    if (st) return st;
    if (p->state_len < p->width - 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "state_len=%" PRId64 " must be >= width-1=%d", p->state_len,
                            (int)p->width - 1);
    if (p->state_rows < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "state_rows=%" PRId64 " must be >= 0",
                            p->state_rows);
    if (!t->conv_state_indices && p->state_rows < p->batch)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "state_rows=%" PRId64 " < batch=%" PRId64
                            " without conv_state_indices (row b is batch b's state)",
                            p->state_rows, p->batch);
    convnd_problem q;
    causal_problem(p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout, p->has_bias, p->silu,
                   &q);
    q.sequences.kind = CONVND_SEQS_UPDATE;
    q.sequences.state_len = p->state_len;
    q.sequences.state_rows = p->state_rows;
    q.sequences.circular = t->cache_seqlens != NULL;
    q.sequences.indexed = t->conv_state_indices != NULL;
    if ((st = finish(&q, t->x, t->weight, t->bias, t->y, out, io))) return st;
    io->state = t->conv_state;
    io->cache_seqlens = t->cache_seqlens;
    io->state_indices = t->conv_state_indices;
    return CONVND_OK;
}
