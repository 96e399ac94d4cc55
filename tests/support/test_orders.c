#include "test_orders.h"
#include "convnd.h"

static const convnd_emu_order emu_orders[] = {CONVND_EMU_FORWARD, CONVND_EMU_REVERSE};
static const char *const emu_order_names[] = {"forward", "reverse"};

int test_order_count(void) {
    return convnd_active_device() == CONVND_DEVICE_EMULATED
               ? (int)(sizeof emu_orders / sizeof emu_orders[0])
               : 1;
}

void test_order_apply(int i) {
    if (convnd_active_device() == CONVND_DEVICE_EMULATED) convnd_emu_set_order(emu_orders[i], 0);
}

const char *test_order_name(int i) {
    return convnd_active_device() == CONVND_DEVICE_EMULATED ? emu_order_names[i] : "gpu";
}
