/* test_orders.h for convnd_gpu_conformance: on a GPU the hardware orders the threads, so a test
 * runs once (support/test_orders.c picks emulated orders, and needs the library). */
#include "test_orders.h"

int test_order_count(void) {
    return 1;
}

void test_order_apply(int i) {
    (void)i;
}

const char *test_order_name(int i) {
    (void)i;
    return "gpu";
}
