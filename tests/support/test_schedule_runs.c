#include "test_schedule_runs.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_services.h"
#include "gemm_tiles.h"
#include "problem_internal.h"
#include "schedule.h"
#include "test_orders.h"
#include "test_problem_text.h"

convnd_problem test_parse(const char *text) {
    convnd_problem p;
    char err[256];
    cr_assert(test_problem_parse(text, &p, err, sizeof err), "'%s': %s", text, err);
    return p;
}

convnd_problem test_parse_valid(const char *text) {
    const convnd_problem p = test_parse(text);
    cr_assert_eq(convnd_validate(&p), CONVND_OK, "%s: %s", text, convnd_last_error());
    return p;
}

convnd_conv_params test_params_of(const convnd_problem *p) {
    convnd_conv_params params;
    cr_assert_eq(convnd_params_from_problem(p, &params), CONVND_OK, "%s", convnd_last_error());
    return params;
}

/* families/igemm/igemm_limits.cu: whether this build has tensor-core configuration `config`. */
int convnd_gemm_tc_built(int32_t config);

/* 1 when spec is "igemm_tc:NAME" or "convT_tc:NAME" and this build left NAME out. */
static int tc_config_not_built(const char *spec) {
    const char *colon = strchr(spec, ':');
    if (!colon) return 0;
    const size_t len = (size_t)(colon - spec);
    if (!(len == 8 && (!strncmp(spec, "igemm_tc", 8) || !strncmp(spec, "convT_tc", 8)))) return 0;
    for (int32_t c = 0; c < convnd_gemm_tc_tiles.count; ++c)
        if (!strcmp(colon + 1, convnd_gemm_tc_tiles.names[c])) return !convnd_gemm_tc_built(c);
    return 0;
}

int test_config_skipped(const char *spec) {
    if (tc_config_not_built(spec)) return 1;
    const char *list = getenv("CONVND_TEST_SKIP_CONFIGS");
    while (list && *list) {
        const char *end = strchr(list, ',');
        const size_t len = end ? (size_t)(end - list) : strlen(list);
        char text[64];
        if (len > 0 && len < sizeof text) {
            memcpy(text, list, len);
            text[len] = '\0';
            if (strstr(spec, text)) return 1;
        }
        list = end ? end + 1 : NULL;
    }
    return 0;
}

size_t test_list_schedule_configs(const char *prefix, test_schedule_config *out, size_t max) {
    size_t n = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        if (prefix && strncmp(s->name, prefix, strlen(prefix)) != 0) continue;
        for (int32_t c = 0; c < s->num_configs; ++c) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[c]);
            if (test_config_skipped(spec)) continue;
            if (n == max) { /* a list cut short would leave configurations untested, silently */
                fprintf(stderr, "test_list_schedule_configs: more than %zu '%s' configurations\n",
                        max, prefix ? prefix : "");
                abort();
            }
            out[n++] = (test_schedule_config){i, c};
        }
    }
    return n;
}

size_t test_list_conv_configs(test_schedule_config *out, size_t max) {
    const size_t n = test_list_schedule_configs(NULL, out, max);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i)
        if (strncmp(convnd_schedule_table[out[i].schedule]->name, "wgrad_", 6) &&
            !(convnd_schedule_table[out[i].schedule]->reads & CONVND_READS_SEQUENCES))
            out[kept++] = out[i]; /* the stateful causal conv1d has its own suite */
    return kept;
}

static const test_numerics tc_numerics[] = {
    {CONVND_F16, CONVND_MATH_DEFAULT},
    {CONVND_BF16, CONVND_MATH_DEFAULT},
    {CONVND_F32, CONVND_MATH_ALLOW_TF32},
};
static const test_numerics simt_numerics[] = {
    {CONVND_F32, CONVND_MATH_DEFAULT},
    {CONVND_F32, CONVND_MATH_ALLOW_TF32},
};

/* families/igemm/igemm_limits.cu */
size_t convnd_gemm_tc_smem_bytes(int32_t config, int32_t elem_bytes);

const test_numerics *test_numerics_of(test_schedule_config sc, size_t *count) {
    const char *name = convnd_schedule_table[sc.schedule]->name;
    const size_t n = strlen(name);
    const int tc = (n >= 3 && strcmp(name + n - 3, "_tc") == 0) || strncmp(name, "hopper_", 7) == 0;
    *count = tc ? sizeof tc_numerics / sizeof tc_numerics[0]
                : sizeof simt_numerics / sizeof simt_numerics[0];
    if (strcmp(name, "igemm_tc") != 0 && strcmp(name, "convT_tc") != 0)
        return tc ? tc_numerics : simt_numerics;
    /* a tensor-core GEMM configuration runs only the dtypes whose stages fit a block's shared
     * memory (the 64-channel k-tiles: f16/bf16, not TF32); its refusal of the others is
     * asserted by the igemm/transposed refusal tests */
    static _Thread_local test_numerics fitting[sizeof tc_numerics / sizeof tc_numerics[0]];
    const size_t have = convnd_device_properties(convnd_active_device())->smem_per_block;
    size_t kept = 0;
    for (size_t k = 0; k < *count; ++k)
        if (convnd_gemm_tc_smem_bytes(sc.config, tc_numerics[k].dtype == CONVND_F32 ? 4 : 2) <=
            have)
            fitting[kept++] = tc_numerics[k];
    *count = kept;
    return fitting;
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

void test_run_case_table(test_schedule_config sc, const test_case_text *cases, size_t count) {
    char spec[128];
    test_schedule_spec(sc, spec, sizeof spec);
    size_t nnum;
    const test_numerics *num = test_numerics_of(sc, &nnum);
    for (size_t i = 0; i < count; ++i)
        for (size_t k = 0; k < nnum; ++k) {
            convnd_problem p = test_parse_valid(cases[i].problem);
            p.dtype = num[k].dtype;
            p.math = num[k].math;
            test_run_supported_case(spec, &p, cases[i].id, cases[i].z_in_place,
                                    test_seed_of(cases[i].id, k));
        }
}

void test_expect_refusal(const char *spec, const char *problem, convnd_dtype dtype,
                         convnd_math math, const char *needle) {
    convnd_problem p = test_parse(problem);
    char reason[512] = "";
    p.dtype = dtype;
    p.math = math;
    cr_expect(!convnd_schedule_supports(spec, &p, reason, sizeof reason),
              "%s should refuse %s (dtype %d, math %d)", spec, problem, (int)dtype, (int)math);
    cr_expect(strstr(reason, needle) != NULL, "%s: reason '%s' lacks '%s'", spec, reason, needle);
}

void test_expect_forced_error(const char *spec, const char *problem, const char *needle) {
    const convnd_problem p = test_parse(problem);
    char err[256];
    test_conv_case c;
    cr_assert(test_case_init(&c, &p, 0, 1, err, sizeof err), "%s", err);
    const convnd_status st = test_case_run(&c, spec);
    cr_expect_eq(st, CONVND_ERR_UNSUPPORTED, "%s on %s: status %s", spec, problem,
                 convnd_status_string(st));
    cr_expect(strstr(convnd_last_error(), needle) != NULL, "%s on %s: message '%s' lacks '%s'",
              spec, problem, convnd_last_error(), needle);
    for (int64_t i = 0; i < c.yd.numel; ++i)
        cr_assert(test_is_poison(p.dtype, c.hy, i), "%s: y[%lld] was written", spec, (long long)i);
    test_case_free(&c);
}

void test_plan_of(const char *problem, char *plan, size_t len) {
    const convnd_problem p = test_parse(problem);
    cr_assert_eq(convnd_plan_name(&p, NULL, plan, len), CONVND_OK, "%s: %s", problem,
                 convnd_last_error());
}

void test_expect_plan(const char *problem, const char *expected) {
    if (tc_config_not_built(expected)) {
        cr_log_info("plan for '%s': %s is not built here; the plain build checks it", problem,
                    expected);
        return;
    }
    char plan[128];
    test_plan_of(problem, plan, sizeof plan);
    const size_t n = strlen(expected);
    const int prefix = n > 0 && expected[n - 1] == ':';
    cr_expect(prefix ? strncmp(plan, expected, n) == 0 : strcmp(plan, expected) == 0,
              "plan for '%s' is %s, expected %s%s", problem, plan, expected, prefix ? "..." : "");
}
