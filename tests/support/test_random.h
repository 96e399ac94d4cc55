/* Seeded random numbers for tests: reproducible everywhere (no libc rand). */
#ifndef CONVND_TEST_RANDOM_H
#define CONVND_TEST_RANDOM_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

typedef struct test_rng {
    uint64_t state;
} test_rng;

/* splitmix64: tiny, full-period, good enough for test data. In the header (C and C++) so that a
 * test binary without the CPU reference (tests/gpu/) has it too. */
static inline test_rng test_rng_seed(uint64_t seed) {
    test_rng r;
    r.state = seed ^ 0x9e3779b97f4a7c15ull;
    return r;
}

static inline uint64_t test_rng_next(test_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double test_rng_unit(test_rng *r) {
    return (double)(test_rng_next(r) >> 11) / 9007199254740992.0; /* 2^53 */
}

/* Uniform integer in [lo, hi] (inclusive). */
static inline int64_t test_rng_int(test_rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(test_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* n elements of dtype dt: random sign times a magnitude in [1/8, 1], rounded to dt. Never zero,
 * so a kernel that reads the wrong element (or nothing) cannot hide behind zeros. */
void test_fill_random(convnd_dtype dt, void *data, int64_t n, test_rng *r);

#endif
