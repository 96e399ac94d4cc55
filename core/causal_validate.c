/* Validation of the stateful causal conv1d calls (SPEC §13): every parameter and pointer is
 * checked, with a message naming the values, before any launch, so an error writes nothing. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "causal_params.h"
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

typedef struct causal_span {
    const char *name;
    const void *ptr;
    int64_t bytes;
    int64_t align;         /* element bytes */
    int required, output;  /* output: written by the call */
    const void *may_equal; /* an output may be exactly this input (in place) */
} causal_span;

static int spans_touch(const causal_span *a, const causal_span *b) {
    if (!a->ptr || !b->ptr || a->bytes == 0 || b->bytes == 0) return 0;
    const uintptr_t a0 = (uintptr_t)a->ptr, b0 = (uintptr_t)b->ptr;
    return a0 < b0 + (uintptr_t)b->bytes && b0 < a0 + (uintptr_t)a->bytes;
}

/* Present when needed, element-aligned, and no output overlapping anything else (except its one
 * allowed in-place partner, exactly). */
static convnd_status check_spans(const causal_span *s, int n) {
    for (int i = 0; i < n; ++i) {
        if (s[i].required && s[i].bytes > 0 && !s[i].ptr)
            return convnd_error(CONVND_ERR_NULL_POINTER,
                                "%s is NULL but the call %s %" PRId64 " bytes of it", s[i].name,
                                s[i].output ? "writes" : "reads", s[i].bytes);
        if (s[i].ptr && (uintptr_t)s[i].ptr % (uintptr_t)s[i].align != 0)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "%s=%p is not aligned to its %" PRId64 "-byte elements", s[i].name,
                                s[i].ptr, s[i].align);
    }
    for (int i = 0; i < n; ++i) {
        if (!s[i].output) continue;
        for (int j = 0; j < n; ++j) {
            if (j == i || !spans_touch(&s[i], &s[j])) continue;
            if (s[i].ptr == s[j].ptr && s[j].ptr == s[i].may_equal && s[j].bytes == s[i].bytes)
                continue; /* exactly in place */
            return convnd_error(CONVND_ERR_ALIASING,
                                "%s [%p, +%" PRId64 " bytes) overlaps %s [%p, +%" PRId64
                                " bytes)%s",
                                s[j].name, s[j].ptr, s[j].bytes, s[i].name, s[i].ptr, s[i].bytes,
                                s[i].may_equal ? "; only final_states == initial_states exactly "
                                                 "may alias"
                                               : "");
        }
    }
    return CONVND_OK;
}

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

/* Element count of a product, or an overflow error naming the tensor. */
static convnd_status count(const char *name, const int64_t *dims, int n, int64_t elem,
                           int64_t *bytes) {
    int64_t v[5];
    memcpy(v, dims, sizeof(int64_t) * (size_t)n);
    v[n] = elem;
    if (convnd_product_overflows(v, n + 1, bytes))
        return convnd_error(CONVND_ERR_OVERFLOW, "%s has more bytes than int64 can count", name);
    return CONVND_OK;
}

/* The fields both calls share, on a zeroed args; x and y are packed in the layout. */
static void fill_common(convnd_causal_launch_args *a, int64_t batch, int64_t dim, int64_t seqlen,
                        int32_t width, convnd_dtype dtype, convnd_causal_layout layout,
                        int32_t has_bias, int32_t silu, const void *x, const void *w,
                        const void *bias, void *y, void *stream) {
    memset(a, 0, sizeof *a);
    convnd_causal_params *q = &a->p;
    q->dtype = dtype;
    q->layout = layout;
    q->width = width;
    q->has_bias = has_bias;
    q->silu = silu;
    q->batch = batch;
    q->dim = dim;
    q->seqlen = seqlen;
    q->xs_b = dim * seqlen;
    q->xs_d = layout == CONVND_CAUSAL_BDL ? seqlen : 1;
    q->xs_l = layout == CONVND_CAUSAL_BDL ? 1 : dim;
    a->x = x;
    a->w = w;
    a->bias = has_bias ? bias : NULL;
    a->y = y;
    a->stream = stream;
}

convnd_status convnd_causal_prepare(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                                    void *stream, convnd_causal_launch_args *a) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (!t) return convnd_error(CONVND_ERR_NULL_POINTER, "tensors is NULL");
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
    const int64_t eb = convnd_dtype_bytes(p->dtype);
    const int64_t states = p->num_seqs > 0 ? p->num_seqs : p->batch;
    const int64_t x_dims[3] = {p->batch, p->dim, p->seqlen};
    const int64_t w_dims[2] = {p->dim, p->width};
    const int64_t s_dims[3] = {states, p->dim, p->width - 1};
    const int64_t i_dims[2] = {p->batch, p->seqlen};
    const int64_t q_dims[1] = {p->num_seqs + 1};
    int64_t xb = 0, wb = 0, sb = 0, ib = 0, qb = 0;
    if ((st = count("x", x_dims, 3, eb, &xb)) || (st = count("weight", w_dims, 2, eb, &wb)) ||
        (st = count("states", s_dims, 3, eb, &sb)) || (st = count("seq_idx", i_dims, 2, 4, &ib)) ||
        (st = count("query_start_loc", q_dims, 1, 4, &qb)))
        return st;
    const int64_t bias_bytes = p->has_bias ? p->dim * eb : 0;
    const causal_span spans[] = {
        {"x", t->x, xb, eb, 1, 0, NULL},
        {"weight", t->weight, wb, eb, 1, 0, NULL},
        {"bias", p->has_bias ? t->bias : NULL, bias_bytes, eb, 1, 0, NULL},
        {"seq_idx", t->seq_idx, t->seq_idx ? ib : 0, 4, 0, 0, NULL},
        {"query_start_loc", t->query_start_loc, p->num_seqs > 0 ? qb : 0, 4, 1, 0, NULL},
        {"initial_states", t->initial_states, t->initial_states ? sb : 0, eb, 0, 0, NULL},
        {"final_states", t->final_states, t->final_states ? sb : 0, eb, 0, 1, t->initial_states},
        {"y", t->y, xb, eb, 1, 1, NULL},
    };
    if ((st = check_spans(spans, (int)(sizeof spans / sizeof spans[0])))) return st;

    fill_common(a, p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout, p->has_bias, p->silu,
                t->x, t->weight, t->bias, t->y, stream);
    a->p.seqs = t->seq_idx        ? CONVND_CAUSAL_SEQ_IDX
                : p->num_seqs > 0 ? CONVND_CAUSAL_OFFSETS
                                  : CONVND_CAUSAL_ROWS;
    a->p.num_seqs = states;
    a->init = t->initial_states;
    a->final_state = t->final_states;
    a->seq_idx = t->seq_idx;
    a->query_start_loc = p->num_seqs > 0 ? t->query_start_loc : NULL;
    return CONVND_OK;
}

convnd_status convnd_causal_update_prepare(const convnd_causal_update_problem *p,
                                           const convnd_causal_update_tensors *t, void *stream,
                                           convnd_causal_launch_args *a) {
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    if (!t) return convnd_error(CONVND_ERR_NULL_POINTER, "tensors is NULL");
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
    const int64_t eb = convnd_dtype_bytes(p->dtype);
    const int64_t x_dims[3] = {p->batch, p->dim, p->seqlen};
    const int64_t w_dims[2] = {p->dim, p->width};
    const int64_t s_dims[3] = {p->state_rows, p->dim, p->state_len};
    const int64_t b_dims[1] = {p->batch};
    int64_t xb = 0, wb = 0, sb = 0, bb = 0;
    if ((st = count("x", x_dims, 3, eb, &xb)) || (st = count("weight", w_dims, 2, eb, &wb)) ||
        (st = count("conv_state", s_dims, 3, eb, &sb)) ||
        (st = count("cache_seqlens", b_dims, 1, 4, &bb)))
        return st;
    const causal_span spans[] = {
        {"x", t->x, xb, eb, 1, 0, NULL},
        {"weight", t->weight, wb, eb, 1, 0, NULL},
        {"bias", p->has_bias ? t->bias : NULL, p->has_bias ? p->dim * eb : 0, eb, 1, 0, NULL},
        {"cache_seqlens", t->cache_seqlens, t->cache_seqlens ? bb : 0, 4, 0, 0, NULL},
        {"conv_state_indices", t->conv_state_indices, t->conv_state_indices ? bb : 0, 4, 0, 0,
         NULL},
        {"conv_state", t->conv_state, p->batch > 0 ? sb : 0, eb, 1, 1, NULL},
        {"y", t->y, xb, eb, 1, 1, NULL},
    };
    if ((st = check_spans(spans, (int)(sizeof spans / sizeof spans[0])))) return st;

    fill_common(a, p->batch, p->dim, p->seqlen, p->width, p->dtype, p->layout, p->has_bias, p->silu,
                t->x, t->weight, t->bias, t->y, stream);
    a->p.num_seqs = p->batch;
    a->p.state_len = p->state_len;
    a->p.state_rows = p->state_rows;
    a->state = t->conv_state;
    a->cache_seqlens = t->cache_seqlens;
    a->state_indices = t->conv_state_indices;
    return CONVND_OK;
}
