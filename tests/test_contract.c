/* conv_nd's contract under hostile calls (SPEC section 8): every rejection returns its status
 * with a message naming the values and leaves y's bytes exactly as they were; NULL is allowed
 * only for tensors without elements; only z == y may alias y; element-aligned pointers that are
 * not 16-byte aligned still work on every schedule (vectorized paths check alignment at launch
 * and fall back); zero-size problems do nothing, and C_in = 0 leaves only the epilogue.
 *
 * CONVND_PRINT_REJECTIONS=1 makes every_rejection_is_clean print its table in Markdown (the
 * "what is rejected, and how" table of docs/errors.md comes from it). */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "error.h"
#include "registry.h"
#include "test_conv_case.h"
#include "test_contract_support.h"
#include "test_problem_text.h"
#include "test_schedule_runs.h"

TestSuite(contract, .timeout = 600);

static void setup(test_conv_case *c, const char *text, int z_in_place) {
    const convnd_problem p = test_parse_valid(text);
    char err[256];
    cr_assert(test_case_init(c, &p, z_in_place, 42, err, sizeof err), "%s", err);
}

/* ---- the rejection table -------------------------------------------------------------------- */

/* How a row calls conv_nd, besides its problem. */
typedef enum call_kind {
    CALL_PROBLEM_ONLY, /* the mutated problem, valid buffers */
    CALL_NULL_PROBLEM,
    CALL_NULL_X,
    CALL_NULL_W,
    CALL_NULL_BIAS,
    CALL_NULL_Z,
    CALL_NULL_Y,
    CALL_X_OVERLAPS_Y,  /* x starts one element into y */
    CALL_W_OVERLAPS_Y,  /* w ends one element into y */
    CALL_BIAS_INSIDE_Y, /* bias lies inside y */
    CALL_Z_OVERLAPS_Y,  /* z starts one element into y: not z == y */
    CALL_X_MISALIGNED,  /* x one byte past an element boundary */
    CALL_Y_MISALIGNED,  /* y likewise */
    CALL_UNKNOWN_SCHEDULE,
    CALL_UNKNOWN_CONFIG,
    CALL_UNSUPPORTING_SCHEDULE, /* the first schedule:config that refuses the problem */
    CALL_WORKSPACE_SHORT,       /* the first schedule that needs a workspace, one byte short */
} call_kind;

typedef enum field_kind { FIELD_NONE, FIELD_I64, FIELD_I32, FIELD_F32 } field_kind;

typedef struct rejection {
    const char *what;
    field_kind kind;
    size_t offset; /* of the field in convnd_problem */
    double value;
    call_kind call;
    convnd_status want;
    const char *says[3]; /* fragments the message must contain ("%s" stands for the spec) */
} rejection;

#define FIELD(kind, member, value) kind, offsetof(convnd_problem, member), (double)(value)
#define NO_FIELD FIELD_NONE, 0, 0.0

/* The base: grouped 2-D, bias and z (so that every tensor has a pointer to get wrong). */
static const char *const base_text =
    "fwd 2d N=2 Ci=4 Co=6 g=2 I=7,6 K=3,2 P0=1 P1=1 bias z beta=0.5";

static const rejection rejections[] = {
    {"dims outside 1..3",
     FIELD(FIELD_I32, dims, 4),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"dims=4"}},
    {"mode not forward/transposed",
     FIELD(FIELD_I32, mode, 7),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"mode=7"}},
    {"unknown dtype",
     FIELD(FIELD_I32, dtype, 9),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_UNSUPPORTED,
     {"dtype=9"}},
    {"x layout AUTO (y only)",
     FIELD(FIELD_I32, x_layout, CONVND_LAYOUT_AUTO),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_UNSUPPORTED,
     {"x_layout=2"}},
    {"unknown activation",
     FIELD(FIELD_I32, activation, 9),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"activation=9"}},
    {"negative batch",
     FIELD(FIELD_I64, N, -1),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"N=-1"}},
    {"negative channels",
     FIELD(FIELD_I64, C_in, -4),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"C_in=-4"}},
    {"groups < 1",
     FIELD(FIELD_I64, groups, 0),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"groups=0"}},
    {"groups not dividing C_in",
     FIELD(FIELD_I64, groups, 3),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"groups=3", "C_in=4"}},
    {"groups not dividing C_out",
     FIELD(FIELD_I64, C_out, 5),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"groups=2", "C_out=5"}},
    {"input size < 1",
     FIELD(FIELD_I64, input[0], 0),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"input[0]=0"}},
    {"kernel size < 1",
     FIELD(FIELD_I64, kernel[1], -2),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"kernel[1]=-2"}},
    {"stride < 1",
     FIELD(FIELD_I64, stride[0], 0),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"stride[0]=0"}},
    {"dilation < 1",
     FIELD(FIELD_I64, dilation[1], 0),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"dilation[1]=0"}},
    {"output size < 1",
     FIELD(FIELD_I64, kernel[0], 100),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"O[0]", "kernel=100"}},
    {"cropping past the input",
     FIELD(FIELD_I64, pad_before[1], -6),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"O[1]", "-6"}},
    {"effective kernel past int64",
     FIELD(FIELD_I64, dilation[0], (int64_t)1 << 62),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_OVERFLOW,
     {"dilation", "4611686018427387904"}},
    {"element count past int64",
     FIELD(FIELD_I64, N, (int64_t)1 << 60),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_OVERFLOW,
     {"x of shape", "1152921504606846976"}},
    {"has_bias not 0/1",
     FIELD(FIELD_I32, has_bias, 2),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"has_bias=2"}},
    {"non-finite alpha",
     FIELD(FIELD_F32, alpha, NAN),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"alpha=nan"}},
    {"beta without z",
     FIELD(FIELD_I32, has_z, 0),
     CALL_PROBLEM_ONLY,
     CONVND_ERR_INVALID_ARGUMENT,
     {"beta=0.5", "has_z=0"}},
    {"problem NULL", NO_FIELD, CALL_NULL_PROBLEM, CONVND_ERR_NULL_POINTER, {"problem"}},
    {"x NULL", NO_FIELD, CALL_NULL_X, CONVND_ERR_NULL_POINTER, {"x is NULL", "bytes"}},
    {"w NULL", NO_FIELD, CALL_NULL_W, CONVND_ERR_NULL_POINTER, {"w is NULL"}},
    {"bias NULL with has_bias",
     NO_FIELD,
     CALL_NULL_BIAS,
     CONVND_ERR_NULL_POINTER,
     {"bias is NULL", "has_bias=1"}},
    {"z NULL with has_z", NO_FIELD, CALL_NULL_Z, CONVND_ERR_NULL_POINTER, {"z is NULL"}},
    {"y NULL", NO_FIELD, CALL_NULL_Y, CONVND_ERR_NULL_POINTER, {"y is NULL"}},
    {"x overlapping y", NO_FIELD, CALL_X_OVERLAPS_Y, CONVND_ERR_ALIASING, {"x [", "overlaps y"}},
    {"w overlapping y", NO_FIELD, CALL_W_OVERLAPS_Y, CONVND_ERR_ALIASING, {"w [", "overlaps y"}},
    {"bias inside y", NO_FIELD, CALL_BIAS_INSIDE_Y, CONVND_ERR_ALIASING, {"bias [", "overlaps y"}},
    {"z partly overlapping y",
     NO_FIELD,
     CALL_Z_OVERLAPS_Y,
     CONVND_ERR_ALIASING,
     {"z [", "only z == y"}},
    {"x not element-aligned",
     NO_FIELD,
     CALL_X_MISALIGNED,
     CONVND_ERR_INVALID_ARGUMENT,
     {"x=", "not aligned", "4-byte"}},
    {"y not element-aligned",
     NO_FIELD,
     CALL_Y_MISALIGNED,
     CONVND_ERR_INVALID_ARGUMENT,
     {"y=", "not aligned"}},
    {"unknown forced schedule",
     NO_FIELD,
     CALL_UNKNOWN_SCHEDULE,
     CONVND_ERR_INVALID_ARGUMENT,
     {"no_such_schedule", "direct"}},
    {"unknown configuration",
     NO_FIELD,
     CALL_UNKNOWN_CONFIG,
     CONVND_ERR_INVALID_ARGUMENT,
     {"t999", "t128"}},
    {"forced schedule that refuses the problem",
     NO_FIELD,
     CALL_UNSUPPORTING_SCHEDULE,
     CONVND_ERR_UNSUPPORTED,
     {"%s", "does not support"}},
    {"workspace too small",
     NO_FIELD,
     CALL_WORKSPACE_SHORT,
     CONVND_ERR_WORKSPACE,
     {"%s", "needs", "given"}},
};

static void set_field(convnd_problem *p, const rejection *r) {
    char *at = (char *)p + r->offset;
    if (r->kind == FIELD_I64) {
        const int64_t v = (int64_t)r->value;
        memcpy(at, &v, sizeof v);
    } else if (r->kind == FIELD_I32) {
        const int32_t v = (int32_t)r->value;
        memcpy(at, &v, sizeof v);
    } else if (r->kind == FIELD_F32) {
        const float v = (float)r->value;
        memcpy(at, &v, sizeof v);
    }
}

/* The first (schedule, config) for which want_unsupported (1: refuses p; 0: supports p and needs
 * a workspace); 0 when there is none. */
static int find_spec(const convnd_problem *p, int want_unsupported, char *spec, size_t len) {
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            snprintf(spec, len, "%s:%s", s->name, s->config_names[c]);
            const int ok = convnd_schedule_supports(spec, p, NULL, 0);
            size_t need = 0;
            const convnd_options opts = {.schedule = spec};
            if (want_unsupported
                    ? !ok
                    : ok && convnd_workspace_size(p, &opts, &need) == CONVND_OK && need > 0)
                return 1;
        }
    }
    return 0;
}

Test(contract, every_rejection_is_clean) {
    test_conv_case c;
    setup(&c, base_text, 0);
    const int print = getenv("CONVND_PRINT_REJECTIONS") != NULL;
    if (print) printf("| rejected | status | example message |\n|---|---|---|\n");
    /* y lies inside an arena with room on both sides for every overlap below */
    const size_t y_bytes = c.esize * (size_t)c.yd.numel, w_bytes = c.esize * (size_t)c.wd.numel;
    const size_t before = (w_bytes + 255) / 256 * 256;
    test_arena arena;
    cr_assert(test_arena_init(&arena, before + y_bytes + 4096));
    char *y = (char *)arena.dev + before;
    for (size_t k = 0; k < sizeof rejections / sizeof rejections[0]; ++k) {
        const rejection *r = &rejections[k];
        convnd_problem p = c.p;
        set_field(&p, r);
        const void *x = c.dx, *w = c.dw, *bias = c.db, *z = c.dz;
        void *out = y, *ws = NULL;
        size_t ws_bytes = 0;
        char spec[128] = "";
        convnd_options opts = {0};
        switch (r->call) {
        case CALL_NULL_X:
            x = NULL;
            break;
        case CALL_NULL_W:
            w = NULL;
            break;
        case CALL_NULL_BIAS:
            bias = NULL;
            break;
        case CALL_NULL_Z:
            z = NULL;
            break;
        case CALL_NULL_Y:
            out = NULL;
            break;
        case CALL_X_OVERLAPS_Y:
            x = y + c.esize;
            break;
        case CALL_W_OVERLAPS_Y: /* w's last element is y's first */
            w = y + c.esize - c.esize * (size_t)c.wd.numel;
            break;
        case CALL_BIAS_INSIDE_Y:
            bias = y + 2 * c.esize;
            break;
        case CALL_Z_OVERLAPS_Y:
            z = y + c.esize;
            break;
        case CALL_X_MISALIGNED:
            x = (const char *)c.dx + 1;
            break;
        case CALL_Y_MISALIGNED:
            out = y + 1;
            break;
        case CALL_UNKNOWN_SCHEDULE:
            opts.schedule = "no_such_schedule";
            break;
        case CALL_UNKNOWN_CONFIG:
            opts.schedule = "direct:t999";
            break;
        case CALL_UNSUPPORTING_SCHEDULE:
        case CALL_WORKSPACE_SHORT:
            if (!find_spec(&p, r->call == CALL_UNSUPPORTING_SCHEDULE, spec, sizeof spec)) {
                cr_log_warn("%s: no registered schedule to try it with", r->what);
                continue;
            }
            opts.schedule = spec;
            if (r->call == CALL_WORKSPACE_SHORT) {
                cr_assert_eq(convnd_workspace_size(&p, &opts, &ws_bytes), CONVND_OK);
                ws = test_device_upload(CONVND_F32, NULL, (int64_t)(ws_bytes / 4 + 1));
                cr_assert(ws);
                ws_bytes -= 1;
            }
            break;
        default:
            break;
        }
        convnd_clear_error();
        const convnd_status st = conv_nd(r->call == CALL_NULL_PROBLEM ? NULL : &p, x, w, bias, z,
                                         out, ws, ws_bytes, NULL, opts.schedule ? &opts : NULL);
        const char *msg = convnd_last_error();
        cr_expect_eq(st, r->want, "%s: status '%s', expected '%s' (%s)", r->what,
                     convnd_status_string(st), convnd_status_string(r->want), msg);
        for (int f = 0; f < 3 && r->says[f]; ++f) {
            const char *frag = strcmp(r->says[f], "%s") == 0 ? spec : r->says[f];
            cr_expect(strstr(msg, frag), "%s: message '%s' does not say '%s'", r->what, msg, frag);
        }
        cr_expect(test_arena_untouched(&arena), "%s: y's bytes changed", r->what);
        if (print) printf("| %s | `%s` | %s |\n", r->what, convnd_status_string(st), msg);
        if (ws) convnd_free(ws);
    }
    test_arena_free(&arena);
    test_case_free(&c);
}

/* ---- NULL only where nothing is read or written ---------------------------------------------- */

/* conv_nd with the case's problem and these pointers, y poisoned first; the case's hy gets y. */
static convnd_status run_with(test_conv_case *c, const char *spec, const void *x, const void *w,
                              const void *bias, const void *z, void *y) {
    const int64_t yn = c->yd.numel > 0 ? c->yd.numel : 1;
    test_poison_fill(c->p.dtype, c->hy, yn);
    if (y) cr_assert_eq(convnd_memcpy_h2d(y, c->hy, c->esize * (size_t)yn), CONVND_OK);
    const convnd_options opts = {.schedule = spec};
    size_t ws_bytes = 0;
    convnd_status st = convnd_workspace_size(&c->p, &opts, &ws_bytes);
    if (st != CONVND_OK) return st;
    void *ws = ws_bytes ? test_device_upload(CONVND_F32, NULL, (int64_t)(ws_bytes / 4 + 1)) : NULL;
    cr_assert(!ws_bytes || ws);
    st = conv_nd(&c->p, x, w, bias, z, y, ws, ws_bytes, NULL, &opts);
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    if (ws) convnd_free(ws);
    if (y) cr_assert_eq(convnd_memcpy_d2h(c->hy, y, c->esize * (size_t)yn), CONVND_OK);
    return st;
}

/* Every schedule:config that supports p. */
typedef struct spec_list {
    int n;
    char v[64][TEST_SPEC_LEN];
} spec_list;

static void supporting(const convnd_problem *p, spec_list *l) {
    l->n = test_supporting_specs(p, l->v, 64);
}

Test(contract, unused_tensors_may_be_null) {
    /* no bias, no z: both NULL; the planner's choice and every supporting schedule */
    test_conv_case c;
    setup(&c, "fwd 2d N=2 Ci=4 Co=6 g=2 I=7,6 K=3,2 P0=1 P1=1 act=relu", 0);
    spec_list specs;
    supporting(&c.p, &specs);
    cr_expect_geq(specs.n, 1);
    for (int i = 0; i < specs.n; ++i) {
        const char *spec = specs.v[i];
        cr_expect_eq(run_with(&c, spec, c.dx, c.dw, NULL, NULL, c.dy), CONVND_OK, "%s: %s", spec,
                     convnd_last_error());
        char msg[512];
        cr_expect(test_case_check(&c, msg, sizeof msg), "%s: %s", spec, msg);
    }
    test_case_free(&c);
}

Test(contract, zero_size_problems_accept_null_and_do_nothing) {
    const char *cases[] = {
        "fwd 2d N=0 Ci=4 Co=6 g=2 I=7 K=3 bias z beta=1", "fwd 3d N=2 Ci=3 Co=0 I=4 K=2 bias",
        "tr 2d N=0 Ci=4 Co=2 I=3 K=2 S=2 f16 x=cl", "tr 1d N=3 Ci=6 Co=0 g=3 I=5 K=3 bf16"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        test_conv_case c;
        setup(&c, cases[k], 0);
        cr_assert_eq(c.yd.numel, 0);
        /* y has no bytes: every pointer whose tensor is empty may be NULL */
        const void *x = c.xd.numel ? c.dx : NULL, *w = c.wd.numel ? c.dw : NULL;
        spec_list specs;
        supporting(&c.p, &specs);
        cr_expect_geq(specs.n, 1, "no schedule supports '%s'", cases[k]);
        for (int i = 0; i < specs.n; ++i) {
            const char *spec = specs.v[i];
            cr_expect_eq(run_with(&c, spec, x, w, c.p.has_bias ? c.db : NULL, NULL, NULL),
                         CONVND_OK, "%s on '%s': %s", spec, cases[k], convnd_last_error());
            /* with real buffers too: the one-element sentinel of y stays poisoned */
            cr_expect_eq(run_with(&c, spec, c.dx, c.dw, c.db, c.dz, c.dy), CONVND_OK, "%s: %s",
                         spec, convnd_last_error());
            cr_expect(test_is_poison(c.p.dtype, c.hy, 0), "%s wrote to an empty y", spec);
        }
        test_case_free(&c);
    }
}

/* C_in = 0: the sums are empty, so y = act(bias + beta*z) and x, w may be NULL; every schedule
 * that accepts it must still write all of y. */
Test(contract, no_input_channels_leaves_the_epilogue) {
    const char *cases[] = {"fwd 2d N=2 Ci=0 Co=5 I=4,3 K=3 P0=1 P1=1 bias z beta=0.5 act=silu",
                           "tr 1d N=1 Ci=0 Co=3 I=4 K=2 S=2 bias f16"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        test_conv_case c;
        setup(&c, cases[k], 0);
        cr_assert_gt(c.yd.numel, 0);
        spec_list specs;
        supporting(&c.p, &specs);
        cr_expect_geq(specs.n, 1, "no schedule supports '%s'", cases[k]);
        for (int i = 0; i < specs.n; ++i) {
            const char *spec = specs.v[i];
            cr_expect_eq(run_with(&c, spec, NULL, NULL, c.db, c.p.has_z ? c.dz : NULL, c.dy),
                         CONVND_OK, "%s on '%s': %s", spec, cases[k], convnd_last_error());
            char msg[512];
            cr_expect(test_case_check(&c, msg, sizeof msg), "%s on '%s': %s", spec, cases[k], msg);
        }
        test_case_free(&c);
    }
}

/* ---- aliasing that is allowed ------------------------------------------------------------------
 */

Test(contract, z_equal_to_y_and_adjacent_buffers_are_fine) {
    test_conv_case c;
    setup(&c, "fwd 2d N=2 Ci=8 Co=8 I=6,5 K=3 P0=1 P1=1 bias z beta=0.75 x=cl w=cl", 1);
    const size_t y_bytes = c.esize * (size_t)c.yd.numel, x_bytes = c.esize * (size_t)c.xd.numel;
    spec_list specs;
    supporting(&c.p, &specs);
    cr_expect_geq(specs.n, 1);
    for (int i = 0; i < specs.n; ++i) { /* z == y: test_case_run starts y as z */
        cr_expect_eq(test_case_run(&c, specs.v[i]), CONVND_OK, "%s in place: %s", specs.v[i],
                     convnd_last_error());
        char msg[512];
        cr_expect(test_case_check(&c, msg, sizeof msg), "%s in place: %s", specs.v[i], msg);
    }
    /* y immediately followed by x in one allocation: touching, not overlapping */
    test_case_free(&c);
    setup(&c, "fwd 2d N=2 Ci=8 Co=8 I=6,5 K=3 P0=1 P1=1 bias x=cl w=cl", 0);
    char *both = NULL;
    cr_assert_eq(convnd_malloc((void **)&both, y_bytes + x_bytes), CONVND_OK);
    cr_assert_eq(convnd_memcpy_h2d(both + y_bytes, c.hx, x_bytes), CONVND_OK);
    supporting(&c.p, &specs);
    for (int i = 0; i < specs.n; ++i) {
        const char *spec = specs.v[i];
        cr_expect_eq(run_with(&c, spec, both + y_bytes, c.dw, c.db, NULL, both), CONVND_OK,
                     "%s with x right after y: %s", spec, convnd_last_error());
        char msg[512];
        cr_expect(test_case_check(&c, msg, sizeof msg), "%s with x right after y: %s", spec, msg);
    }
    convnd_free(both);
    test_case_free(&c);
}

/* ---- pointers aligned to their elements but not to 16 bytes ---------------------------------- */

/* Problems shaped for the vectorized paths (channels-last, channel counts a multiple of 16
 * bytes, depthwise, transposed): with every pointer moved one element off a 256-byte boundary
 * they must still run, on every schedule that supports them, and give the reference result. */
static const char *const vector_friendly[] = {
    "fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 x=cl w=cl bias z beta=0.5",
    "fwd 2d N=2 Ci=16 Co=32 I=5 K=1 f16 x=cl w=cl bias",
    "fwd 2d N=1 Ci=32 Co=32 g=32 I=9,8 K=3 P0=1 P1=1 x=cl w=cl bias z beta=1",
    "fwd 2d N=1 Ci=16 Co=16 g=16 I=9,8 K=5 P0=2 P1=2 bf16 x=cl w=cl",
    "tr 2d N=1 Ci=16 Co=16 I=4,5 K=3 S=2 P0=1 P1=0 x=cl w=cl bias",
    "fwd 2d N=2 Ci=16 Co=16 I=6,5 K=3 P0=1 P1=1 f16 tf32",
};

Test(contract, element_aligned_pointers_work_on_every_schedule) {
    int runs = 0;
    for (size_t k = 0; k < sizeof vector_friendly / sizeof vector_friendly[0]; ++k) {
        test_conv_case c;
        setup(&c, vector_friendly[k], 0);
        test_offset_buffers b;
        cr_assert(test_offset_buffers_init(&b, &c, 1), "%s", convnd_last_error());
        spec_list specs;
        supporting(&c.p, &specs);
        for (int i = 0; i < specs.n; ++i) {
            const char *spec = specs.v[i];
            cr_expect_eq(run_with(&c, spec, b.x, b.w, c.p.has_bias ? b.bias : NULL,
                                  c.p.has_z ? b.z : NULL, b.y),
                         CONVND_OK, "%s on '%s' one element off 16 bytes: %s", spec,
                         vector_friendly[k], convnd_last_error());
            char msg[512];
            cr_expect(test_case_check(&c, msg, sizeof msg), "%s on '%s' one element off: %s", spec,
                      vector_friendly[k], msg);
            ++runs;
        }
        test_offset_buffers_free(&b);
        test_case_free(&c);
    }
    cr_expect_geq(runs, 6);
}
