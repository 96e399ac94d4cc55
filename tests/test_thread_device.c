/* convnd_set_thread_device: a per-thread override of the device (what the PyTorch binding uses
 * to run CPU tensors on the emulated device and CUDA tensors on the GPU in one process). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "convnd.h"

static void *other_thread_device(void *out) {
    *(convnd_device *)out = convnd_active_device();
    return NULL;
}

Test(thread_device, override_applies_to_this_thread_only) {
    const convnd_device process = convnd_active_device();
    cr_assert_eq(convnd_set_thread_device(CONVND_DEVICE_EMULATED), CONVND_OK);
    cr_assert_eq(convnd_active_device(), CONVND_DEVICE_EMULATED);
    convnd_device seen = (convnd_device)-1;
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, other_thread_device, &seen), 0);
    pthread_join(t, NULL);
    cr_assert_eq(seen, process, "another thread follows the process's device");
    /* Memory calls follow the override too. */
    void *p = NULL;
    cr_assert_eq(convnd_malloc(&p, 16), CONVND_OK);
    memset(p, 0, 16); /* emulated device memory is host memory */
    cr_assert_eq(convnd_free(p), CONVND_OK);
    cr_assert_eq(convnd_set_thread_device(CONVND_DEVICE_AUTO), CONVND_OK);
    cr_assert_eq(convnd_active_device(), process, "AUTO removes the override");
}

Test(thread_device, bad_requests_are_errors_and_change_nothing) {
    cr_assert_eq(convnd_set_thread_device(CONVND_DEVICE_EMULATED), CONVND_OK);
    cr_assert_eq(convnd_set_thread_device((convnd_device)7), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "device=7"), "%s", convnd_last_error());
#ifndef CONVND_HAVE_CUDA
    cr_assert_eq(convnd_set_thread_device(CONVND_DEVICE_GPU), CONVND_ERR_DEVICE);
    cr_assert(strstr(convnd_last_error(), "built without CUDA"), "%s", convnd_last_error());
#endif
    cr_assert_eq(convnd_active_device(), CONVND_DEVICE_EMULATED, "the override is unchanged");
    convnd_set_thread_device(CONVND_DEVICE_AUTO);
}
