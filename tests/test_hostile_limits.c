/* Limits and messages under hostile settings (issue #18, findings 2, 5 and 6): a launch that
 * cannot get its resources writes nothing; emulator settings past their range are refused or
 * capped; an autotune cache path that is a FIFO or a device never blocks; a device error from
 * any thread carries a message; a huge forced-schedule string does not hide the reason. */
#define _GNU_SOURCE /* setenv, mkfifo */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convnd.h"
#include "emu_internal.h"
#include "autotune.h"
#include "test_conv_case.h"
#include "test_schedule_runs.h"

TestSuite(hostile_limits, .timeout = 60);

/* ---- finding 2: resources first, then blocks ------------------------------------------------ */

Test(hostile_limits, fiber_failure_on_a_helper_thread_writes_nothing) {
    /* 1024 blocks of 128 threads on 4 host threads; every helper fails to create its fibers */
    const convnd_problem p = test_parse_valid("fwd 2d N=1 Ci=2 Co=8 I=128,128 K=1");
    test_conv_case c;
    char err[256];
    cr_assert(test_case_init(&c, &p, 0, 5, err, sizeof err), "%s", err);
    convnd_emu_set_host_threads(4);
    convnd_emu_inject_fiber_failure(1);
    const convnd_status st = test_case_run(&c, "direct:t128");
    convnd_emu_inject_fiber_failure(0);
    const char *msg = convnd_last_error();
    cr_expect_eq(st, CONVND_ERR_DEVICE, "status %d: %s", (int)st, msg);
    cr_expect(strstr(msg, "before any block ran"), "message: %s", msg);
    cr_expect(!strstr(msg, "kernel kernel"), "message repeats 'kernel': %s", msg);
    int64_t written = 0;
    for (int64_t i = 0; i < c.yd.numel; ++i)
        written += !test_is_poison(c.p.dtype, c.hy, i);
    cr_expect_eq(written, 0, "%lld of %lld elements of y written by a failed launch",
                 (long long)written, (long long)c.yd.numel);
    /* and the next launch, with resources, works */
    cr_expect_eq(test_case_run(&c, "direct:t128"), CONVND_OK, "%s", convnd_last_error());
    cr_expect(test_case_check(&c, err, sizeof err), "%s", err);
    test_case_free(&c);
}

/* ---- finding 5: limits -------------------------------------------------------------------- */

Test(hostile_limits, huge_fiber_stack_setting_is_refused) {
    static const char *const bad[] = {"18014398509481984", "18446744073709551615", "15", "-1",
                                      "12abc"};
    const convnd_problem p = test_parse_valid("fwd 1d Ci=2 Co=2 I=8 K=3");
    test_conv_case c;
    char err[256];
    cr_assert(test_case_init(&c, &p, 0, 5, err, sizeof err), "%s", err);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        setenv("CONVND_EMU_STACK_KB", bad[i], 1);
        const convnd_status st = test_case_run(&c, "direct");
        cr_expect_eq(st, CONVND_ERR_INVALID_ARGUMENT, "CONVND_EMU_STACK_KB=%s: status %d", bad[i],
                     (int)st);
        cr_expect(strstr(convnd_last_error(), "CONVND_EMU_STACK_KB"), "%s", convnd_last_error());
    }
    setenv("CONVND_EMU_STACK_KB", "512", 1);
    cr_expect_eq(test_case_run(&c, "direct"), CONVND_OK, "%s", convnd_last_error());
    cr_expect(test_case_check(&c, err, sizeof err), "%s", err);
    test_case_free(&c);
}

Test(hostile_limits, host_threads_are_capped) {
    convnd_emu_set_host_threads(1 << 30);
    cr_expect_eq(convnd_emu_host_threads(), 1024);
    convnd_emu_set_host_threads(INT32_MAX);
    cr_expect_eq(convnd_emu_host_threads(), 1024);
    convnd_emu_set_host_threads(3);
    cr_expect_eq(convnd_emu_host_threads(), 3);
}

Test(hostile_limits, autotune_cache_that_is_not_a_regular_file_never_blocks) {
    char fifo[] = "/tmp/convnd_fifo_XXXXXX";
    cr_assert(mkdtemp(fifo));
    char path[64];
    snprintf(path, sizeof path, "%s/cache", fifo);
    cr_assert_eq(mkfifo(path, 0600), 0);
    const convnd_problem p = test_parse_valid("fwd 2d Ci=4 Co=4 I=8 K=3");
    convnd_choice plan;
    /* a FIFO without a writer (fopen would wait for one forever), then a device */
    const convnd_conv_params params = test_params_of(&p);
    cr_expect_eq(convnd_autotune_lookup(&p, &params, path, &plan), 0);
    cr_expect_eq(convnd_autotune_lookup(&p, &params, "/dev/zero", &plan), 0);
    unlink(path);
    rmdir(fifo);
}

/* A build without CUDA asked for the GPU: the error reaches every thread with its reason (it
 * once came back from a second thread as CONVND_ERR_DEVICE with an empty message). */
static void *conv_on_other_thread(void *arg) {
    char *msg = arg;
    const convnd_problem p = test_parse_valid("fwd 1d Ci=1 Co=1 I=4 K=1");
    float x[4] = {1, 2, 3, 4}, w[1] = {1}, y[4];
    const convnd_status st = conv_nd(&p, x, w, NULL, NULL, y, NULL, 0, NULL, NULL);
    snprintf(msg, 512, "%d:%s", (int)st, st == CONVND_OK ? "" : convnd_last_error());
    return NULL;
}

Test(hostile_limits, device_error_on_a_second_thread_has_a_message) {
    setenv("CONVND_DEVICE", "gpu", 1);
    if (convnd_active_device() != CONVND_DEVICE_GPU ||
        strstr(convnd_device_name(), "unusable") == NULL)
        cr_skip_test("a usable GPU is present: nothing to refuse");
    char msg[512] = "";
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, conv_on_other_thread, msg), 0);
    pthread_join(th, NULL);
    /* the status depends on where the unusable GPU is noticed (CONVND_ERR_DEVICE at the launch,
     * or no schedule for an unknown architecture); either way it must say why */
    const char *colon = strchr(msg, ':');
    cr_expect(strncmp(msg, "0:", 2) != 0 && colon && strlen(colon + 1) > 0,
              "second thread: expected an error with a message, got '%s'", msg);
}

/* ---- finding 6: messages ------------------------------------------------------------------ */

Test(hostile_limits, huge_schedule_string_keeps_the_reason_visible) {
    const size_t n = 100000;
    char *spec = malloc(n + 16);
    cr_assert(spec);
    memset(spec, 'a', n);
    spec[n] = '\0';
    const convnd_problem p = test_parse_valid("fwd 1d Ci=2 Co=2 I=8 K=3");
    convnd_options opts = {0};
    opts.schedule = spec;
    size_t ws;
    cr_expect_eq(convnd_workspace_size(&p, &opts, &ws), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "...': unknown schedule (valid: direct") ||
                  strstr(convnd_last_error(), "...': unknown schedule (valid:"),
              "%s", convnd_last_error());
    cr_expect(strstr(convnd_last_error(), "direct"), "valid names cut off: %s",
              convnd_last_error());
    memcpy(spec, "direct:", 7);
    cr_expect_eq(convnd_workspace_size(&p, &opts, &ws), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "of 'direct' (valid: t128"), "%s", convnd_last_error());
    free(spec);
}
