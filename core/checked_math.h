/* Overflow-checked int64 arithmetic for every size, element and byte count. Each helper
 * stores the result in *r and returns 1 when the exact result does not fit int64 (then *r
 * holds the wrapped value and must not be used). */
#ifndef CONVND_CHECKED_MATH_H
#define CONVND_CHECKED_MATH_H

#include <stdint.h>

static inline int convnd_add_overflows(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}

static inline int convnd_sub_overflows(int64_t a, int64_t b, int64_t *r) {
    return __builtin_sub_overflow(a, b, r);
}

static inline int convnd_mul_overflows(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}

/* Product of n values (1 for n == 0). */
static inline int convnd_product_overflows(const int64_t *v, int n, int64_t *r) {
    int64_t acc = 1;
    for (int i = 0; i < n; ++i)
        if (convnd_mul_overflows(acc, v[i], &acc)) return 1;
    *r = acc;
    return 0;
}

/* Floor division for b > 0 (C's '/' truncates toward zero). */
static inline int64_t convnd_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Ceiling division for a >= 0, b > 0, without forming a + b - 1 (which may overflow). */
static inline int64_t convnd_ceil_div(int64_t a, int64_t b) {
    return a / b + (a % b != 0);
}

#endif
