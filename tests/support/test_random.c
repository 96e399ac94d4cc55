#include "test_random.h"
#include "convnd_ref.h"

/* splitmix64: tiny, full-period, good enough for test data */
test_rng test_rng_seed(uint64_t seed) {
    return (test_rng){seed ^ 0x9e3779b97f4a7c15ull};
}

uint64_t test_rng_next(test_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double test_rng_unit(test_rng *r) {
    return (double)(test_rng_next(r) >> 11) * 0x1.0p-53;
}

int64_t test_rng_int(test_rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(test_rng_next(r) % (uint64_t)(hi - lo + 1));
}

void test_fill_random(convnd_dtype dt, void *data, int64_t n, test_rng *r) {
    for (int64_t i = 0; i < n; ++i) {
        const double mag = 0.125 + 0.875 * test_rng_unit(r);
        convnd_ref_store(dt, data, i, (test_rng_next(r) & 1) ? mag : -mag);
    }
}
