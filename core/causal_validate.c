/* SPEC §13 on a problem: the stateful causal conv1d's rules (a problem with sequences is one, as
 * convnd_bind_causal_conv1d builds it) and its tensors' checks, which convnd_check_io runs for
 * such a problem: every pointer present where needed, element-aligned, and no output overlapping
 * anything else, before any launch, so an error writes nothing. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "checked_math.h"
#include "convnd_causal.h"
#include "error.h"
#include "problem_internal.h"

/* "sequences.FIELD=..." refusals name the binding that sets the fields */
#define SEQ_RULE(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) return convnd_error(CONVND_ERR_INVALID_ARGUMENT, __VA_ARGS__);                \
    } while (0)

/* Byte count of a product, or an overflow error naming the tensor. */
static convnd_status byte_count(const char *name, const int64_t *dims, int n, int64_t elem,
                                int64_t *bytes) {
    int64_t v[5];
    memcpy(v, dims, sizeof(int64_t) * (size_t)n);
    v[n] = elem;
    if (convnd_product_overflows(v, n + 1, bytes))
        return convnd_error(CONVND_ERR_OVERFLOW, "%s has more bytes than int64 can count", name);
    return CONVND_OK;
}

/* The bytes of a sequence problem's tensors, each product overflow-checked with its name. */
typedef struct sequence_bytes {
    int64_t x, w, seq_idx, states, query_start_loc, cache_seqlens;
} sequence_bytes;

static convnd_status sequence_bytes_of(const convnd_problem *p, sequence_bytes *b) {
    const convnd_sequences *q = &p->sequences;
    const int64_t eb = convnd_dtype_bytes(p->dtype);
    const int64_t B = p->N, D = p->C_in, L = p->input[0], W = p->kernel[0];
    const int64_t x_dims[3] = {B, D, L}, w_dims[2] = {D, W}, i_dims[2] = {B, L};
    memset(b, 0, sizeof *b);
    convnd_status st;
    if ((st = byte_count("x", x_dims, 3, eb, &b->x)) ||
        (st = byte_count("weight", w_dims, 2, eb, &b->w)))
        return st;
    if (q->kind == CONVND_SEQS_UPDATE) {
        const int64_t s_dims[3] = {q->state_rows, D, q->state_len}, b_dims[1] = {B};
        if ((st = byte_count("conv_state", s_dims, 3, eb, &b->states)) ||
            (st = byte_count("cache_seqlens", b_dims, 1, 4, &b->cache_seqlens)))
            return st;
        return CONVND_OK;
    }
    const int64_t states = q->kind == CONVND_SEQS_OFFSETS ? q->num_seqs : B;
    const int64_t s_dims[3] = {states, D, W - 1}, q_dims[1] = {q->num_seqs + 1};
    if ((st = byte_count("states", s_dims, 3, eb, &b->states)) ||
        (st = byte_count("seq_idx", i_dims, 2, 4, &b->seq_idx)) ||
        (st = byte_count("query_start_loc", q_dims, 1, 4, &b->query_start_loc)))
        return st;
    return CONVND_OK;
}

convnd_status convnd_check_sequences(const convnd_problem *p) {
    const convnd_sequences *q = &p->sequences;
    if (q->kind == CONVND_SEQS_NONE) return CONVND_OK;
    SEQ_RULE(q->kind >= CONVND_SEQS_ROWS && q->kind <= CONVND_SEQS_UPDATE,
             "sequences.kind=%d is not a convnd_seqs (0 none .. 4 update)", (int)q->kind);
    const char *why = "(a stateful causal conv1d, SPEC §13: convnd_bind_causal_conv1d binds one)";
    SEQ_RULE(p->mode == CONVND_FORWARD && p->dims == 1,
             "sequences: mode=%s dims=%d: forward 1-D only %s", convnd_mode_name(p->mode),
             (int)p->dims, why);
    SEQ_RULE((p->groups == p->C_in || (p->C_in == 0 && p->groups == 1)) && p->C_out == p->C_in,
             "sequences: groups=%" PRId64 " C_in=%" PRId64 " C_out=%" PRId64 ": depthwise only %s",
             p->groups, p->C_in, p->C_out, why);
    const int64_t K = p->kernel[0];
    SEQ_RULE(K >= 1 && K <= CONVND_CAUSAL_MAX_WIDTH,
             "sequences: kernel=%" PRId64 " must be in 1..%d %s", K, CONVND_CAUSAL_MAX_WIDTH, why);
    SEQ_RULE(p->stride[0] == 1 && p->dilation[0] == 1 && p->pad_before[0] == K - 1 &&
                 p->pad_after[0] == 0,
             "sequences: stride=%" PRId64 " dilation=%" PRId64 " pad %" PRId64 "/%" PRId64
             ": stride 1, dilation 1, pad kernel-1/0 only %s",
             p->stride[0], p->dilation[0], p->pad_before[0], p->pad_after[0], why);
    SEQ_RULE(!p->has_z && p->alpha == 1.0f &&
                 (p->activation == CONVND_ACT_NONE || p->activation == CONVND_ACT_SILU),
             "sequences: has_z=%d alpha=%g activation=%s: bias and SiLU only %s", (int)p->has_z,
             (double)p->alpha, convnd_activation_name(p->activation), why);
    SEQ_RULE(p->w_layout == CONVND_CHANNELS_FIRST &&
                 (p->y_layout == CONVND_LAYOUT_AUTO || p->y_layout == p->x_layout),
             "sequences: w in channels-first and y in x's layout only %s", why);
    SEQ_RULE(!p->x_view.custom && !p->y_view.custom && !p->z_view.custom,
             "sequences: packed x and y only (no views) %s", why);
    SEQ_RULE(p->prefix_size == 0 && p->state_size == 0 && p->suffix_size == 0,
             "sequences: the states are sequences' own (prefix_size, state_size, suffix_size "
             "0) %s",
             why);
    SEQ_RULE((q->kind == CONVND_SEQS_OFFSETS) == (q->num_seqs > 0),
             "sequences.num_seqs=%" PRId64 " with kind=%d: offsets need num_seqs >= 1, the "
             "others 0",
             q->num_seqs, (int)q->kind);
    SEQ_RULE(q->kind != CONVND_SEQS_OFFSETS || p->N == 1,
             "sequences: packed sequences (num_seqs=%" PRId64 ") need N=1, got N=%" PRId64,
             q->num_seqs, p->N);
    const int32_t flags[] = {q->initial_states, q->final_states, q->circular, q->indexed};
    for (int i = 0; i < 4; ++i)
        SEQ_RULE(flags[i] == 0 || flags[i] == 1,
                 "sequences: initial_states, final_states, circular and indexed are 0 or 1");
    if (q->kind == CONVND_SEQS_UPDATE) {
        SEQ_RULE(!q->initial_states && !q->final_states,
                 "sequences: the decode step's state is state_len/state_rows, not "
                 "initial/final states");
        SEQ_RULE(q->state_len >= K - 1,
                 "sequences.state_len=%" PRId64 " must be >= kernel-1=%" PRId64, q->state_len,
                 K - 1);
        SEQ_RULE(q->state_rows >= 0 && (q->indexed || q->state_rows >= p->N),
                 "sequences.state_rows=%" PRId64 " must be >= 0, and >= N=%" PRId64
                 " without state indices",
                 q->state_rows, p->N);
    } else {
        SEQ_RULE(q->state_len == 0 && q->state_rows == 0 && !q->circular && !q->indexed,
                 "sequences: state_len, state_rows, circular and indexed are the decode step's");
        SEQ_RULE(q->kind != CONVND_SEQS_IDX || (!q->initial_states && !q->final_states),
                 "seq_idx cannot be combined with initial_states/final_states "
                 "(use query_start_loc for packed sequences with states)");
    }
    /* before the general tensor counts, so that an overflow names the call's tensor */
    sequence_bytes b;
    return sequence_bytes_of(p, &b);
}

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

convnd_status convnd_check_sequence_io(const convnd_problem *p, const convnd_io *io) {
    const convnd_sequences *q = &p->sequences;
    const int64_t eb = convnd_dtype_bytes(p->dtype);
    sequence_bytes b;
    const convnd_status st = sequence_bytes_of(p, &b);
    if (st) return st;
    const int64_t bias_bytes = p->has_bias ? p->C_in * eb : 0;
    if (q->kind == CONVND_SEQS_UPDATE) {
        const causal_span spans[] = {
            {"x", io->x, b.x, eb, 1, 0, NULL},
            {"weight", io->w, b.w, eb, 1, 0, NULL},
            {"bias", p->has_bias ? io->bias : NULL, bias_bytes, eb, 1, 0, NULL},
            {"cache_seqlens", io->cache_seqlens, io->cache_seqlens ? b.cache_seqlens : 0, 4, 0, 0,
             NULL},
            {"conv_state_indices", io->state_indices, io->state_indices ? b.cache_seqlens : 0, 4, 0,
             0, NULL},
            {"conv_state", io->state, p->N > 0 ? b.states : 0, eb, 1, 1, NULL},
            {"y", io->y, b.x, eb, 1, 1, NULL},
        };
        return check_spans(spans, (int)(sizeof spans / sizeof spans[0]));
    }
    const void *init = q->initial_states ? io->x_prefix : NULL;
    const void *final = q->final_states ? io->state : NULL;
    const causal_span spans[] = {
        {"x", io->x, b.x, eb, 1, 0, NULL},
        {"weight", io->w, b.w, eb, 1, 0, NULL},
        {"bias", p->has_bias ? io->bias : NULL, bias_bytes, eb, 1, 0, NULL},
        {"seq_idx", io->seq_idx, q->kind == CONVND_SEQS_IDX ? b.seq_idx : 0, 4, 1, 0, NULL},
        {"query_start_loc", io->query_start_loc,
         q->kind == CONVND_SEQS_OFFSETS ? b.query_start_loc : 0, 4, 1, 0, NULL},
        {"initial_states", init, init ? b.states : 0, eb, 0, 0, NULL},
        {"final_states", final, final ? b.states : 0, eb, 0, 1, init},
        {"y", io->y, b.x, eb, 1, 1, NULL},
    };
    return check_spans(spans, (int)(sizeof spans / sizeof spans[0]));
}
