/* The concurrency scenarios as a plain program, for ThreadSanitizer (tests/run_tsan.sh):
 * Criterion's sandbox cannot start under TSan (its arena is mapped at random addresses TSan
 * refuses, and the runner then crashes), so the Criterion tests concurrency (all) and
 * plan many_threads are mirrored here on the same test support:
 *   1. conv_nd from THREADS threads at once, seeded random problems each, against the reference,
 *      each thread also getting back its own error message and plan name;
 *   2. one plan executed from THREADS threads at once on their own buffers (and workspaces),
 *      bit-identical to a conv_nd run of the same case, several times each.
 * The emulated device runs every launch on CONVND_EMU_THREADS host workers, so the caller
 * threads' launches share the worker pool. Exit status 0 when every check passes (TSan itself
 * exits non-zero on a report with halt_on_error=1). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "test_conv_case.h"
#include "test_failure_log.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_random_problem.h"

enum { THREADS = 4, PROBLEMS = 5, EXECUTIONS = 3 };

typedef struct worker {
    int id, runs;
    test_failure_log log;
    const convnd_plan_t *plan; /* scenario 2 */
    const convnd_problem *problem;
} worker;

/* Scenario 1: one thread's random problems through conv_nd. */
static void *conv_worker(void *arg) {
    worker *w = arg;
    test_rng r = test_rng_seed(0x75a0 + (uint64_t)w->id);
    const test_problem_limits lim = {.max_outputs = 300, .max_macs = 12000};
    for (int k = 0; k < PROBLEMS; ++k) {
        convnd_problem p;
        test_random_problem(&r, &lim, &p);
        char text[512], err[256], msg[512];
        convnd_problem_format(text, sizeof text, &p);
        test_conv_case c;
        if (!test_case_init(&c, &p, k % 2, 1000u * (uint64_t)w->id + (uint64_t)k, err,
                            sizeof err)) {
            test_failure(&w->log, "%s: %s", text, err);
            continue;
        }
        const convnd_status st = test_case_run(&c, NULL);
        if (st != CONVND_OK)
            test_failure(&w->log, "%s: %s (%s)", text, convnd_status_string(st),
                         convnd_last_error());
        else if (!test_case_check(&c, msg, sizeof msg))
            test_failure(&w->log, "%s: %s", text, msg);
        ++w->runs;
        /* an error only this thread produces comes back to this thread */
        convnd_problem bad = c.p;
        bad.groups = 1000 + w->id;
        char want[32];
        snprintf(want, sizeof want, "groups=%d ", 1000 + w->id);
        if (conv_nd(&bad, c.dx, c.dw, c.db, c.dz, c.dy, NULL, 0, NULL, NULL) !=
                CONVND_ERR_INVALID_ARGUMENT ||
            !strstr(convnd_last_error(), want))
            test_failure(&w->log, "thread %d's own error came back as '%s'", w->id,
                         convnd_last_error());
        char name[128];
        if (convnd_plan_name(&c.p, NULL, name, sizeof name) != CONVND_OK)
            test_failure(&w->log, "plan name for %s: %s", text, convnd_last_error());
        test_case_free(&c);
    }
    return NULL;
}

/* Scenario 2: the shared plan on this thread's own case, against conv_nd's result. */
static void *plan_worker(void *arg) {
    worker *w = arg;
    char err[256], msg[512];
    test_conv_case c;
    if (!test_case_init(&c, w->problem, 0, 77u + (uint64_t)w->id, err, sizeof err)) {
        test_failure(&w->log, "%s", err);
        return NULL;
    }
    size_t ws = 0;
    void *workspace = NULL;
    if (convnd_plan_workspace_size(w->plan, &ws) != CONVND_OK ||
        (ws && convnd_malloc(&workspace, ws) != CONVND_OK)) {
        test_failure(&w->log, "workspace: %s", convnd_last_error());
        test_case_free(&c);
        return NULL;
    }
    const size_t ybytes = (size_t)c.yd.numel * c.esize;
    unsigned char *expect = malloc(ybytes);
    if (!expect || test_case_run(&c, NULL) != CONVND_OK) {
        test_failure(&w->log, "conv_nd: %s", convnd_last_error());
    } else {
        memcpy(expect, c.hy, ybytes);
        for (int e = 0; e < EXECUTIONS; ++e) {
            test_poison_fill(c.p.dtype, c.hy, c.yd.numel);
            convnd_status st = convnd_memcpy_h2d(c.dy, c.hy, ybytes);
            if (st == CONVND_OK)
                st =
                    convnd_plan_execute(w->plan, c.dx, c.dw, c.db, c.dz, c.dy, workspace, ws, NULL);
            if (st == CONVND_OK) st = convnd_memcpy_d2h(c.hy, c.dy, ybytes);
            if (st != CONVND_OK)
                test_failure(&w->log, "execute %d: %s", e, convnd_last_error());
            else if (memcmp(c.hy, expect, ybytes) != 0)
                test_failure(&w->log, "execute %d: y differs from conv_nd's", e);
            else if (!test_case_check(&c, msg, sizeof msg))
                test_failure(&w->log, "execute %d: %s", e, msg);
            ++w->runs;
        }
    }
    free(expect);
    convnd_free(workspace);
    test_case_free(&c);
    return NULL;
}

static int run_threads(const char *scenario, worker *workers, void *(*body)(void *)) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i)
        if (pthread_create(&t[i], NULL, body, &workers[i]) != 0) {
            fprintf(stderr, "%s: pthread_create failed\n", scenario);
            return 1;
        }
    int failed = 0, runs = 0;
    for (int i = 0; i < THREADS; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; ++i) {
        runs += workers[i].runs;
        if (workers[i].log.count) {
            fprintf(stderr, "%s: thread %d: %d failures; first: %s\n", scenario, i,
                    workers[i].log.count, workers[i].log.first);
            failed = 1;
        }
    }
    printf("%s: %d threads, %d checked runs, %s\n", scenario, THREADS, runs,
           failed ? "FAILED" : "passed");
    return failed;
}

int main(void) {
    int failed = 0;
    worker workers[THREADS];
    memset(workers, 0, sizeof workers);
    for (int i = 0; i < THREADS; ++i)
        workers[i].id = i;
    failed |= run_threads("conv_nd from many threads", workers, conv_worker);

    /* one problem per schedule family the planner routes to, as plan/many_threads */
    static const char *const problems[] = {
        "fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 bias",
        "fwd 2d N=1 Ci=6 Co=6 g=6 I=7,7 K=3 P0=1 P1=1 x=cl w=cl",
        "tr 2d N=1 Ci=16 Co=16 I=4,4 K=3 S=2 P0=1 P1=1 bf16 z beta=0.5",
        "fwd 1d N=2 Ci=3 Co=5 I=9 K=3 D=2 P0=2 P1=0 f16 act=relu",
    };
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; ++k) {
        convnd_problem p;
        char err[256];
        convnd_plan_t *plan = NULL;
        if (!test_problem_parse(problems[k], &p, err, sizeof err) ||
            convnd_plan_create(&plan, &p, NULL) != CONVND_OK) {
            fprintf(stderr, "%s: %s %s\n", problems[k], err, convnd_last_error());
            return 1;
        }
        memset(workers, 0, sizeof workers);
        for (int i = 0; i < THREADS; ++i)
            workers[i] = (worker){.id = i, .plan = plan, .problem = &p};
        char scenario[160];
        snprintf(scenario, sizeof scenario, "one plan from many threads (%s)", problems[k]);
        failed |= run_threads(scenario, workers, plan_worker);
        convnd_plan_destroy(plan);
    }
    return failed;
}
