#include "test_orders.h"

#include <stdlib.h>
#include <string.h>

#include "convnd.h"

typedef struct named_order {
    const char *name;
    convnd_emu_order order;
} named_order;

static const named_order known[] = {{"forward", CONVND_EMU_FORWARD},
                                    {"reverse", CONVND_EMU_REVERSE},
                                    {"shuffle", CONVND_EMU_SHUFFLE},
                                    {"warp_ahead", CONVND_EMU_WARP_AHEAD}};
enum { KNOWN = sizeof known / sizeof known[0] };

static const named_order *chosen[KNOWN];
static int chosen_count = -1;

/* The orders of this run: CONVND_TEST_ORDERS (comma-separated names from `known`; others are
 * skipped), else forward and reverse. */
static int choose(void) {
    if (chosen_count >= 0) return chosen_count;
    int n = 0;
    const char *env = getenv("CONVND_TEST_ORDERS");
    for (const char *s = env ? env : ""; *s && n < KNOWN;) {
        const size_t len = strcspn(s, ",");
        for (int k = 0; k < KNOWN; ++k)
            if (strlen(known[k].name) == len && !strncmp(s, known[k].name, len))
                chosen[n++] = &known[k];
        s += len + (s[len] == ',');
    }
    if (n == 0) {
        chosen[n++] = &known[0];
        chosen[n++] = &known[1];
    }
    return chosen_count = n;
}

int test_order_count(void) {
    return convnd_active_device() == CONVND_DEVICE_EMULATED ? choose() : 1;
}

int test_order_count_for_determinism(void) {
    if (convnd_active_device() != CONVND_DEVICE_EMULATED) return 1;
    return choose() < 2 ? 2 : choose();
}

/* Order i: the run's list, then (one order chosen) reverse, or forward when that one is reverse. */
static const named_order *order_at(int i) {
    if (i < choose()) return chosen[i];
    if (i == 1 && choose() == 1) return chosen[0] == &known[1] ? &known[0] : &known[1];
    return NULL;
}

void test_order_apply(int i) {
    /* seed 1 for the seeded orders (shuffle, warp_ahead): reproducible */
    const named_order *o = order_at(i);
    if (convnd_active_device() == CONVND_DEVICE_EMULATED && o) convnd_emu_set_order(o->order, 1);
}

const char *test_order_name(int i) {
    if (convnd_active_device() != CONVND_DEVICE_EMULATED) return "gpu";
    const named_order *o = order_at(i);
    return o ? o->name : "?";
}
