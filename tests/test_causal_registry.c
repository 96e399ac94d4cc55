/* The stateful causal conv1d on the registry (SPEC §13 on convnd_problem): its calls bind onto a
 * problem with sequences that the planner routes to causal_conv1d, explain shows, a forced
 * schedule, a plan and the errata treat like every other problem; a plan built from the binding
 * equals the call's result and the f64 reference; a malformed sequence problem is refused by
 * name. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "causal_ref.h"
#include "convnd.h"
#include "convnd_causal.h"
#include "convnd_ref.h"
#include "test_random.h"
#include "test_schedule_runs.h"
#include "test_tolerance.h"

TestSuite(causal_registry, .timeout = 120);

enum { B = 2, D = 5, L = 37, W = 4 };

typedef struct host_case {
    convnd_causal_problem p;
    float x[B * D * L], w[D * W], bias[D], init[B * D * (W - 1)];
} host_case;

static void fill(host_case *h, convnd_causal_layout layout, uint64_t seed) {
    h->p = (convnd_causal_problem){B, D, L, W, CONVND_F32, layout, 1, 1, 0};
    test_rng r = test_rng_seed(test_seed_of("causal_registry", seed));
    test_fill_random(CONVND_F32, h->x, B * D * L, &r);
    test_fill_random(CONVND_F32, h->w, D * W, &r);
    test_fill_random(CONVND_F32, h->bias, D, &r);
    test_fill_random(CONVND_F32, h->init, B * D * (W - 1), &r);
}

static void *dev_copy(const void *host, size_t bytes) {
    void *d = NULL;
    cr_assert_eq(convnd_malloc(&d, bytes), CONVND_OK);
    cr_assert_eq(convnd_memcpy_h2d(d, host, bytes), CONVND_OK);
    return d;
}

static void *dev_poisoned(size_t bytes) {
    unsigned char *h = malloc(bytes);
    memset(h, 0xff, bytes);
    void *d = dev_copy(h, bytes);
    free(h);
    return d;
}

/* Device tensors of a case: x, w, bias, initial states; y and final states poisoned. */
typedef struct dev_case {
    convnd_causal_tensors t;
} dev_case;

static dev_case to_device(const host_case *h) {
    dev_case d;
    memset(&d, 0, sizeof d);
    d.t.x = dev_copy(h->x, sizeof h->x);
    d.t.weight = dev_copy(h->w, sizeof h->w);
    d.t.bias = dev_copy(h->bias, sizeof h->bias);
    d.t.initial_states = dev_copy(h->init, sizeof h->init);
    d.t.final_states = dev_poisoned(sizeof h->init);
    d.t.y = dev_poisoned(sizeof h->x);
    return d;
}

static void fetch(const dev_case *d, float *y, float *final) {
    cr_assert_eq(convnd_memcpy_d2h(y, d->t.y, sizeof(float) * B * D * L), CONVND_OK);
    cr_assert_eq(convnd_memcpy_d2h(final, d->t.final_states, sizeof(float) * B * D * (W - 1)),
                 CONVND_OK);
}

static void release(dev_case *d) {
    convnd_free((void *)d->t.x);
    convnd_free((void *)d->t.weight);
    convnd_free((void *)d->t.bias);
    convnd_free((void *)d->t.initial_states);
    convnd_free(d->t.final_states);
    convnd_free(d->t.y);
}

Test(causal_registry, the_planner_routes_the_bound_problem_and_explain_says_why) {
    host_case h;
    fill(&h, CONVND_CAUSAL_BLD, 11);
    dev_case d = to_device(&h);
    convnd_problem q;
    convnd_io io;
    cr_assert_eq(convnd_bind_causal_conv1d(&h.p, &d.t, &q, &io), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert_eq(q.sequences.kind, CONVND_SEQS_ROWS);
    cr_assert(q.sequences.initial_states && q.sequences.final_states);
    char name[128];
    cr_assert_eq(convnd_plan_name(&q, NULL, name, sizeof name), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert_str_eq(name, "causal_conv1d:d32_l64");
    static char text[1 << 16];
    cr_assert_eq(convnd_plan_explain(&q, NULL, text, sizeof text, NULL), CONVND_OK, "%s",
                 convnd_last_error());
    cr_assert(strstr(text, "causal_conv1d") && strstr(text, "runs no stateful causal conv1d"), "%s",
              text);
    release(&d);
}

Test(causal_registry, a_plan_of_the_binding_equals_the_call_and_the_reference) {
    const convnd_causal_layout layouts[] = {CONVND_CAUSAL_BDL, CONVND_CAUSAL_BLD};
    for (int li = 0; li < 2; ++li) {
        host_case h;
        fill(&h, layouts[li], 20 + (uint64_t)li);
        /* the call */
        dev_case a = to_device(&h);
        cr_assert_eq(convnd_causal_conv1d(&h.p, &a.t, NULL), CONVND_OK, "%s", convnd_last_error());
        static float ya[B * D * L], fa[B * D * (W - 1)], yb[B * D * L], fb[B * D * (W - 1)];
        fetch(&a, ya, fa);
        /* a plan of its binding, forced to the schedule by name, executed with its io */
        dev_case b = to_device(&h);
        convnd_problem q;
        convnd_io io;
        cr_assert_eq(convnd_bind_causal_conv1d(&h.p, &b.t, &q, &io), CONVND_OK);
        const convnd_options opts = {.schedule = "causal_conv1d:d32_l64"};
        convnd_plan_t *plan = NULL;
        cr_assert_eq(convnd_plan_create(&plan, &q, &opts), CONVND_OK, "%s", convnd_last_error());
        cr_assert_eq(convnd_plan_execute_io(plan, &io, NULL, 0, NULL), CONVND_OK, "%s",
                     convnd_last_error());
        convnd_plan_destroy(plan);
        fetch(&b, yb, fb);
        cr_assert(memcmp(ya, yb, sizeof ya) == 0 && memcmp(fa, fb, sizeof fa) == 0,
                  "layout %d: the plan differs from the call", li);
        /* both against the f64 reference */
        static double ref[B * D * L], mag[B * D * L], fref[B * D * (W - 1)];
        const convnd_causal_tensors ht = {.x = h.x,
                                          .weight = h.w,
                                          .bias = h.bias,
                                          .initial_states = h.init,
                                          .final_states = fb,
                                          .y = yb};
        convnd_ref_causal_conv1d(&h.p, &ht, ref, mag, fref);
        for (int i = 0; i < B * D * L; ++i)
            cr_assert(fabs(ya[i] - ref[i]) <= 1e-5 * (mag[i] + 1e-30) + 1e-30,
                      "layout %d y[%d] = %g, reference %g", li, i, (double)ya[i], ref[i]);
        for (int i = 0; i < B * D * (W - 1); ++i)
            cr_assert_eq((double)fa[i], fref[i], "final state %d", i);
        release(&a);
        release(&b);
    }
}

Test(causal_registry, forcing_across_the_line_is_refused_by_name) {
    host_case h;
    fill(&h, CONVND_CAUSAL_BDL, 30);
    dev_case d = to_device(&h);
    convnd_problem q;
    convnd_io io;
    cr_assert_eq(convnd_bind_causal_conv1d(&h.p, &d.t, &q, &io), CONVND_OK);
    convnd_options opts = {.schedule = "direct"};
    convnd_plan_t *plan = NULL;
    cr_assert_eq(convnd_plan_create(&plan, &q, &opts), CONVND_ERR_UNSUPPORTED);
    cr_assert(strstr(convnd_last_error(), "runs no stateful causal conv1d"), "%s",
              convnd_last_error());
    /* and the causal schedule refuses an ordinary problem */
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = p.groups = 4;
    p.input[0] = 9;
    p.kernel[0] = 3;
    p.pad_before[0] = 2;
    opts.schedule = "causal_conv1d";
    cr_assert_eq(convnd_plan_create(&plan, &p, &opts), CONVND_ERR_UNSUPPORTED);
    cr_assert(strstr(convnd_last_error(), "stateful causal conv1d problems only"), "%s",
              convnd_last_error());
    release(&d);
}

Test(causal_registry, errata_excluding_it_make_the_call_fail_not_answer) {
    char path[] = "/tmp/convnd_causal_errata_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char line[] = "exclude causal_conv1d:d32_l64 # a test's planted erratum\n";
    cr_assert_eq(write(fd, line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    close(fd);
    cr_assert_eq(setenv("CONVND_ERRATA", path, 1), 0);
    host_case h;
    fill(&h, CONVND_CAUSAL_BDL, 40);
    dev_case d = to_device(&h);
    const convnd_status st = convnd_causal_conv1d(&h.p, &d.t, NULL);
    cr_assert_eq(st, CONVND_ERR_NO_SCHEDULE, "status %d: %s", (int)st, convnd_last_error());
    cr_assert(strstr(convnd_last_error(), "a test's planted erratum"), "%s", convnd_last_error());
    /* nothing written */
    static float y[B * D * L];
    cr_assert_eq(convnd_memcpy_d2h(y, d.t.y, sizeof y), CONVND_OK);
    for (int i = 0; i < B * D * L; ++i)
        cr_assert(isnan(y[i]), "y[%d] was written", i);
    cr_assert_eq(setenv("CONVND_ERRATA", "off", 1), 0);
    cr_assert_eq(convnd_causal_conv1d(&h.p, &d.t, NULL), CONVND_OK, "%s", convnd_last_error());
    release(&d);
    unlink(path);
}

Test(causal_registry, malformed_sequence_problems_are_refused_by_name) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = p.groups = 4;
    p.input[0] = 9;
    p.kernel[0] = 3;
    p.pad_before[0] = 2;
    p.sequences.kind = CONVND_SEQS_ROWS;
    cr_assert_eq(convnd_validate(&p), CONVND_OK, "%s", convnd_last_error());
    convnd_problem q = p;
    q.sequences.kind = (convnd_seqs)9;
    cr_assert_eq(convnd_validate(&q), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "sequences.kind=9"), "%s", convnd_last_error());
    q = p;
    q.groups = 1;
    cr_assert_eq(convnd_validate(&q), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "depthwise only"), "%s", convnd_last_error());
    q = p;
    q.pad_before[0] = 1;
    cr_assert_eq(convnd_validate(&q), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "pad kernel-1/0 only"), "%s", convnd_last_error());
    q = p;
    q.sequences.kind = CONVND_SEQS_OFFSETS;
    cr_assert_eq(convnd_validate(&q), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "offsets need num_seqs >= 1"), "%s", convnd_last_error());
    q = p;
    q.sequences.kind = CONVND_SEQS_UPDATE;
    q.sequences.state_len = 1;
    q.sequences.state_rows = 1;
    cr_assert_eq(convnd_validate(&q), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "state_len=1 must be >= kernel-1=2"), "%s",
              convnd_last_error());
}
