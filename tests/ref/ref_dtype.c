/* dtype conversions for the reference: one generic round-to-nearest-even onto a binary format
 * (so f64 -> f16/bf16 is a single rounding, never f64 -> f32 -> f16) and bit-exact decoding. */
#include <math.h>
#include "convnd_ref.h"

/* A binary floating-point format: precision (bits, implicit one included), exponent field
 * width and smallest normal exponent; the largest finite exponent (= the bias) is 1 - emin. */
typedef struct binary_format {
    int precision;
    int exponent_bits;
    int emin; /* 1 - bias */
} binary_format;

static const binary_format FORMAT_F16 = {11, 5, -14};
static const binary_format FORMAT_BF16 = {8, 8, -126};
static const binary_format FORMAT_F32 = {24, 8, -126};

static int format_emax(binary_format f) {
    return 1 - f.emin;
}

/* Exponent e with 2^e <= a < 2^(e+1), for finite a > 0. */
static int binade(double a) {
    int ex;
    frexp(a, &ex);
    return ex - 1;
}

/* v rounded to nearest even in format f, with an unbounded exponent above and gradual
 * underflow below; overflow past the largest finite value gives infinity (IEEE 754 §7.4). */
static double round_to_format(double v, binary_format f) {
    if (isnan(v) || isinf(v) || v == 0.0) return v;
    double a = fabs(v);
    int e = binade(a);
    if (e < f.emin) e = f.emin;
    double quantum = ldexp(1.0, e - (f.precision - 1));
    double r = rint(a / quantum) * quantum; /* scaling by a power of two is exact */
    double max_finite = ldexp(2.0 - ldexp(1.0, 1 - f.precision), format_emax(f));
    if (r > max_finite) r = INFINITY;
    return copysign(r, v);
}

/* Bits of a value already representable in the 16-bit format f. */
static uint16_t encode16(double r, binary_format f) {
    int mant_bits = f.precision - 1;
    uint16_t sign = signbit(r) ? (uint16_t)0x8000u : (uint16_t)0;
    uint32_t exp_all_ones = (1u << f.exponent_bits) - 1u;
    if (isnan(r))
        return (uint16_t)(0x7fffu & ((exp_all_ones << mant_bits) | (1u << (mant_bits - 1))));
    double a = fabs(r);
    if (isinf(a)) return (uint16_t)(sign | (exp_all_ones << mant_bits));
    if (a == 0.0) return sign;
    int e = binade(a);
    if (e < f.emin) { /* subnormal: exponent field 0 */
        uint32_t mant = (uint32_t)ldexp(a, -(f.emin - mant_bits));
        return (uint16_t)(sign | mant);
    }
    uint32_t mant = (uint32_t)ldexp(a, -(e - mant_bits)) - (1u << mant_bits);
    uint32_t biased = (uint32_t)(e + format_emax(f));
    return (uint16_t)(sign | (biased << mant_bits) | mant);
}

static double decode16(uint16_t h, binary_format f) {
    int mant_bits = f.precision - 1;
    uint32_t exp_all_ones = (1u << f.exponent_bits) - 1u;
    uint32_t mant = h & ((1u << mant_bits) - 1u);
    uint32_t biased = (h >> mant_bits) & exp_all_ones;
    double v;
    if (biased == exp_all_ones)
        v = mant ? NAN : INFINITY;
    else if (biased == 0)
        v = ldexp((double)mant, f.emin - mant_bits);
    else
        v = ldexp((double)(mant | (1u << mant_bits)), (int)biased - format_emax(f) - mant_bits);
    return (h & 0x8000u) ? -v : v;
}

uint16_t convnd_ref_f64_to_f16(double v) {
    return encode16(round_to_format(v, FORMAT_F16), FORMAT_F16);
}
uint16_t convnd_ref_f64_to_bf16(double v) {
    return encode16(round_to_format(v, FORMAT_BF16), FORMAT_BF16);
}
double convnd_ref_f16_to_f64(uint16_t h) {
    return decode16(h, FORMAT_F16);
}
double convnd_ref_bf16_to_f64(uint16_t b) {
    return decode16(b, FORMAT_BF16);
}

size_t convnd_ref_dtype_size(convnd_dtype dt) {
    switch (dt) {
    case CONVND_F32:
        return 4;
    case CONVND_F16:
    case CONVND_BF16:
        return 2;
    }
    return 0;
}

double convnd_ref_load(convnd_dtype dt, const void *data, int64_t i) {
    switch (dt) {
    case CONVND_F32:
        return ((const float *)data)[i];
    case CONVND_F16:
        return convnd_ref_f16_to_f64(((const uint16_t *)data)[i]);
    case CONVND_BF16:
        return convnd_ref_bf16_to_f64(((const uint16_t *)data)[i]);
    }
    return NAN;
}

void convnd_ref_store(convnd_dtype dt, void *data, int64_t i, double v) {
    switch (dt) {
    /* rounded first so the conversion is exact (an out-of-range double -> float is UB in C) */
    case CONVND_F32:
        ((float *)data)[i] = (float)round_to_format(v, FORMAT_F32);
        break;
    case CONVND_F16:
        ((uint16_t *)data)[i] = convnd_ref_f64_to_f16(v);
        break;
    case CONVND_BF16:
        ((uint16_t *)data)[i] = convnd_ref_f64_to_bf16(v);
        break;
    }
}

static binary_format format_of(convnd_dtype dt) {
    switch (dt) {
    case CONVND_F16:
        return FORMAT_F16;
    case CONVND_BF16:
        return FORMAT_BF16;
    case CONVND_F32:
        break;
    }
    return FORMAT_F32;
}

double convnd_ref_round(convnd_dtype dt, double v) {
    return round_to_format(v, format_of(dt));
}

double convnd_ref_ulp(convnd_dtype dt, double v) {
    binary_format f = format_of(dt);
    if (isnan(v) || isinf(v)) return fabs(v);
    int e = v == 0.0 ? f.emin : binade(fabs(v));
    if (e < f.emin) e = f.emin;
    return ldexp(1.0, e - (f.precision - 1));
}
