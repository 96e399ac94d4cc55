/* Host overhead up to the launch (bench/README.md "Host overhead"). The three loops are
 * separate, never-inlined functions so that valgrind's callgrind can count each one's
 * instructions alone (--toggle-collect=host_loop_*; bench/host_overhead.sh). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device_services.h"
#include "host_overhead.h"
#include "plan.h"

typedef struct host_call {
    const convnd_plan_t *plan;
    convnd_launch_args bare;
    const void *x, *w, *bias, *z;
    void *y, *workspace;
    size_t workspace_bytes;
} host_call;

__attribute__((noinline)) int host_loop_bare(const host_call *c, int n) {
    int bad = 0;
    for (int i = 0; i < n; ++i)
        bad |= c->plan->schedule->launch(&c->bare) != CONVND_OK;
    return bad;
}

__attribute__((noinline)) int host_loop_plan(const host_call *c, int n) {
    int bad = 0;
    for (int i = 0; i < n; ++i)
        bad |= convnd_plan_execute(c->plan, c->x, c->w, c->bias, c->z, c->y, c->workspace,
                                   c->workspace_bytes, NULL) != CONVND_OK;
    return bad;
}

__attribute__((noinline)) int host_loop_conv_nd(const host_call *c, int n) {
    int bad = 0;
    for (int i = 0; i < n; ++i)
        bad |= conv_nd(&c->plan->resolved.problem, c->x, c->w, c->bias, c->z, c->y, c->workspace,
                       c->workspace_bytes, NULL, NULL) != CONVND_OK;
    return bad;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Best of 5 batches, ns per call; negative when a call failed. */
static double ns_per_call(int (*loop)(const host_call *, int), const host_call *c, int n) {
    double best = -1.0;
    for (int b = 0; b < 5; ++b) {
        const double t0 = now_ns();
        if (loop(c, n)) return -1.0;
        const double per = (now_ns() - t0) / n;
        if (best < 0 || per < best) best = per;
    }
    return best;
}

static void *device_buffer(size_t bytes) {
    void *p = NULL;
    return convnd_malloc(&p, bytes ? bytes : 1) == CONVND_OK ? p : NULL;
}

int bench_host_overhead(const bench_problem *problems, int count, int iterations, FILE *out) {
    const int emulated = convnd_active_device() == CONVND_DEVICE_EMULATED;
    if (emulated) convnd_emu_set_skip_launches(1);
    fprintf(out, "host overhead up to the launch, ns per call (best of 5 x %d), %s%s\n", iterations,
            convnd_device_name(),
            emulated ? "; launches stop after their configuration check" : "");
    fprintf(out, "%-24s %-28s %10s %10s %10s\n", "problem", "plan", "bare", "plan_exec", "conv_nd");
    int failed = 0;
    for (int i = 0; i < count; ++i) {
        convnd_problem p = problems[i].p;
        convnd_plan_t *plan = NULL;
        if (convnd_plan_create(&plan, &p, NULL) != CONVND_OK) {
            fprintf(out, "%-24s plan failed: %s\n", problems[i].name, convnd_last_error());
            failed = 1;
            continue;
        }
        host_call c = {.plan = plan};
        /* in wgrad mode the second operand is dy (y's shape) and the output dw (w's shape) */
        const convnd_problem_sizes *s = &plan->resolved.sizes;
        const int wgrad = plan->resolved.problem.mode == CONVND_WGRAD;
        c.x = device_buffer((size_t)(s->x_numel * s->elem_bytes));
        c.w = device_buffer((size_t)((wgrad ? s->y_numel : s->w_numel) * s->elem_bytes));
        c.bias = device_buffer((size_t)(s->bias_numel * s->elem_bytes));
        c.y = device_buffer((size_t)((wgrad ? s->w_numel : s->y_numel) * s->elem_bytes));
        c.workspace_bytes = plan->workspace_bytes;
        c.workspace = plan->workspace_bytes ? device_buffer(plan->workspace_bytes) : NULL;
        c.bare = (convnd_launch_args){.params = plan->resolved.params,
                                      .x = c.x,
                                      .w = c.w,
                                      .bias = p.has_bias ? c.bias : NULL,
                                      .y = c.y,
                                      .workspace = c.workspace,
                                      .workspace_bytes = c.workspace_bytes,
                                      .config = plan->choice.config,
                                      .device = plan->device};
        char name[96];
        snprintf(name, sizeof name, "%s:%s", plan->schedule->name,
                 plan->schedule->config_names[plan->choice.config]);
        const double bare = ns_per_call(host_loop_bare, &c, iterations);
        const double exec = ns_per_call(host_loop_plan, &c, iterations);
        const double once = ns_per_call(host_loop_conv_nd, &c, iterations);
        fprintf(out, "%-24s %-28s %10.0f %10.0f %10.0f\n", problems[i].name, name, bare, exec,
                once);
        if (bare < 0 || exec < 0 || once < 0) {
            fprintf(out, "  a call failed: %s\n", convnd_last_error());
            failed = 1;
        }
        convnd_free((void *)c.x);
        convnd_free((void *)c.w);
        convnd_free((void *)c.bias);
        convnd_free(c.y);
        convnd_free(c.workspace);
        convnd_plan_destroy(plan);
    }
    if (emulated) convnd_emu_set_skip_launches(0);
    return failed;
}
