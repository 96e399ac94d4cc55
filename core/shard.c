/* SPEC §14's sharding identity: which output rows a shard computes, which input rows they read
 * and the shard's own problem (convnd.h: convnd_shard_rows, convnd_shard_rows_aligned,
 * convnd_shard_part). The one place the rule is written: convnd.distributed asks it for every
 * rank's rows. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

/* The whole problem's figures along the sharded axis, validated. *a is zeroed first, so it is
 * defined on every path, the error paths included. */
typedef struct shard_axis {
    int64_t I, K, S, D, P0, O;
    int64_t begin, end;
} shard_axis;

static convnd_status shard_axis_of(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                   int64_t shard_size, shard_axis *a) {
    memset(a, 0, sizeof *a);
    if (!p) return convnd_error(CONVND_ERR_NULL_POINTER, "problem is NULL");
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    if (p->mode != CONVND_FORWARD)
        return convnd_error(CONVND_ERR_UNSUPPORTED, "sharding needs mode=forward (mode=%s)",
                            convnd_mode_name(p->mode));
    if (convnd_has_io_axis(p))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "the whole problem to shard has prefix_size=%" PRId64
                            ", suffix_size=%" PRId64 ", state_size=%" PRId64 "; expected none",
                            p->prefix_size, p->suffix_size, p->state_size);
    if (axis < 0 || axis >= p->dims)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "axis=%d must name a spatial dim 0..%d",
                            (int)axis, (int)p->dims - 1);
    a->I = p->input[axis];
    if (shard_size < 1 || shard_begin < 0 || shard_begin > a->I - shard_size)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "shard rows [%" PRId64 ", %" PRId64 "+%" PRId64
                            ") must be non-empty and inside input[%d]=%" PRId64,
                            shard_begin, shard_begin, shard_size, (int)axis, a->I);
    a->K = p->kernel[axis], a->S = p->stride[axis], a->D = p->dilation[axis];
    a->P0 = p->pad_before[axis], a->O = s.out[axis];
    a->begin = shard_begin, a->end = shard_begin + shard_size;
    return CONVND_OK;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* ceil(v / S) for any sign of v, S > 0 */
static int64_t ceil_div_signed(int64_t v, int64_t S) {
    return -convnd_floor_div(-v, S);
}

/* The first output row whose window starts at or after input row `at` (SPEC §14's lo_r):
 * ceil((at + P0) / S) clamped to [0, O]; row 0 for the first shard. |P0| and `at` are below
 * I + |P0| + |P1|, which validation bounds, so the sums do not overflow. */
static int64_t first_row_from(const shard_axis *a, int64_t at) {
    return at == 0 ? 0 : clamp(ceil_div_signed(at + a->P0, a->S), 0, a->O);
}

/* Output rows [o0, o1) (o0 < o1, their windows starting in the shard) reading x rows
 * [x_begin, x_end): the halo and the padding that make the part's output exactly those rows.
 * Every term is bounded by the validated problem's I + P0 + P1 (the output rows exist). */
static void describe_part(const shard_axis *a, int64_t o0, int64_t o1, int64_t x_begin,
                          int64_t x_end, convnd_shard *r) {
    r->out_begin = o0;
    r->out_end = o1;
    r->in_begin = o0 * a->S - a->P0;
    r->in_end = (o1 - 1) * a->S - a->P0 + a->D * (a->K - 1) + 1;
    r->x_begin = x_begin;
    r->x_end = x_end;
    const int64_t read_from = r->in_begin < 0 ? 0 : r->in_begin;
    const int64_t read_to = r->in_end > a->I ? a->I : r->in_end;
    r->prefix_size = read_from < x_begin ? x_begin - read_from : 0;
    r->suffix_size = read_to > x_end ? read_to - x_end : 0;
    /* X = cat(prefix, x, suffix) covers rows [x_begin - prefix, x_end + suffix); the padding
     * takes the windows' rows to exactly [in_begin, in_end) */
    r->pad_before = (x_begin - r->prefix_size) - r->in_begin;
    r->pad_after = r->in_end - (x_end + r->suffix_size);
    /* interior: rows whose windows start at or after the shard's first row (any row of the
     * first shard) and end before its last (any row of the last) */
    r->interior_begin = a->begin == 0 ? o0 : clamp(ceil_div_signed(a->begin + a->P0, a->S), o0, o1);
    r->interior_end =
        a->end == a->I ? o1
                       : clamp(ceil_div_signed(a->end + a->P0 - a->D * (a->K - 1), a->S), o0, o1);
    if (r->interior_end < r->interior_begin) r->interior_end = r->interior_begin;
}

/* Output rows [o0, o1) as a part of the shard: x = the shard's rows their windows read; when
 * they read none (negative padding cropping the shard, or a window past it), the shard's row
 * nearest them, which the part's padding then crops. x is never empty. */
static void describe_clipped(const shard_axis *a, int64_t o0, int64_t o1, convnd_shard *r) {
    describe_part(a, o0, o1, 0, 0, r);
    int64_t x_begin = clamp(r->in_begin, a->begin, a->end);
    int64_t x_end = clamp(r->in_end, a->begin, a->end);
    if (x_begin >= x_end) {
        x_begin = r->in_begin >= a->end ? a->end - 1 : a->begin;
        x_end = x_begin + 1;
    }
    describe_part(a, o0, o1, x_begin, x_end, r);
}

/* ceil(v * O / I) for 0 <= v <= I, without overflow: v * O in two parts */
static int64_t scaled_row(int64_t v, int64_t O, int64_t I) {
    const int64_t q = v / I, rem = v % I; /* v * O / I = q * O + rem * O / I */
    int64_t prod;
    if (!convnd_mul_overflows(rem, O, &prod)) return q * O + convnd_ceil_div(prod, I);
    return q * O + (int64_t)ceill((long double)rem * (long double)O / (long double)I);
}

/* A shard's rows by one of the two rules: SPEC §14's (the windows that start in the shard; x =
 * the whole shard) or the aligned one (x = the rows read). */
static convnd_status shard_rows_by(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                   int64_t shard_size, int aligned, convnd_shard *out) {
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "shard is NULL");
    shard_axis a;
    convnd_status st = shard_axis_of(p, axis, shard_begin, shard_size, &a);
    if (st) return st;
    const int64_t lo = aligned ? scaled_row(a.begin, a.O, a.I) : first_row_from(&a, a.begin);
    const int64_t hi = aligned        ? scaled_row(a.end, a.O, a.I)
                       : a.end == a.I ? a.O
                                      : first_row_from(&a, a.end);
    convnd_shard r;
    memset(&r, 0, sizeof r);
    if (hi <= lo) { /* no rows here: nothing to compute or read */
        r.out_begin = r.out_end = r.interior_begin = r.interior_end = lo;
        r.in_begin = r.in_end = r.x_begin = r.x_end = a.begin;
    } else if (aligned) {
        describe_clipped(&a, lo, hi, &r);
    } else {
        describe_part(&a, lo, hi, a.begin, a.end, &r);
    }
    *out = r;
    return CONVND_OK;
}

convnd_status convnd_shard_rows(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                int64_t shard_size, convnd_shard *out) {
    return shard_rows_by(p, axis, shard_begin, shard_size, 0, out);
}

convnd_status convnd_shard_rows_aligned(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                        int64_t shard_size, convnd_shard *out) {
    return shard_rows_by(p, axis, shard_begin, shard_size, 1, out);
}

convnd_status convnd_shard_part(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                int64_t shard_size, int64_t out_begin, int64_t out_end,
                                convnd_shard *out) {
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "shard is NULL");
    shard_axis a;
    convnd_status st = shard_axis_of(p, axis, shard_begin, shard_size, &a);
    if (st) return st;
    if (out_begin < 0 || out_end > a.O || out_begin >= out_end)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "output rows [%" PRId64 ", %" PRId64
                            ") must be non-empty and inside the output's %" PRId64 " rows",
                            out_begin, out_end, a.O);
    convnd_shard r;
    memset(&r, 0, sizeof r);
    describe_clipped(&a, out_begin, out_end, &r);
    *out = r;
    return CONVND_OK;
}
