/* Seeded random numbers for tests: reproducible everywhere (no libc rand). */
#ifndef CONVND_TEST_RANDOM_H
#define CONVND_TEST_RANDOM_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

typedef struct test_rng {
    uint64_t state;
} test_rng;

test_rng test_rng_seed(uint64_t seed);
uint64_t test_rng_next(test_rng *r);
/* Uniform in [0, 1). */
double test_rng_unit(test_rng *r);
/* Uniform integer in [lo, hi] (inclusive). */
int64_t test_rng_int(test_rng *r, int64_t lo, int64_t hi);

/* n elements of dtype dt: random sign times a magnitude in [1/8, 1], rounded to dt. Never zero,
 * so a kernel that reads the wrong element (or nothing) cannot hide behind zeros. */
void test_fill_random(convnd_dtype dt, void *data, int64_t n, test_rng *r);

#endif
