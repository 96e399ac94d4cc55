/* Argument checks, list broadcasting and the common ending of every binding. */
#include "bind_common.h"

#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <string.h>

static int32_t clamp_len(int32_t len, int32_t capacity) {
    return len < 0 ? 0 : len > capacity ? capacity : len;
}

convnd_shape convnd_shape_of(int32_t rank, const int64_t *v) {
    convnd_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    if (v) memcpy(s.v, v, sizeof(int64_t) * (size_t)clamp_len(rank, CONVND_MAX_RANK));
    return s;
}

convnd_ints convnd_ints_of(int32_t len, const int64_t *v) {
    convnd_ints s;
    memset(&s, 0, sizeof s);
    s.len = len;
    if (v) memcpy(s.v, v, sizeof(int64_t) * (size_t)clamp_len(len, CONVND_INTS_CAPACITY));
    return s;
}

convnd_pads convnd_pads_of(int32_t len, const int64_t *v) {
    convnd_pads s;
    memset(&s, 0, sizeof s);
    s.len = len;
    if (v) memcpy(s.v, v, sizeof(int64_t) * (size_t)clamp_len(len, CONVND_PADS_CAPACITY));
    return s;
}

const char *convnd_bind_shape_text(char *buf, const convnd_shape *shape) {
    return convnd_format_ints(buf, CONVND_LIST_TEXT, shape->v,
                              clamp_len(shape->rank, CONVND_MAX_RANK));
}

const char *convnd_bind_ints_text(char *buf, const convnd_ints *list) {
    return convnd_format_ints(buf, CONVND_LIST_TEXT, list->v,
                              clamp_len(list->len, CONVND_INTS_CAPACITY));
}

convnd_status convnd_bind_check_shape(const char *name, const convnd_shape *shape) {
    if (!shape) return convnd_error(CONVND_ERR_NULL_POINTER, "%s shape is NULL", name);
    if (shape->rank < 0 || shape->rank > CONVND_MAX_RANK)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s has rank %d; at most %d is supported",
                            name, (int)shape->rank, CONVND_MAX_RANK);
    for (int32_t i = 0; i < shape->rank; ++i)
        if (shape->v[i] < 0) {
            char text[CONVND_LIST_TEXT];
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "%s of size %s has a negative size %" PRId64 " at dimension %d",
                                name, convnd_bind_shape_text(text, shape), shape->v[i], (int)i);
        }
    return CONVND_OK;
}

convnd_status convnd_bind_expand(const char *name, const convnd_ints *list, int32_t dims,
                                 int64_t default_value, int broadcast, int64_t out[]) {
    if (!list) {
        for (int32_t t = 0; t < dims; ++t)
            out[t] = default_value;
        return CONVND_OK;
    }
    char text[CONVND_LIST_TEXT];
    if (list->len < 0 || list->len > CONVND_INTS_CAPACITY)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s has len=%d entries; expected %s%d",
                            name, (int)list->len, broadcast ? "1 or " : "", (int)dims);
    if (broadcast && list->len == 1) {
        for (int32_t t = 0; t < dims; ++t)
            out[t] = list->v[0];
        return CONVND_OK;
    }
    if (list->len != dims) {
        if (broadcast)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "expected %s to be a single integer value or a list of %d values "
                                "to match the convolution dimensions, but got %s=%s",
                                name, (int)dims, name, convnd_bind_ints_text(text, list));
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s=%s has %d entries; expected %d (one per spatial dim)", name,
                            convnd_bind_ints_text(text, list), (int)list->len, (int)dims);
    }
    for (int32_t t = 0; t < dims; ++t)
        out[t] = list->v[t];
    return CONVND_OK;
}

convnd_status convnd_bind_finish(const convnd_problem *bound, convnd_problem *out) {
    if (!out) return convnd_error(CONVND_ERR_NULL_POINTER, "output problem is NULL");
    convnd_status st = convnd_validate(bound);
    if (st) return st;
    *out = *bound;
    return CONVND_OK;
}

convnd_status convnd_bind_effective_kernel(int t, int64_t K, int64_t D, int64_t *E) {
    if (convnd_mul_overflows(D, K - 1, E) || convnd_add_overflows(*E, 1, E))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "effective kernel dilation[%d]*(kernel[%d]-1)+1 overflows int64 "
                            "(kernel=%" PRId64 ", dilation=%" PRId64 ")",
                            t, t, K, D);
    return CONVND_OK;
}

convnd_status convnd_bind_same_padding(int t, int64_t I, int64_t K, int64_t S, int64_t D, int upper,
                                       int64_t *P0, int64_t *P1) {
    int64_t E, total;
    if (S < 1) /* callers check first; this guards the division */
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "stride[%d]=%" PRId64 " must be >= 1", t,
                            S);
    convnd_status st = convnd_bind_effective_kernel(t, K, D, &E);
    if (st) return st;
    /* (ceil(I/S) - 1)*S <= I - 1, so only "+ E" can overflow. */
    if (convnd_add_overflows((convnd_ceil_div(I, S) - 1) * S, E, &total))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "SAME padding of dim %d overflows int64 (input=%" PRId64
                            ", kernel=%" PRId64 ", stride=%" PRId64 ", dilation=%" PRId64 ")",
                            t, I, K, S, D);
    total -= I;
    if (total < 0) total = 0;
    const int64_t small = total / 2, large = total - small;
    *P0 = upper ? small : large;
    *P1 = upper ? large : small;
    return CONVND_OK;
}
