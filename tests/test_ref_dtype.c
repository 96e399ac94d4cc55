/* The reference's dtype conversions: known bit patterns, exhaustive round trips over every
 * 16-bit pattern, and round-to-nearest-even checked as a property (the result is the nearest
 * representable value, ties to the even one) rather than against a second implementation. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include "convnd_ref.h"
#include "test_random.h"

typedef uint16_t (*encode_fn)(double);
typedef double (*decode_fn)(uint16_t);

Test(ref_dtype, f16_known_values) {
    const struct {
        double v;
        uint16_t bits;
    } cases[] = {
        {1.0, 0x3c00},           {-2.0, 0xc000},
        {65504.0, 0x7bff},       {65519.99, 0x7bff},
        {65520.0, 0x7c00},       {-1e6, 0xfc00},
        {INFINITY, 0x7c00},      {0x1p-14, 0x0400},
        {0x1p-24, 0x0001},       {0x1p-25, 0x0000},   /* tie with 0: even */
        {0x1.8p-25, 0x0001},     {0x1.8p-24, 0x0002}, /* tie 1.5 ulp: even (2) */
        {1.0 + 0x1p-11, 0x3c00}, {1.0 + 0x1.8p-10, 0x3c02},
        {-0.0, 0x8000},          {0.1, 0x2e66},
        {0x1p-1000, 0x0000},     {-0x1p-1000, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(convnd_ref_f64_to_f16(cases[i].v), cases[i].bits,
                     "f16(%a) = 0x%04x, expected 0x%04x", cases[i].v,
                     convnd_ref_f64_to_f16(cases[i].v), cases[i].bits);
    uint16_t nan = convnd_ref_f64_to_f16(NAN);
    cr_expect((nan & 0x7c00) == 0x7c00 && (nan & 0x03ff) != 0, "f16(NaN) = 0x%04x", nan);
}

Test(ref_dtype, bf16_known_values) {
    const struct {
        double v;
        uint16_t bits;
    } cases[] = {
        {1.0, 0x3f80},
        {-2.0, 0xc000},
        {1.0 + 0x1p-8, 0x3f80},
        {1.0 + 0x1.8p-7, 0x3f82},
        {3.3895313892515355e38, 0x7f7f},
        {FLT_MAX, 0x7f80},
        {0x1p-133, 0x0001},
        {0x1p-134, 0x0000},
        {0.1, 0x3dcd},
        {-INFINITY, 0xff80},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(convnd_ref_f64_to_bf16(cases[i].v), cases[i].bits,
                     "bf16(%a) = 0x%04x, expected 0x%04x", cases[i].v,
                     convnd_ref_f64_to_bf16(cases[i].v), cases[i].bits);
    uint16_t nan = convnd_ref_f64_to_bf16(NAN);
    cr_expect((nan & 0x7f80) == 0x7f80 && (nan & 0x007f) != 0, "bf16(NaN) = 0x%04x", nan);
}

/* Every pattern decodes and encodes back to itself (NaNs stay NaN). */
static void round_trip_all(encode_fn enc, decode_fn dec, const char *name) {
    for (uint32_t h = 0; h <= 0xffff; h++) {
        double v = dec((uint16_t)h);
        if (isnan(v)) {
            cr_expect(isnan(dec(enc(v))), "%s 0x%04x: NaN lost", name, h);
            continue;
        }
        cr_expect_eq(enc(v), h, "%s 0x%04x -> %a -> 0x%04x", name, h, v, enc(v));
    }
}

Test(ref_dtype, every_16_bit_pattern_round_trips) {
    round_trip_all(convnd_ref_f64_to_f16, convnd_ref_f16_to_f64, "f16");
    round_trip_all(convnd_ref_f64_to_bf16, convnd_ref_bf16_to_f64, "bf16");
}

/* Between each pair of neighbours a < b: the midpoint goes to the one with an even pattern,
 * anything nearer to one goes to that one. Covers subnormals and the top binade. */
static void ties_to_even(encode_fn enc, decode_fn dec, uint16_t max_finite, const char *name) {
    for (uint32_t h = 0; h < max_finite; h++) {
        const double a = dec((uint16_t)h), b = dec((uint16_t)(h + 1));
        const double mid = a + (b - a) / 2;
        const uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        cr_expect_eq(enc(mid), even, "%s: midpoint %a of 0x%04x", name, mid, h);
        cr_expect_eq(enc(mid - (b - a) / 1024), h, "%s: just below midpoint of 0x%04x", name, h);
        cr_expect_eq(enc(mid + (b - a) / 1024), h + 1, "%s: just above midpoint of 0x%04x", name,
                     h);
        cr_expect_eq(enc(-mid), (uint16_t)(even | 0x8000), "%s: -midpoint of 0x%04x", name, h);
    }
}

Test(ref_dtype, round_to_nearest_even) {
    ties_to_even(convnd_ref_f64_to_f16, convnd_ref_f16_to_f64, 0x7bff, "f16");
    ties_to_even(convnd_ref_f64_to_bf16, convnd_ref_bf16_to_f64, 0x7f7f, "bf16");
}

/* f32 -> bf16 agrees with the classic bit trick (add 0x7fff plus the lowest kept bit). */
Test(ref_dtype, bf16_matches_bit_trick_on_random_f32) {
    test_rng r = test_rng_seed(42);
    for (int i = 0; i < 200000; i++) {
        uint32_t bits = (uint32_t)test_rng_next(&r);
        float f;
        memcpy(&f, &bits, sizeof f);
        if (isnan(f)) continue;
        uint16_t trick = (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
        cr_expect_eq(convnd_ref_f32_to_bf16(f), trick, "bf16(%a): 0x%04x, bit trick 0x%04x",
                     (double)f, convnd_ref_f32_to_bf16(f), trick);
    }
}

Test(ref_dtype, load_store_round_ulp) {
    uint16_t h[2];
    float f[2];
    convnd_ref_store(CONVND_F16, h, 1, 1.0 + 0x1p-30);
    cr_expect_eq(h[1], 0x3c00);
    cr_expect_eq(convnd_ref_load(CONVND_F16, h, 1), 1.0);
    convnd_ref_store(CONVND_BF16, h, 0, -3.0);
    cr_expect_eq(convnd_ref_load(CONVND_BF16, h, 0), -3.0);
    convnd_ref_store(CONVND_F32, f, 1, 1.0 + 0x1p-30);
    cr_expect_eq(f[1], 1.0f);
    convnd_ref_store(CONVND_F32, f, 0, 1e300); /* overflow is infinity, not UB */
    cr_expect(isinf(f[0]) && f[0] > 0);
    cr_expect_eq(convnd_ref_round(CONVND_F16, 1.0 + 0x1.8p-11), 1.0 + 0x1p-10);
    cr_expect_eq(convnd_ref_round(CONVND_F32, 1.0 + 0x1p-30), 1.0);
    cr_expect_eq(convnd_ref_ulp(CONVND_F32, 1.0), 0x1p-23);
    cr_expect_eq(convnd_ref_ulp(CONVND_F32, -1.99), 0x1p-23);
    cr_expect_eq(convnd_ref_ulp(CONVND_F16, 1.0), 0x1p-10);
    cr_expect_eq(convnd_ref_ulp(CONVND_F16, 0.0), 0x1p-24);
    cr_expect_eq(convnd_ref_ulp(CONVND_F16, 0x1p-20), 0x1p-24);
    cr_expect_eq(convnd_ref_ulp(CONVND_BF16, 1024.0), 0x1p3);
    cr_expect_eq(convnd_ref_dtype_size(CONVND_F32), 4);
    cr_expect_eq(convnd_ref_dtype_size(CONVND_BF16), 2);
}
