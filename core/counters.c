/* Relaxed atomic counters: a count, not a synchronization point; one add per validation or
 * planner run is noise beside either. */
#include "counters.h"

#include <stdatomic.h>

static _Atomic uint64_t validations, plans;

void convnd_count_validation(void) {
    atomic_fetch_add_explicit(&validations, 1, memory_order_relaxed);
}

void convnd_count_plan(void) {
    atomic_fetch_add_explicit(&plans, 1, memory_order_relaxed);
}

void convnd_get_counters(convnd_counters *out) {
    if (!out) return;
    out->validations = atomic_load_explicit(&validations, memory_order_relaxed);
    out->plans = atomic_load_explicit(&plans, memory_order_relaxed);
}
