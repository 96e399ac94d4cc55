/* The thread orders a kernel test runs in. On the emulated device: forward and reverse (a race
 * between barriers then shows up as a wrong result in at least one of them), or the list in
 * CONVND_TEST_ORDERS (e.g. "warp_ahead,reverse"; names as CONVND_EMU_ORDER). On a real GPU the
 * hardware decides: one pass. */
#ifndef CONVND_TEST_ORDERS_H
#define CONVND_TEST_ORDERS_H

/* Number of orders to run on the active device. */
int test_order_count(void);
/* Selects order i (0 <= i < test_order_count()). */
void test_order_apply(int i);
/* "forward", "reverse", ..., or "gpu". */
const char *test_order_name(int i);

#endif
