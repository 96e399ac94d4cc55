#include "test_schedule_runs.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "schedule.h"
#include "test_orders.h"
#include "test_problem_text.h"

size_t test_list_schedule_configs(const char *prefix, test_schedule_config *out, size_t max) {
    size_t n = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        if (prefix && strncmp(s->name, prefix, strlen(prefix)) != 0) continue;
        for (int32_t c = 0; c < s->num_configs && n < max; ++c)
            out[n++] = (test_schedule_config){i, c};
    }
    return n;
}

void test_schedule_spec(test_schedule_config sc, char *buf, size_t len) {
    const convnd_schedule *s = convnd_schedule_table[sc.schedule];
    snprintf(buf, len, "%s:%s", s->name, s->config_names[sc.config]);
}

uint64_t test_seed_of(const char *id, uint64_t salt) {
    uint64_t h = 0xcbf29ce484222325ull ^ salt;
    for (const char *c = id; *c; ++c)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h;
}

void *test_upload_misaligned(const void *host, int64_t n, size_t esize, void **base) {
    *base = NULL;
    if (convnd_malloc(base, esize * (size_t)(n + 1)) != CONVND_OK) return NULL;
    char *p = (char *)*base + esize; /* malloc and cudaMalloc blocks are 16-byte aligned */
    if (host && convnd_memcpy_h2d(p, host, esize * (size_t)n) != CONVND_OK) return NULL;
    return p;
}

void test_run_all_orders(test_conv_case *c, const char *spec, const char *what) {
    char text[512];
    convnd_problem_format(text, sizeof text, &c->p);
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        const convnd_status st = test_case_run(c, spec);
        char msg[1024] = "";
        const int ok = st == CONVND_OK && test_case_check(c, msg, sizeof msg);
        cr_expect(ok, "%s %s (order %s%s): %s%s%s\n  problem: %s", spec, what,
                  test_order_name(order), c->z_in_place ? ", z == y" : "",
                  st == CONVND_OK ? "" : convnd_status_string(st), st == CONVND_OK ? "" : ": ",
                  st == CONVND_OK ? msg : convnd_last_error(), text);
    }
}

void test_run_supported_case(const char *spec, const convnd_problem *p, const char *id,
                             int z_in_place, uint64_t seed) {
    char err[512], text[512], reason[512], what[128];
    convnd_problem_format(text, sizeof text, p);
    cr_assert(convnd_schedule_supports(spec, p, reason, sizeof reason),
              "%s refuses case %s: %s\n  problem: %s", spec, id, reason, text);
    test_conv_case c;
    cr_assert(test_case_init(&c, p, z_in_place, seed, err, sizeof err),
              "%s case %s: setup failed: %s\n  problem: %s", spec, id, err, text);
    snprintf(what, sizeof what, "case %s", id);
    test_run_all_orders(&c, spec, what);
    test_case_free(&c);
}
