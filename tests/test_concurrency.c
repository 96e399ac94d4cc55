/* Thread safety (include/convnd.h's guarantees): conv_nd, the planner and its autotune cache
 * called from several host threads at once, each thread with its own buffers, on the emulated
 * device. Results must equal the reference, every thread must see its own error messages, and
 * the shared cache must give every thread the right plan.
 *
 * Threads never call Criterion's assertions (they are not meant for secondary threads): each
 * records its first failure, and the test asserts after joining. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convnd.h"
#include "planner.h"
#include "problem_internal.h"
#include "registry.h"
#include "test_conv_case.h"
#include "test_failure_log.h"
#include "test_contract_support.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_random_problem.h"

TestSuite(concurrency, .timeout = 600);

enum { THREADS = 4 };

typedef struct worker {
    int id;
    int iterations;
    int runs;
    test_failure_log log;
    const char *cache_file;
} worker;

static void run_threads(worker *workers, void *(*body)(void *)) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i)
        cr_assert_eq(pthread_create(&t[i], NULL, body, &workers[i]), 0);
    for (int i = 0; i < THREADS; ++i)
        cr_assert_eq(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < THREADS; ++i)
        cr_expect_eq(workers[i].log.count, 0, "thread %d: %d failures; first: %s", i,
                     workers[i].log.count, workers[i].log.first);
}

/* ---- conv_nd ------------------------------------------------------------------------------ */

/* One problem on one thread: the planner's choice and one forced schedule against the
 * reference, then an error whose message only this thread can produce. */
static void one_problem(worker *w, const convnd_problem *p, int k) {
    char text[512], err[256], msg[512];
    convnd_problem_format(text, sizeof text, p);
    test_conv_case c;
    if (!test_case_init(&c, p, k % 2, 1000u * (uint64_t)w->id + (uint64_t)k, err, sizeof err)) {
        test_failure(&w->log, "%s: %s", text, err);
        return;
    }
    char specs[64][TEST_SPEC_LEN];
    const int n = test_supporting_specs(&c.p, specs, 64);
    const char *plans[2] = {NULL, n ? specs[(w->id + k) % n] : NULL};
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && !plans[1]) break;
        const convnd_status st = test_case_run(&c, plans[i]);
        if (st != CONVND_OK)
            test_failure(&w->log, "%s on %s: %s (%s)", plans[i] ? plans[i] : "planner", text,
                         convnd_status_string(st), convnd_last_error());
        else if (!test_case_check(&c, msg, sizeof msg))
            test_failure(&w->log, "%s on %s: %s", plans[i] ? plans[i] : "planner", text, msg);
        ++w->runs;
    }
    /* groups = 1000 + id divides none of the random problems' channel counts */
    convnd_problem bad = c.p;
    bad.groups = 1000 + w->id;
    char want[32];
    snprintf(want, sizeof want, "groups=%d ", 1000 + w->id);
    const convnd_status st = conv_nd(&bad, c.dx, c.dw, c.db, c.dz, c.dy, NULL, 0, NULL, NULL);
    if (st != CONVND_ERR_INVALID_ARGUMENT || !strstr(convnd_last_error(), want))
        test_failure(&w->log, "thread %d's own error came back as '%s': '%s'", w->id,
                     convnd_status_string(st), convnd_last_error());
    char name[128];
    if (convnd_plan_name(&c.p, NULL, name, sizeof name) != CONVND_OK ||
        !convnd_schedule_supports(name, &c.p, NULL, 0))
        test_failure(&w->log, "plan name '%s' for %s: %s", name, text, convnd_last_error());
    test_case_free(&c);
}

static void *conv_worker(void *arg) {
    worker *w = arg;
    test_rng r = test_rng_seed(0xc0c0 + (uint64_t)w->id);
    const test_problem_limits lim = {.max_outputs = 300, .max_macs = 12000};
    for (int k = 0; k < w->iterations; ++k) {
        convnd_problem p;
        test_random_problem(&r, &lim, &p);
        one_problem(w, &p, k);
    }
    return NULL;
}

Test(concurrency, conv_nd_from_many_threads) {
    worker workers[THREADS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < THREADS; ++i)
        workers[i] = (worker){.id = i, .iterations = 6};
    run_threads(workers, conv_worker);
    int runs = 0;
    for (int i = 0; i < THREADS; ++i)
        runs += workers[i].runs;
    cr_expect_geq(runs, THREADS * 6);
}

/* ---- the planner's autotune cache --------------------------------------------------------- */

enum { CACHED_PROBLEMS = 24 };

static convnd_problem cached_problem(int i) {
    convnd_problem p;
    char text[128], err[128];
    snprintf(text, sizeof text, "fwd 2d N=%d Ci=4 Co=6 g=2 I=%d,5 K=3 P0=1 P1=1", 1 + i % 5, 6 + i);
    if (!test_problem_parse(text, &p, err, sizeof err)) abort();
    p.y_layout = CONVND_CHANNELS_FIRST; /* the planner's functions take a resolved layout */
    return p;
}

/* The file says direct:t128 then direct:t256 for even problems (the later line wins), and only
 * direct:t128 for odd ones. */
static int expected_config(int i) {
    return i % 2 == 0 ? 1 : 0;
}

static void *cache_worker(void *arg) {
    worker *w = arg;
    for (int k = 0; k < w->iterations; ++k) {
        const int i = (k * 7 + w->id * 5) % CACHED_PROBLEMS;
        const convnd_problem p = cached_problem(i);
        convnd_choice plan = {-1, -1};
        /* half the lookups may only find it in memory, after some thread read the file */
        const char *file = k % 2 ? NULL : w->cache_file;
        convnd_conv_params params;
        if (convnd_params_from_problem(&p, &params) != CONVND_OK) {
            test_failure(&w->log, "problem %d: %s", i, convnd_last_error());
            continue;
        }
        if (!convnd_autotune_lookup(&p, &params, file, &plan)) {
            if (file) test_failure(&w->log, "problem %d not found in the cache file", i);
            continue;
        }
        if (strcmp(convnd_choice_schedule_name(plan), "direct") != 0 ||
            plan.config != expected_config(i))
            test_failure(&w->log, "problem %d: cached plan %s:%s, expected direct config %d", i,
                         convnd_choice_schedule_name(plan), convnd_choice_config_name(plan),
                         expected_config(i));
        char name[128];
        if (convnd_plan_name(&p, NULL, name, sizeof name) != CONVND_OK)
            test_failure(&w->log, "plan name of problem %d: %s", i, convnd_last_error());
        size_t ws;
        if (convnd_workspace_size(&p, NULL, &ws) != CONVND_OK)
            test_failure(&w->log, "workspace size of problem %d: %s", i, convnd_last_error());
        ++w->runs;
    }
    return NULL;
}

Test(concurrency, planner_cache_from_many_threads) {
    char path[] = "/tmp/convnd_cache_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    for (int i = 0; i < CACHED_PROBLEMS; ++i) {
        const convnd_problem p = cached_problem(i);
        const unsigned long long key = (unsigned long long)convnd_problem_key(&p);
        fprintf(f, "%016llx direct:t128\n", key);
        if (i % 2 == 0) fprintf(f, "%016llx direct:t256\n", key);
    }
    fclose(f);
    worker workers[THREADS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < THREADS; ++i)
        workers[i] = (worker){.id = i, .iterations = 400, .cache_file = path};
    run_threads(workers, cache_worker);
    remove(path);
    int runs = 0;
    for (int i = 0; i < THREADS; ++i)
        runs += workers[i].runs;
    cr_expect_geq(runs, THREADS * 200, "only %d lookups found their plan", runs);
}
