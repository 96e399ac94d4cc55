/* SPEC §14's sharding identity: which output rows a shard computes, which input rows they read
 * and the shard's own problem (convnd.h, convnd_shard_rows). The one place the rule is written:
 * convnd.distributed asks it for every rank's rows. */
#include <inttypes.h>
#include <string.h>

#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

/* The first output row whose window starts at or after input row `at` (SPEC §14's lo_r):
 * ceil((at + P0) / S) clamped to [0, O]; row 0 for the first shard. */
static int64_t first_row_from(int64_t at, int64_t P0, int64_t S, int64_t O) {
    if (at == 0) return 0;
    const int64_t v = at + P0; /* |P0| and at are below I + |P0| + |P1|, checked by validation */
    const int64_t lo = v <= 0 ? 0 : convnd_ceil_div(v, S);
    return lo > O ? O : lo;
}

convnd_status convnd_shard_rows(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                int64_t shard_size, convnd_shard *out) {
    if (!p || !out)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s is NULL", !p ? "problem" : "shard");
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
    const int64_t I = p->input[axis];
    if (shard_size < 1 || shard_begin < 0 || shard_begin > I - shard_size)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "shard rows [%" PRId64 ", %" PRId64 "+%" PRId64
                            ") must be non-empty and inside input[%d]=%" PRId64,
                            shard_begin, shard_begin, shard_size, (int)axis, I);
    const int64_t S = p->stride[axis], D = p->dilation[axis], K = p->kernel[axis];
    const int64_t P0 = p->pad_before[axis], O = s.out[axis];
    const int64_t end = shard_begin + shard_size;
    convnd_shard r;
    memset(&r, 0, sizeof r);
    r.out_begin = first_row_from(shard_begin, P0, S, O);
    r.out_end = end == I ? O : first_row_from(end, P0, S, O);
    if (r.out_end <= r.out_begin) { /* no window starts here: nothing to compute or read */
        r.out_end = r.out_begin;
        r.in_begin = r.in_end = shard_begin;
        *out = r;
        return CONVND_OK;
    }
    /* rows [lo*S - P0, (hi-1)*S - P0 + D*(K-1)]; every term is bounded by the validated
     * problem's I + P0 + P1 (the output rows exist), so none overflows */
    r.in_begin = r.out_begin * S - P0;
    r.in_end = (r.out_end - 1) * S - P0 + D * (K - 1) + 1;
    const int64_t read_from = r.in_begin < 0 ? 0 : r.in_begin;
    const int64_t read_to = r.in_end > I ? I : r.in_end;
    r.prefix_size = read_from < shard_begin ? shard_begin - read_from : 0;
    r.suffix_size = read_to > end ? read_to - end : 0;
    /* X = cat(prefix, shard, suffix) covers rows [begin - prefix, end + suffix); the padding
     * takes the window's rows to exactly [in_begin, in_end) */
    r.pad_before = (shard_begin - r.prefix_size) - r.in_begin;
    r.pad_after = r.in_end - (end + r.suffix_size);
    *out = r;
    return CONVND_OK;
}
