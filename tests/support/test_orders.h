/* The thread orders a kernel test runs in. On the emulated device: forward and reverse (a race
 * between barriers then shows up as a wrong result in at least one of them), or the list in
 * CONVND_TEST_ORDERS (e.g. "warp_ahead,reverse"; names as CONVND_EMU_ORDER). On a real GPU the
 * hardware decides: one pass. */
#ifndef CONVND_TEST_ORDERS_H
#define CONVND_TEST_ORDERS_H

/* Number of orders to run on the active device. */
int test_order_count(void);
/* A determinism check compares runs in different orders, so on the emulated device it needs at
 * least two even when CONVND_TEST_ORDERS names one (tests/run_sanitized.sh runs one): the run's
 * orders, then the other of forward/reverse. Indices past test_order_count() are valid for
 * test_order_apply and test_order_name up to this count. */
int test_order_count_for_determinism(void);
/* Selects order i (0 <= i < test_order_count(), or test_order_count_for_determinism()). */
void test_order_apply(int i);
/* "forward", "reverse", ..., or "gpu". */
const char *test_order_name(int i);

#endif
