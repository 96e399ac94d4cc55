#include "test_random.h"
#include "convnd_ref.h"

void test_fill_random(convnd_dtype dt, void *data, int64_t n, test_rng *r) {
    for (int64_t i = 0; i < n; ++i) {
        const double mag = 0.125 + 0.875 * test_rng_unit(r);
        convnd_ref_store(dt, data, i, (test_rng_next(r) & 1) ? mag : -mag);
    }
}
