/* Random benchmark data: never zeros (zeros hide unwritten outputs and wrong indexing, and can
 * run faster than real data), reproducible from a seed. */
#ifndef CONVND_BENCH_RANDOM_FILL_H
#define CONVND_BENCH_RANDOM_FILL_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

typedef struct bench_rng {
    uint64_t state;
} bench_rng;

bench_rng bench_rng_seed(uint64_t seed);
uint64_t bench_rng_next(bench_rng *r);

/* n elements of dtype dt on the host: a random sign times a magnitude in [1/8, 1]. */
void bench_fill_random(convnd_dtype dt, void *host, int64_t n, bench_rng *r);

/* Like bench_fill_random, but only the first min(n, block) elements are drawn and the rest
 * repeat them: large timing buffers fill in milliseconds, with data that is still random to
 * the arithmetic units. */
void bench_fill_random_tiled(convnd_dtype dt, void *host, int64_t n, int64_t block, bench_rng *r);

/* Fills bytes with 0xFF: NaN in f32, f16 and bf16, so an output element that a candidate did
 * not write is caught. */
void bench_poison(void *host, size_t bytes);

#endif
