#include "fuzz_input.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Values where int64 size arithmetic breaks: the limits, the int32 boundary the kernels' index
 * width switches at, and roots of 2^63 and 2^31 (products of two or three such sizes are just
 * past a limit). */
static const int64_t extreme_values[] = {
    INT64_MAX,
    INT64_MIN,
    INT64_MAX - 1,
    INT64_MIN + 1,
    INT64_MAX / 2,
    INT64_MIN / 2,
    (int64_t)1 << 62,
    -((int64_t)1 << 62),
    (int64_t)1 << 32,
    ((int64_t)1 << 32) - 1,
    (int64_t)1 << 31,
    ((int64_t)1 << 31) - 1,
    ((int64_t)1 << 31) + 1,
    -((int64_t)1 << 31),
    (int64_t)1 << 30,
    ((int64_t)1 << 30) + 1,
    3037000499, /* floor(sqrt(2^63)) */
    3037000500, /* its square passes INT64_MAX */
    2097151,    /* floor(cbrt(2^63)) */
    2097152,    /* 2^21: its cube is 2^63 */
    46340,      /* floor(sqrt(2^31)) */
    46341,      /* its square passes INT32_MAX */
    1290,       /* floor(cbrt(2^31)) */
    1291,       /* its cube passes INT32_MAX */
    65535,
    65536,
    (int64_t)1 << 20,
    1000000007,
    -1000000007,
    INT32_MAX,
    INT32_MIN,
    (int64_t)UINT32_MAX,
};

uint8_t fuzz_byte(fuzz_input *in) {
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

int fuzz_flag(fuzz_input *in) {
    return fuzz_byte(in) & 1;
}

static uint64_t raw_bits(fuzz_input *in, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= (uint64_t)fuzz_byte(in) << (8 * i);
    return v;
}

int64_t fuzz_i64(fuzz_input *in) {
    const uint8_t t = fuzz_byte(in);
    if (t < 0x80) return (int64_t)t - 16;
    if (t < 0xa0) {
        const size_t n = sizeof extreme_values / sizeof extreme_values[0];
        return extreme_values[(t - 0x80) % n];
    }
    if (t < 0xdf) return (int64_t)1 << (t - 0xa0);
    if (t == 0xdf) return -((int64_t)1 << 62);
    if (t < 0xf0) return (int64_t)raw_bits(in, 2);
    const uint64_t u = raw_bits(in, 8);
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

int32_t fuzz_i32(fuzz_input *in) {
    const uint8_t t = fuzz_byte(in);
    if (t != 0x7f) return (int32_t)(int8_t)t;
    const uint32_t u = (uint32_t)raw_bits(in, 4);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static const float float_values[] = {0.0f,   1.0f,     -1.0f,     0.5f,    2.0f,     -0.0f,
                                     NAN,    INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, FLT_MIN,
                                     1e-45f, 3.0f,     -2.5f,     1e30f};

float fuzz_f32(fuzz_input *in) {
    const uint8_t t = fuzz_byte(in);
    if (t < 0xf0) return float_values[t % (sizeof float_values / sizeof float_values[0])];
    const uint32_t u = (uint32_t)raw_bits(in, 4);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

double fuzz_f64(fuzz_input *in) {
    return (double)fuzz_f32(in);
}

void fuzz_string(fuzz_input *in, char *buf, size_t cap) {
    size_t n = fuzz_byte(in);
    if (n > cap - 1) n = cap - 1;
    for (size_t i = 0; i < n; ++i)
        buf[i] = (char)fuzz_byte(in);
    buf[n] = '\0';
}
