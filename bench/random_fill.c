/* Random benchmark data (bench/random_fill.h). */
#include <string.h>

#include "random_fill.h"
#include "convnd_ref.h"

bench_rng bench_rng_seed(uint64_t seed) {
    bench_rng r = {seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull};
    if (r.state == 0) r.state = 1;
    return r;
}

/* xorshift64* */
uint64_t bench_rng_next(bench_rng *r) {
    uint64_t x = r->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

void bench_fill_random(convnd_dtype dt, void *host, int64_t n, bench_rng *r) {
    for (int64_t i = 0; i < n; ++i) {
        const uint64_t bits = bench_rng_next(r);
        const double mag = 0.125 + 0.875 * (double)(bits >> 11) * 0x1.0p-53;
        convnd_ref_store(dt, host, i, (bits & 1) ? mag : -mag);
    }
}

void bench_fill_random_tiled(convnd_dtype dt, void *host, int64_t n, int64_t block, bench_rng *r) {
    const int64_t first = n < block ? n : block;
    bench_fill_random(dt, host, first, r);
    const size_t elem = convnd_ref_dtype_size(dt);
    for (int64_t done = first; done < n;) {
        const int64_t chunk = n - done < done ? n - done : done; /* doubling copies */
        memcpy((char *)host + (size_t)done * elem, host, (size_t)chunk * elem);
        done += chunk;
    }
}

void bench_poison(void *host, size_t bytes) {
    memset(host, 0xFF, bytes);
}
