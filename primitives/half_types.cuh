/* 16-bit floating types for kernels: convnd_half (IEEE binary16) and convnd_bf16 (bfloat16).
 * On the GPU they are __half and __nv_bfloat16; on the emulated device, structs holding the bits.
 * Kernel code converts only through convnd_to_f32(x) and convnd_from_f32<T>(f) (round to
 * nearest even, NaN stays NaN, overflow goes to infinity), which also accept float. Included by
 * portability.cuh. */
#ifndef CONVND_HALF_TYPES_CUH
#define CONVND_HALF_TYPES_CUH

#if defined(CONVND_EMU) && CONVND_EMU

struct convnd_half {
    uint16_t bits;
};
struct convnd_bf16 {
    uint16_t bits;
};

inline uint32_t convnd_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
inline float convnd_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

inline float convnd_to_f32(float x) {
    return x;
}

inline float convnd_to_f32(convnd_half h) {
    const uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    const uint32_t exp = (h.bits >> 10) & 0x1Fu;
    uint32_t mant = h.bits & 0x3FFu;
    if (exp == 0x1F) return convnd_f32_from_bits(sign | 0x7F800000u | (mant << 13)); /* inf, NaN */
    if (exp != 0) return convnd_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return convnd_f32_from_bits(sign);
    uint32_t e = 113; /* subnormal: normalize */
    while (!(mant & 0x400u)) {
        mant <<= 1;
        --e;
    }
    return convnd_f32_from_bits(sign | (e << 23) | ((mant & 0x3FFu) << 13));
}

inline float convnd_to_f32(convnd_bf16 b) {
    return convnd_f32_from_bits((uint32_t)b.bits << 16);
}

inline convnd_half convnd_f32_to_half(float f) {
    const uint32_t x = convnd_f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return convnd_half{(uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu))};
    if (a >= 0x477FF000u) return convnd_half{(uint16_t)(sign | 0x7C00u)}; /* >= 65520: inf */
    if (a >= 0x38800000u) {                                               /* normal half */
        uint32_t h = (a - 0x38000000u) >> 13;
        const uint32_t rest = a & 0x1FFFu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
        return convnd_half{(uint16_t)(sign | h)};
    }
    if (a <= 0x33000000u) return convnd_half{sign}; /* <= 2^-25: rounds to zero */
    const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - (a >> 23); /* 14..24: to units of 2^-24 */
    uint32_t q = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (q & 1u))) ++q;
    return convnd_half{(uint16_t)(sign | q)};
}

inline convnd_bf16 convnd_f32_to_bf16(float f) {
    const uint32_t x = convnd_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return convnd_bf16{(uint16_t)((x >> 16) | 0x40u)};
    return convnd_bf16{(uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16)};
}

template <typename T> struct convnd_f32_convert;
template <> struct convnd_f32_convert<float> {
    static float from(float x) { return x; }
};
template <> struct convnd_f32_convert<convnd_half> {
    static convnd_half from(float x) { return convnd_f32_to_half(x); }
};
template <> struct convnd_f32_convert<convnd_bf16> {
    static convnd_bf16 from(float x) { return convnd_f32_to_bf16(x); }
};

#else /* GPU */

typedef __half convnd_half;
typedef __nv_bfloat16 convnd_bf16;

__host__ __device__ __forceinline__ float convnd_to_f32(float x) {
    return x;
}
__host__ __device__ __forceinline__ float convnd_to_f32(convnd_half h) {
    return __half2float(h);
}
__host__ __device__ __forceinline__ float convnd_to_f32(convnd_bf16 b) {
    return __bfloat162float(b);
}

template <typename T> struct convnd_f32_convert;
template <> struct convnd_f32_convert<float> {
    __host__ __device__ static __forceinline__ float from(float x) { return x; }
};
template <> struct convnd_f32_convert<convnd_half> {
    __host__ __device__ static __forceinline__ convnd_half from(float x) {
        return __float2half_rn(x);
    }
};
template <> struct convnd_f32_convert<convnd_bf16> {
    __host__ __device__ static __forceinline__ convnd_bf16 from(float x) {
        return __float2bfloat16_rn(x);
    }
};

#endif

/* f32 to T, rounding to nearest even. */
template <typename T> __host__ __device__ __forceinline__ T convnd_from_f32(float x) {
    return convnd_f32_convert<T>::from(x);
}

#endif
