#include "fuzz_checks.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd_bind.h"
#include "error.h"
#include "problem_internal.h"
#include "registry.h"
#include "size_model.h"

typedef __int128 i128;

void fuzz_fail(const convnd_problem *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\nconvnd fuzz finding: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (p) {
        char text[1024];
        convnd_problem_string(p, text, sizeof text);
        fprintf(stderr, "\n  problem: %s", text);
    }
    fprintf(stderr, "\n  last error: %s\n", convnd_last_error());
    abort();
}

void fuzz_expect_message(const convnd_problem *p, convnd_status st, const char *call) {
    FUZZ_CHECK(p, st >= CONVND_OK && st <= CONVND_ERR_INTERNAL, "%s returned status %d", call,
               (int)st);
    if (st != CONVND_OK)
        FUZZ_CHECK(p, convnd_last_error()[0] != '\0', "%s returned '%s' without a message", call,
                   convnd_status_string(st));
}

/* What an entry point that validates first must return: validation's status when p is
 * invalid, else `otherwise`. */
static void expect_status(const convnd_problem *p, convnd_status got, convnd_status want,
                          const char *call) {
    fuzz_expect_message(p, got, call);
    FUZZ_CHECK(p, got == want, "%s returned '%s', expected '%s'", call, convnd_status_string(got),
               convnd_status_string(want));
}

/* ---- validation, shapes, sizes, metrics ------------------------------------------------------ */

static convnd_status check_validate(const convnd_problem *p, const size_model *m) {
    convnd_clear_error();
    const convnd_status st = convnd_validate(p);
    fuzz_expect_message(p, st, "convnd_validate");
    FUZZ_CHECK(p, size_model_accepts(m, st),
               "convnd_validate returned '%s' but the 128-bit model says valid=%d rule_broken=%d "
               "may_overflow=%d",
               convnd_status_string(st), m->valid, m->rule_broken, m->may_overflow);
    return st;
}

static void check_output_size(const convnd_problem *p, const size_model *m, convnd_status st) {
    int64_t out[CONVND_MAX_DIMS] = {-7, -7, -7};
    convnd_clear_error();
    expect_status(p, convnd_output_size(p, out), st, "convnd_output_size");
    if (st != CONVND_OK) return;
    for (int t = 0; t < CONVND_MAX_DIMS; ++t) {
        const int64_t want = t < p->dims ? m->out[t] : 0;
        FUZZ_CHECK(p, out[t] == want, "output size [%d] = %" PRId64 ", model %" PRId64, t, out[t],
                   want);
    }
}

static void check_describe(const convnd_problem *p, const size_model *m, convnd_status st,
                           int32_t which) {
    convnd_tensor_desc d;
    memset(&d, 0x5a, sizeof d);
    const int known = which >= CONVND_X && which <= CONVND_Z;
    convnd_clear_error();
    const convnd_status got = convnd_tensor_describe(p, (convnd_tensor)which, &d);
    const convnd_status want = st != CONVND_OK ? st
                               : known         ? CONVND_OK
                                               : CONVND_ERR_INVALID_ARGUMENT;
    expect_status(p, got, want, "convnd_tensor_describe");
    if (got != CONVND_OK) return;
    const convnd_layout layout = which == CONVND_X      ? p->x_layout
                                 : which == CONVND_W    ? p->w_layout
                                 : which == CONVND_BIAS ? CONVND_CHANNELS_FIRST
                                 /* wgrad: z is dw_prev, in dw's (w's) layout */
                                 : which == CONVND_Z && p->mode == CONVND_WGRAD ? p->w_layout
                                                                                : m->y_layout;
    FUZZ_CHECK(p, d.rank == m->rank[which], "tensor %d: rank %d, model %d", which, (int)d.rank,
               (int)m->rank[which]);
    for (int32_t i = 0; i < d.rank; ++i) {
        FUZZ_CHECK(p, d.shape[i] == m->shape[which][i], "tensor %d: shape[%d] = %" PRId64, which,
                   (int)i, d.shape[i]);
        FUZZ_CHECK(p, d.strides[i] == m->strides[which][i],
                   "tensor %d: strides[%d] = %" PRId64 ", model %" PRId64, which, (int)i,
                   d.strides[i], m->strides[which][i]);
    }
    FUZZ_CHECK(p, d.numel == m->numel[which], "tensor %d: numel %" PRId64 ", model %" PRId64, which,
               d.numel, m->numel[which]);
    FUZZ_CHECK(p, (i128)d.bytes == (i128)m->numel[which] * m->elem_bytes,
               "tensor %d: bytes %" PRId64, which, d.bytes);
    FUZZ_CHECK(p, d.layout == layout, "tensor %d: layout %d, expected %d", which, (int)d.layout,
               (int)layout);
}

/* |a - b| within a few roundings of b (both are products of <= 10 exact factors) */
static int close_to(double a, long double b) {
    if (!isfinite(a) || a < 0) return 0;
    const long double diff = (long double)a - b;
    return fabsl(diff) <= 1e-12L * fabsl(b);
}

static void check_metrics(const convnd_problem *p, const size_model *m, convnd_status st) {
    double flops = -1.0, bytes = -1.0;
    convnd_clear_error();
    expect_status(p, convnd_flops(p, NULL), CONVND_ERR_NULL_POINTER, "convnd_flops(NULL)");
    convnd_clear_error();
    expect_status(p, convnd_flops(p, &flops), st, "convnd_flops");
    convnd_clear_error();
    expect_status(p, convnd_min_bytes(p, &bytes), st, "convnd_min_bytes");
    if (st != CONVND_OK) return;
    const int fwd = p->mode != CONVND_TRANSPOSED; /* wgrad: the forward's multiply-adds */
    long double f = 2.0L * (long double)p->N * (long double)(fwd ? p->C_out : p->C_in) *
                    (long double)((fwd ? p->C_in : p->C_out) / p->groups);
    for (int t = 0; t < p->dims; ++t)
        f *= (long double)p->kernel[t] * (long double)(fwd ? m->out[t] : p->input[t]);
    FUZZ_CHECK(p, close_to(flops, f), "flops %g, model %Lg", flops, f);
    long double e = (long double)m->numel[CONVND_X] + (long double)m->numel[CONVND_W] +
                    (long double)m->numel[CONVND_Y];
    if (p->has_bias) e += (long double)m->numel[CONVND_BIAS];
    if (p->has_z) e += (long double)m->numel[CONVND_Z];
    FUZZ_CHECK(p, close_to(bytes, e * m->elem_bytes), "min bytes %g, model %Lg", bytes,
               e * m->elem_bytes);
}

/* ---- the kernels' view ----------------------------------------------------------------------- */

static int index64_forced(void) {
    const char *e = getenv("CONVND_FORCE_INDEX64");
    return e && strcmp(e, "1") == 0;
}

static void check_params(const convnd_problem *p, const size_model *m, convnd_status st) {
    convnd_conv_params q;
    convnd_clear_error();
    expect_status(p, convnd_params_from_problem(p, &q), st, "convnd_params_from_problem");
    if (st != CONVND_OK) return;
    const int d = p->dims;
    for (int j = 0; j < 3; ++j) {
        const int t = j - (3 - d), real = t >= 0;
        FUZZ_CHECK(p,
                   q.in[j] == (real ? p->input[t] : 1) && q.out[j] == (real ? m->out[t] : 1) &&
                       q.k[j] == (real ? p->kernel[t] : 1) && q.s[j] == (real ? p->stride[t] : 1) &&
                       q.d[j] == (real ? p->dilation[t] : 1) &&
                       q.p0[j] == (real ? p->pad_before[t] : 0) &&
                       q.p1[j] == (real ? p->pad_after[t] : 0),
                   "params spatial dim %d does not match the problem", j);
        if (!real) continue;
        FUZZ_CHECK(p,
                   q.xs[2 + j] == m->strides[CONVND_X][2 + t] &&
                       q.ws[2 + j] == m->strides[CONVND_W][2 + t] &&
                       q.ys[2 + j] == m->strides[CONVND_Y][2 + t],
                   "params strides of spatial dim %d do not match the layouts", j);
    }
    for (int i = 0; i < 2; ++i)
        FUZZ_CHECK(p,
                   q.xs[i] == m->strides[CONVND_X][i] && q.ws[i] == m->strides[CONVND_W][i] &&
                       q.ys[i] == m->strides[CONVND_Y][i],
                   "params strides of dim %d do not match the layouts", i);
    FUZZ_CHECK(p,
               q.x_numel == m->numel[CONVND_X] && q.w_numel == m->numel[CONVND_W] &&
                   q.y_numel == m->numel[CONVND_Y],
               "params element counts %" PRId64 "/%" PRId64 "/%" PRId64 " do not match the model",
               q.x_numel, q.w_numel, q.y_numel);
    FUZZ_CHECK(p, q.cin_g == p->C_in / p->groups && q.cout_g == p->C_out / p->groups,
               "params channels per group");
    /* The index-width rule restated from the SPEC's sizes (core/conv_params.c decides it): 64-bit
     * from 2^30 elements in a tensor, or a spatial coordinate's terms near 2^30 */
    const int64_t limit = (int64_t)1 << 30;
    const int big =
        m->numel[CONVND_X] >= limit || m->numel[CONVND_W] >= limit || m->numel[CONVND_Y] >= limit;
    int far = 0;
    for (int t = 0; t < d; ++t) {
        const int64_t P0 = p->pad_before[t], P1 = p->pad_after[t], K = p->kernel[t];
        const int64_t D = p->dilation[t], S = p->stride[t], I = p->input[t], O = m->out[t];
        if (P0 <= -limit || P0 >= limit || P1 <= -limit || P1 >= limit || K >= limit ||
            D >= limit || S >= limit || I >= limit || O >= limit) {
            far = 1;
            continue;
        }
        const int64_t span = (P0 < 0 ? -P0 : P0) + (P1 < 0 ? -P1 : P1) + K * D + (I + O) * (S + 1);
        far |= span >= limit;
    }
    /* views, a prefix and a state have extents of their own the model does not size: they may
     * also call for 64-bit indices, never the reverse */
    const int extents = p->x_view.custom || p->y_view.custom || p->z_view.custom ||
                        p->prefix_size > 0 || p->state_size > 0;
    FUZZ_CHECK(p, q.index64 == (big || far || index64_forced()) || (q.index64 && extents),
               "params index64=%d but the largest tensor %s 2^30 elements and the coordinates "
               "%s",
               (int)q.index64, big ? "reaches" : "stays below",
               far ? "reach 2^30" : "stay below 2^30");
    FUZZ_CHECK(p,
               q.x_cl == (p->x_layout == CONVND_CHANNELS_LAST) &&
                   q.w_cl == (p->w_layout == CONVND_CHANNELS_LAST) &&
                   q.y_cl == (m->y_layout == CONVND_CHANNELS_LAST),
               "params layout flags");
    FUZZ_CHECK(p, q.allow_tf32 == (p->dtype == CONVND_F32 && p->math == CONVND_MATH_ALLOW_TF32),
               "params allow_tf32=%d", (int)q.allow_tf32);
}

/* ---- schedules and the planner --------------------------------------------------------------- */

/* A forced-schedule spec: NULL (the planner), a registered name, "name:config", "name:<index>",
 * arbitrary bytes, or a name that cannot be registered ("zz..."). */
static const char *fuzz_spec(fuzz_input *in, char *buf, size_t cap, int *surely_unknown) {
    *surely_unknown = 0;
    const int32_t n = convnd_schedule_table_size;
    const convnd_schedule *s = convnd_schedule_table[fuzz_byte(in) % n];
    switch (fuzz_byte(in) % 6) {
    case 0:
        return NULL;
    case 1:
        snprintf(buf, cap, "%s", s->name);
        return buf;
    case 2:
        snprintf(buf, cap, "%s:%s", s->name, s->config_names[fuzz_byte(in) % s->num_configs]);
        return buf;
    case 3:
        snprintf(buf, cap, "%s:%" PRId64, s->name, fuzz_i64(in));
        return buf;
    case 4:
        fuzz_string(in, buf, cap);
        return buf;
    default:
        buf[0] = 'z', buf[1] = 'z';
        fuzz_string(in, buf + 2, cap - 2);
        *surely_unknown = 1; /* whatever follows, the name starts with "zz" */
        for (int32_t i = 0; i < n; ++i)
            *surely_unknown &= strncmp(convnd_schedule_table[i]->name, "zz", 2) != 0;
        return buf;
    }
}

/* Every (schedule, config) on a valid p: supports() answers 0 or 1, with a reason when 0; the
 * public convnd_schedule_supports agrees; worth_routing and workspace_size run. */
static void check_schedules(const convnd_problem *p, const size_model *m) {
    convnd_problem q = *p;
    q.y_layout = m->y_layout;
    convnd_conv_params params;
    FUZZ_CHECK(p, convnd_params_from_problem(&q, &params) == CONVND_OK,
               "convnd_params_from_problem failed on a valid problem: %s", convnd_last_error());
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        FUZZ_CHECK(p, s && s->name && s->num_configs >= 1 && s->supports && s->launch,
                   "registry entry %d is incomplete", (int)i);
        for (int32_t c = 0; c < s->num_configs; ++c) {
            char reason[512], spec[160];
            memset(reason, 0x5a, sizeof reason);
            convnd_clear_error();
            const int32_t ok = s->supports(&params, c, reason, sizeof reason);
            FUZZ_CHECK(p, ok == 0 || ok == 1, "%s:%s supports() returned %d", s->name,
                       s->config_names[c], (int)ok);
            if (!ok)
                FUZZ_CHECK(p, memchr(reason, 0, sizeof reason) && reason[0] != '\0',
                           "%s:%s declined without a (terminated) reason", s->name,
                           s->config_names[c]);
            if (ok && s->worth_routing) {
                const int32_t w = s->worth_routing(&params, c);
                FUZZ_CHECK(p, w == 0 || w == 1, "%s:%s worth_routing() returned %d", s->name,
                           s->config_names[c], (int)w);
            }
            if (ok && s->workspace_size) (void)s->workspace_size(&params, c);
            snprintf(spec, sizeof spec, "%s:%s", s->name, s->config_names[c]);
            FUZZ_CHECK(p, convnd_schedule_supports(spec, p, NULL, 0) == ok,
                       "convnd_schedule_supports('%s') disagrees with the registry (%d)", spec,
                       (int)ok);
        }
    }
}

/* The public supports() with a reason buffer of a fuzzed size: never written past its end
 * (the buffer is exactly that big, so AddressSanitizer sees an overrun), always terminated. */
static void check_public_supports(const convnd_problem *p, convnd_status st, fuzz_input *in) {
    char spec_buf[96];
    int unknown;
    const char *spec = fuzz_spec(in, spec_buf, sizeof spec_buf, &unknown);
    const size_t len = fuzz_byte(in) % 80;
    char *reason = len ? malloc(len) : NULL;
    if (len && !reason) return;
    const int32_t ok = convnd_schedule_supports(spec, p, reason, len);
    FUZZ_CHECK(p, ok == 0 || ok == 1, "convnd_schedule_supports returned %d", (int)ok);
    if (len) FUZZ_CHECK(p, memchr(reason, 0, len), "reason not terminated within %zu bytes", len);
    if (!spec || unknown || st != CONVND_OK)
        FUZZ_CHECK(p, !ok, "convnd_schedule_supports('%s') accepted %s", spec ? spec : "(null)",
                   st != CONVND_OK ? "an invalid problem" : "it");
    free(reason);
}

/* Plan name and workspace size, with and without a forced spec: a spec is planned exactly when
 * the public supports() accepts it, and the plan it names supports p. */
static void check_planner(const convnd_problem *p, convnd_status st, fuzz_input *in) {
    char spec_buf[96], name[128];
    int unknown;
    const char *spec = fuzz_spec(in, spec_buf, sizeof spec_buf, &unknown);
    const convnd_options opts = {.schedule = spec};
    const convnd_options *o = spec ? &opts : NULL;

    convnd_clear_error();
    expect_status(p, convnd_plan_name(p, o, NULL, 0), CONVND_ERR_NULL_POINTER,
                  "convnd_plan_name(buf NULL)");
    convnd_clear_error();
    const convnd_status got = convnd_plan_name(p, o, name, sizeof name);
    fuzz_expect_message(p, got, "convnd_plan_name");
    size_t ws = 0;
    convnd_clear_error();
    const convnd_status ws_st = convnd_workspace_size(p, o, &ws);
    FUZZ_CHECK(p, ws_st == got, "convnd_workspace_size '%s' but convnd_plan_name '%s'",
               convnd_status_string(ws_st), convnd_status_string(got));
    if (st != CONVND_OK) {
        FUZZ_CHECK(p, got == st, "convnd_plan_name on an invalid problem returned '%s'",
                   convnd_status_string(got));
        return;
    }
    const int planned = spec ? convnd_schedule_supports(spec, p, NULL, 0) : 1;
    FUZZ_CHECK(p, (got == CONVND_OK) == planned,
               "convnd_plan_name('%s') returned '%s' but supports() says %d",
               spec ? spec : "(planner)", convnd_status_string(got), planned);
    if (got != CONVND_OK) {
        FUZZ_CHECK(p, got == CONVND_ERR_INVALID_ARGUMENT || got == CONVND_ERR_UNSUPPORTED,
                   "forced '%s' failed with '%s'", spec, convnd_status_string(got));
        FUZZ_CHECK(p, name[0] == '\0', "plan name '%s' left after an error", name);
        return;
    }
    char reason[512];
    FUZZ_CHECK(p, convnd_schedule_supports(name, p, reason, sizeof reason),
               "the plan '%s' does not support the problem: %s", name, reason);
    /* a buffer one byte short: an error and an empty string, never a truncated name */
    const size_t need = strlen(name) + 1;
    char *small = malloc(need - 1);
    if (small) {
        convnd_clear_error();
        expect_status(p, convnd_plan_name(p, o, small, need - 1), CONVND_ERR_INVALID_ARGUMENT,
                      "convnd_plan_name(short buffer)");
        FUZZ_CHECK(p, small[0] == '\0', "short buffer holds '%.*s'", (int)(need - 2), small);
        free(small);
    }
}

/* ---- conv_nd's pointer checks, with pointers that are never dereferenced ------------------- */

enum { FAKE_X, FAKE_W, FAKE_BIAS, FAKE_Z, FAKE_TENSORS };

/* conv_nd's second operand and output: w -> y, or in wgrad mode dy (y's shape) -> dw (w's). */
static convnd_tensor operand_tensor(const convnd_problem *p) {
    return p->mode == CONVND_WGRAD ? CONVND_Y : CONVND_W;
}
static convnd_tensor output_tensor(const convnd_problem *p) {
    return p->mode == CONVND_WGRAD ? CONVND_W : CONVND_Y;
}
static const char *const fake_names[FAKE_TENSORS] = {"x", "w", "bias", "z"};

/* Addresses stay in [4 KiB, 2^48) like real ones; y sits at 2^40. */
static uintptr_t fake_address(i128 a) {
    const i128 lo = 4096, hi = (i128)1 << 48;
    return (uintptr_t)(a < lo ? lo : a >= hi ? hi - 4096 : a);
}

/* What convnd_check_call must answer (problem_internal.h): a NULL required tensor that has
 * bytes, then y NULL, then nothing to check when y is empty, then a pointer not aligned to the
 * element size, then an overlap with y except z == y exactly. */
static convnd_status expected_call_status(const convnd_problem *p, const i128 bytes[],
                                          const uintptr_t ptr[], uintptr_t y, i128 y_bytes,
                                          int64_t elem_bytes) {
    const int required[FAKE_TENSORS] = {1, 1, p->has_bias, p->has_z};
    for (int i = 0; i < FAKE_TENSORS; ++i)
        if (required[i] && bytes[i] > 0 && !ptr[i]) return CONVND_ERR_NULL_POINTER;
    if (y_bytes > 0 && !y) return CONVND_ERR_NULL_POINTER;
    if (y_bytes == 0) return CONVND_OK;
    for (int i = 0; i < FAKE_TENSORS; ++i)
        if (required[i] && bytes[i] > 0 && ptr[i] % (uintptr_t)elem_bytes)
            return CONVND_ERR_INVALID_ARGUMENT;
    if (y % (uintptr_t)elem_bytes) return CONVND_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < FAKE_TENSORS; ++i) {
        if (!required[i] || bytes[i] == 0 || !ptr[i]) continue;
        if (i == FAKE_Z && ptr[i] == y) continue;
        if ((i128)ptr[i] < (i128)y + y_bytes && (i128)y < (i128)ptr[i] + bytes[i])
            return CONVND_ERR_ALIASING;
    }
    return CONVND_OK;
}

static void check_call_contract(const convnd_problem *p, const size_model *m, fuzz_input *in) {
    const int64_t eb = m->elem_bytes;
    const i128 bytes[FAKE_TENSORS] = {
        (i128)m->numel[CONVND_X] * eb, (i128)m->numel[operand_tensor(p)] * eb,
        (i128)m->numel[CONVND_BIAS] * eb, (i128)m->numel[output_tensor(p)] * eb};
    const i128 y_bytes = (i128)m->numel[output_tensor(p)] * eb;
    const uintptr_t y = fuzz_byte(in) % 8 == 0 ? 0 : (uintptr_t)1 << 40;
    uintptr_t ptr[FAKE_TENSORS];
    for (int i = 0; i < FAKE_TENSORS; ++i) {
        switch (fuzz_byte(in) % 6) {
        case 0:
            ptr[i] = 0;
            break;
        case 1: /* its own region, far from y (unless the tensors are huge) */
            ptr[i] = fake_address(((i128)i + 2) << 44);
            break;
        case 2:
            ptr[i] = fake_address((i128)((uintptr_t)1 << 40) + (i128)(fuzz_i64(in) % (1LL << 44)));
            break;
        case 3:
            ptr[i] = y;
            break;
        case 4: /* just past y */
            ptr[i] = fake_address((i128)((uintptr_t)1 << 40) + y_bytes);
            break;
        default: /* ending just before y */
            ptr[i] = fake_address((i128)((uintptr_t)1 << 40) - bytes[i]);
            break;
        }
    }
    const convnd_status want = expected_call_status(p, bytes, ptr, y, y_bytes, eb);
    const void *x = (const void *)ptr[FAKE_X], *w = (const void *)ptr[FAKE_W];
    const void *bias = (const void *)ptr[FAKE_BIAS], *z = (const void *)ptr[FAKE_Z];
    convnd_clear_error();
    const convnd_status got = convnd_check_call(p, x, w, bias, z, (const void *)y);
    fuzz_expect_message(p, got, "convnd_check_call");
    FUZZ_CHECK(p, got == want,
               "convnd_check_call returned '%s', expected '%s' (x=%p w=%p bias=%p z=%p y=%p)",
               convnd_status_string(got), convnd_status_string(want), x, w, bias, z, (void *)y);
    if (want == CONVND_OK) return;
    /* conv_nd must stop at the same check, before planning or launching anything */
    convnd_clear_error();
    const convnd_status call = conv_nd(p, x, w, bias, z, (void *)y, NULL, 0, NULL, NULL);
    expect_status(p, call, want, "conv_nd(bad pointers)");
    if (want == CONVND_ERR_ALIASING)
        FUZZ_CHECK(p, strstr(convnd_last_error(), "overlaps"), "aliasing message: %s",
                   convnd_last_error());
    if (want == CONVND_ERR_INVALID_ARGUMENT)
        FUZZ_CHECK(p, strstr(convnd_last_error(), "aligned"), "alignment message: %s",
                   convnd_last_error());
    (void)fake_names;
}

/* conv_nd with pointers that pass the checks, where the planner must stop it before any launch:
 * an unknown or unsupporting forced schedule, or a workspace one byte short. An empty y
 * with no workspace needed returns OK without touching anything. */
static void check_call_planning(const convnd_problem *p, const size_model *m, fuzz_input *in) {
    const int64_t eb = m->elem_bytes;
    const i128 bytes[FAKE_TENSORS] = {
        (i128)m->numel[CONVND_X] * eb, (i128)m->numel[operand_tensor(p)] * eb,
        (i128)m->numel[CONVND_BIAS] * eb, (i128)m->numel[output_tensor(p)] * eb};
    const uintptr_t y = (uintptr_t)1 << 40;
    const i128 y_bytes = bytes[FAKE_Z];
    /* consecutive regions after y: disjoint from it whatever the sizes */
    uintptr_t ptr[FAKE_TENSORS];
    i128 at = (i128)y + y_bytes;
    for (int i = 0; i < FAKE_TENSORS; ++i) {
        if (at >= (i128)1 << 62) return; /* too big to place without wrapping */
        ptr[i] = (uintptr_t)at;
        at += bytes[i] + 256;
    }
    if (expected_call_status(p, bytes, ptr, y, y_bytes, eb) != CONVND_OK) return;
    const void *x = (const void *)ptr[FAKE_X], *w = (const void *)ptr[FAKE_W];
    const void *bias = (const void *)ptr[FAKE_BIAS], *z = (const void *)ptr[FAKE_Z];

    char spec_buf[96];
    int unknown;
    const char *spec = fuzz_spec(in, spec_buf, sizeof spec_buf, &unknown);
    const convnd_options opts = {.schedule = spec};
    if (spec && (unknown || !convnd_schedule_supports(spec, p, NULL, 0))) {
        convnd_clear_error();
        const convnd_status got = conv_nd(p, x, w, bias, z, (void *)y, NULL, 0, NULL, &opts);
        fuzz_expect_message(p, got, "conv_nd(forced)");
        FUZZ_CHECK(p, got == CONVND_ERR_INVALID_ARGUMENT || got == CONVND_ERR_UNSUPPORTED,
                   "conv_nd with forced schedule '%s' returned '%s'", spec,
                   convnd_status_string(got));
        /* the message echoes at most the first 64 characters of the spec (ECHO_MAX in
         * schedules/registry.c), so that a huge string cannot hide the reason */
        char echo[65];
        snprintf(echo, sizeof echo, "%s", spec_buf);
        FUZZ_CHECK(p, !unknown || strstr(convnd_last_error(), echo),
                   "the message does not name the schedule '%s': %s", echo, convnd_last_error());
        return;
    }
    size_t need = 0;
    convnd_clear_error();
    expect_status(p, convnd_workspace_size(p, spec ? &opts : NULL, &need), CONVND_OK,
                  "convnd_workspace_size");
    if (need > 0) {
        convnd_clear_error();
        const convnd_status got = conv_nd(p, x, w, bias, z, (void *)y, (void *)((uintptr_t)1 << 46),
                                          need - 1, NULL, spec ? &opts : NULL);
        expect_status(p, got, CONVND_ERR_WORKSPACE, "conv_nd(workspace one byte short)");
        char needed[32];
        snprintf(needed, sizeof needed, "%zu", need);
        FUZZ_CHECK(p, strstr(convnd_last_error(), needed),
                   "the workspace message does not name the %zu bytes needed", need);
    } else if (m->numel[output_tensor(p)] == 0) {
        convnd_clear_error();
        expect_status(p, conv_nd(p, x, w, bias, z, (void *)y, NULL, 0, NULL, spec ? &opts : NULL),
                      CONVND_OK, "conv_nd(empty y)");
    }
}

/* ---- text --------------------------------------------------------------------------------------
 */

/* convnd_problem_string behaves like snprintf for any buffer size. */
static void check_problem_string(const convnd_problem *p, fuzz_input *in) {
    char full[2048];
    const int n = convnd_problem_string(p, full, sizeof full);
    FUZZ_CHECK(p, n > 0 && (size_t)n < sizeof full && strlen(full) == (size_t)n,
               "convnd_problem_string returned %d for a %zu-byte text", n, strlen(full));
    const size_t len = fuzz_byte(in) % 64;
    char *buf = len ? malloc(len) : NULL;
    if (len && !buf) return;
    FUZZ_CHECK(p, convnd_problem_string(p, buf, len) == n, "length differs with buf_len=%zu", len);
    if (len)
        FUZZ_CHECK(p,
                   strncmp(buf, full, len - 1) == 0 &&
                       buf[len - 1 < (size_t)n ? len - 1 : (size_t)n] == '\0',
                   "truncated text is not a terminated prefix");
    free(buf);
}

void fuzz_exercise_problem(const convnd_problem *p, fuzz_input *in) {
    size_model m;
    size_model_eval(p, &m);
    const convnd_status st = check_validate(p, &m);
    if (getenv("CONVND_FUZZ_VERBOSE")) { /* what an input decodes to (corpus upkeep) */
        char text[1024];
        convnd_problem_string(p, text, sizeof text);
        fprintf(stderr, "problem: %s\n  validate: %s%s%s\n", text, convnd_status_string(st),
                st ? ": " : "", st ? convnd_last_error() : "");
    }
    check_output_size(p, &m, st);
    for (int32_t which = CONVND_X; which <= CONVND_Z; ++which)
        check_describe(p, &m, st, which);
    check_describe(p, &m, st, fuzz_i32(in));
    check_metrics(p, &m, st);
    check_params(p, &m, st);
    check_problem_string(p, in);
    check_public_supports(p, st, in);
    check_planner(p, st, in);
    if (st != CONVND_OK) return;
    check_schedules(p, &m);
    check_call_contract(p, &m, in);
    check_call_planning(p, &m, in);
}
