/* SPEC §15, the input prologue: the chains models use (ATen's GroupNorm + SiLU with its fused
 * and its two-rounding x*a + b, Wan's five-step RMS norm + SiLU) and each step kind alone, each
 * act_in, rounded and unrounded ends, on every schedule that applies a prologue against the
 * reference conv over x̂ = P(x) computed step by step (tests/ref/prologue_ref.c): 1/2/3-D,
 * forward and transposed, negative padding (P never reaches padding), groups, an x view, per-
 * sample a and b, a prefix with a state (P applies to x only, the state holds P's values) and a
 * suffix. The prologue's values bit for bit (a state over the whole of x), every other schedule
 * declining with the reason, and bad prologues and operands refused with nothing written. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convnd.h"
#include "convnd_ref.h"
#include "test_conv_case.h"
#include "test_problem_text.h"
#include "test_random.h"
#include "test_schedule_runs.h"
#include "test_tolerance.h"

/* ---- chains ------------------------------------------------------------------------------- */

typedef struct chain_case {
    const char *id;
    convnd_prologue pro;
} chain_case;

#define STEP(op_, round_)                                                                          \
    { CONVND_PRO_##op_, round_, 0.0f, CONVND_ACT_NONE }
#define SCALAR(s_, round_)                                                                         \
    { CONVND_PRO_MUL_SCALAR, round_, s_, CONVND_ACT_NONE }
#define ACT(act_, round_)                                                                          \
    { CONVND_PRO_ACT, round_, 0.0f, CONVND_ACT_##act_ }

static const chain_case chains[] = {
    /* ATen GroupNorm (a = rstd*gamma, b = beta - a*mean per (n, c)) as CUDA contracts it, SiLU */
    {"groupnorm_silu_fused", {2, {STEP(FMA_AB, 1), ACT(SILU, 1)}, 1}},
    /* the same without contraction: x*a and +b each in f32, one rounding */
    {"groupnorm_silu_two_f32_ops", {3, {STEP(MUL_A, 0), STEP(ADD_B, 1), ACT(SILU, 1)}, 1}},
    /* Wan's RMS norm: x / max(||x||, eps), * sqrt(C), * gamma, + beta, SiLU, each rounded */
    {"wan_rms_silu",
     {5, {STEP(DIV_R, 1), SCALAR(2.0f, 1), STEP(MUL_A, 1), STEP(ADD_B, 1), ACT(SILU, 1)}, 0}},
    /* each kind once more, with unrounded ends (the conv multiplies f32 values) */
    {"mul_r_relu_unrounded", {2, {STEP(MUL_R, 0), ACT(RELU, 0)}, 0}},
    {"scalar_gelu", {2, {SCALAR(0.75f, 0), ACT(GELU, 1)}, 0}},
    {"add_b_silu_unrounded", {2, {STEP(ADD_B, 1), ACT(SILU, 0)}, 0}},
    {"per_channel_affine_relu", {3, {STEP(MUL_A, 1), STEP(ADD_B, 0), ACT(RELU, 1)}, 0}},
};
#define N_CHAINS (sizeof chains / sizeof chains[0])

static int chain_ends_rounded(const convnd_prologue *pro) {
    return pro->num_steps > 0 && pro->steps[pro->num_steps - 1].round;
}

/* ---- problems ----------------------------------------------------------------------------- */

static const char *const problems[] = {
    /* VAE-like: channels-last, "same" padding, bias; f16 and bf16 */
    "fwd 2d N=2 Ci=8 Co=6 I=5,6 K=3 P0=1 P1=1 f16 x=cl w=cl bias",
    "fwd 2d N=1 Ci=6 Co=4 g=2 I=4,5 K=3 S=2,1 P0=1,0 P1=1,2 bf16 x=cl",
    /* negative padding (cropping) on one side, padding on the other, dilation */
    "fwd 1d N=2 Ci=3 Co=2 I=9 K=3 D=2 P0=-2 P1=3 act=silu",
    "fwd 3d N=1 Ci=4 Co=3 I=3,4,4 K=3,2,3 P0=1,-1,1 P1=1,1,0 bf16 bias z beta=0.5",
    /* transposed (every x tap is inside x) */
    "tr 2d N=2 Ci=4 Co=3 I=3,4 K=3 S=2 P0=1 P1=0 f16",
    /* x a channel slice of a wider channels-first buffer (a view, SPEC §11) */
    "fwd 1d N=2 Ci=4 Co=4 I=7 K=3 P0=1 P1=1 xs=42,7,1",
    /* a causal cache: a prefix of 2 cached frames and the next state; then a suffix (a halo) */
    "fwd 3d N=1 Ci=3 Co=4 I=3,4,5 K=3 P0=0,1,1 P1=0,1,1 f16 x=cl bias axis=0 pre=2 st=2",
    "fwd 1d N=2 Ci=3 Co=2 I=5 K=3 D=2 bf16 axis=0 pre=2 st=4 suf=3",
};
#define N_PROBLEMS (sizeof problems / sizeof problems[0])

/* ---- operands ----------------------------------------------------------------------------- */

typedef struct pro_operands {
    float *r, *a, *b;    /* host */
    float *dr, *da, *db; /* device */
} pro_operands;

static float *upload_f32(const float *h, int64_t n) {
    return h ? test_device_upload(CONVND_F32, h, n) : NULL;
}

/* Seeded operands for p's prologue: r in [0.5, 2) (a norm: never 0), a and b in +-[0.125, 1). */
static pro_operands make_operands(const convnd_problem *p, test_rng *rng) {
    pro_operands o = {0};
    convnd_tensor_desc d;
    const convnd_tensor which[3] = {CONVND_PRO_R, CONVND_PRO_A, CONVND_PRO_B};
    float **host[3] = {&o.r, &o.a, &o.b}, **dev[3] = {&o.dr, &o.da, &o.db};
    for (int i = 0; i < 3; ++i) {
        if (convnd_tensor_describe(p, which[i], &d) != CONVND_OK) continue; /* not read */
        float *h = malloc(sizeof(float) * (size_t)(d.numel > 0 ? d.numel : 1));
        cr_assert(h);
        for (int64_t e = 0; e < d.numel; ++e)
            h[e] = i == 0 ? (float)(0.5 + 1.5 * test_rng_unit(rng))
                          : (float)((test_rng_next(rng) & 1 ? 1 : -1) *
                                    (0.125 + 0.875 * test_rng_unit(rng)));
        *host[i] = h;
        *dev[i] = upload_f32(h, d.numel);
        cr_assert(*dev[i]);
    }
    return o;
}

static void free_operands(pro_operands *o) {
    free(o->r);
    free(o->a);
    free(o->b);
    convnd_free(o->dr);
    convnd_free(o->da);
    convnd_free(o->db);
}

/* ---- one run ------------------------------------------------------------------------------ */

/* p (with its chain) on spec: y against the reference conv over x̂, the state (when p has one)
 * bit for bit against the reference's, which holds x̂'s values for positions of x. Returns 1 when
 * the run passed. */
static int run_prologue_case(const char *spec, const char *id, const convnd_problem *p,
                             uint64_t seed) {
    char text[512], err[512];
    convnd_problem_format(text, sizeof text, p);
    convnd_problem plain = *p; /* the same conv with no prologue, over x̂ */
    memset(&plain.prologue, 0, sizeof plain.prologue);
    convnd_tensor_desc xd;
    cr_assert_eq(convnd_tensor_describe(p, CONVND_X, &xd), CONVND_OK, "%s", convnd_last_error());
    const size_t es = convnd_ref_dtype_size(p->dtype);
    const int64_t x_span = xd.bytes / (int64_t)es;
    test_rng rng = test_rng_seed(seed);
    void *hx = malloc(es * (size_t)(x_span + 1)), *hxhat = malloc(es * (size_t)(x_span + 1));
    float *xhat = malloc(sizeof(float) * (size_t)(x_span + 1));
    cr_assert(hx && hxhat && xhat);
    test_fill_random(p->dtype, hx, x_span, &rng);
    pro_operands o = make_operands(p, &rng);
    cr_assert_eq(convnd_ref_prologue(p, hx, o.r, o.a, o.b, xhat), CONVND_OK);
    for (int64_t i = 0; i < x_span; ++i) /* exact when the chain ends rounded, or f32 */
        convnd_ref_store(p->dtype, hxhat, i, xhat[i]);

    const int io = p->prefix_size > 0 || p->suffix_size > 0 || p->state_size > 0;
    int64_t p_span = 0, f_span = 0, s_numel = 0;
    void *hp = NULL, *hf = NULL, *sref = NULL, *sgot = NULL, *X = NULL;
    convnd_problem q = plain;
    if (io) {
        convnd_tensor_desc pd, fd, sd;
        cr_assert_eq(convnd_tensor_describe(p, CONVND_X_PREFIX, &pd), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(p, CONVND_X_SUFFIX, &fd), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(p, CONVND_STATE, &sd), CONVND_OK);
        p_span = pd.bytes / (int64_t)es;
        f_span = fd.bytes / (int64_t)es;
        s_numel = sd.numel;
        hp = malloc(es * (size_t)(p_span + 1));
        hf = malloc(es * (size_t)(f_span + 1));
        sref = malloc(es * (size_t)(s_numel + 1));
        sgot = malloc(es * (size_t)(s_numel + 1));
        cr_assert(hp && hf && sref && sgot);
        test_fill_random(p->dtype, hp, p_span, &rng);
        test_fill_random(p->dtype, hf, f_span, &rng);
        cr_assert_eq(convnd_ref_io_input(&plain, hp, hxhat, hf, &q, &X), CONVND_OK);
        cr_assert_eq(convnd_ref_state(&plain, &q, X, sref), CONVND_OK);
    }
    test_conv_case c;
    cr_assert(test_case_init(&c, &q, 0, test_rng_next(&rng), err, sizeof err), "%s: %s", id, err);
    cr_assert(test_case_set_inputs(&c, io ? X : hxhat, NULL, err, sizeof err), "%s: %s", id, err);
    /* an unrounded end multiplies f32 values the case's x holds rounded (SPEC §15) */
    if (!chain_ends_rounded(&p->prologue)) c.u_in = test_unit_roundoff(p->dtype);
    void *dx = test_device_upload(p->dtype, hx, x_span);
    void *dp = io ? test_device_upload(p->dtype, hp, p_span) : NULL;
    void *df = io ? test_device_upload(p->dtype, hf, f_span) : NULL;
    void *ds = io ? test_device_upload(p->dtype, NULL, s_numel) : NULL;
    cr_assert(dx && (!io || (dp && df && ds)));
    const convnd_status st = test_case_run_prologue(&c, p, spec, p->prefix_size ? dp : NULL, dx,
                                                    p->suffix_size ? df : NULL,
                                                    p->state_size ? ds : NULL, o.dr, o.da, o.db);
    char msg[1024] = "";
    int ok = st == CONVND_OK && test_case_check(&c, msg, sizeof msg);
    cr_expect(ok, "%s case %s: %s%s\n  problem: %s", spec, id,
              st == CONVND_OK ? "" : convnd_last_error(), msg, text);
    if (io && s_numel > 0) {
        cr_assert_eq(convnd_memcpy_d2h(sgot, ds, es * (size_t)s_numel), CONVND_OK);
        const int same = memcmp(sgot, sref, es * (size_t)s_numel) == 0;
        cr_expect(same,
                  "%s case %s: the state is not X's last %lld positions through the "
                  "prologue, bit for bit\n  problem: %s",
                  spec, id, (long long)p->state_size, text);
        ok = ok && same;
    }
    convnd_free(dx);
    convnd_free(dp);
    convnd_free(df);
    convnd_free(ds);
    test_case_free(&c);
    free_operands(&o);
    free(X);
    free(hx);
    free(hxhat);
    free(xhat);
    free(hp);
    free(hf);
    free(sref);
    free(sgot);
    return ok;
}

static convnd_problem with_chain(const char *problem, const convnd_prologue *pro) {
    convnd_problem p = test_parse_valid(problem);
    p.prologue = *pro;
    cr_assert_eq(convnd_validate(&p), CONVND_OK, "%s: %s", problem, convnd_last_error());
    return p;
}

TestSuite(prologue, .timeout = 600);

/* Every chain on every problem, on each schedule configuration that applies a prologue. */
Test(prologue, chains_on_every_capable_schedule) {
    int capable = 0;
    for (int32_t s = 0; s < convnd_schedule_count(); ++s)
        for (int32_t k = 0; k < convnd_schedule_config_count(s); ++k) {
            char spec[128];
            snprintf(spec, sizeof spec, "%s:%s", convnd_schedule_name(s),
                     convnd_schedule_config_name(s, k));
            const convnd_problem probe = with_chain(problems[0], &chains[0].pro);
            char reason[512];
            if (!convnd_schedule_supports(spec, &probe, reason, sizeof reason) &&
                strstr(reason, "applies no input prologue"))
                continue;
            ++capable;
            for (size_t i = 0; i < N_PROBLEMS; ++i)
                for (size_t j = 0; j < N_CHAINS; ++j) {
                    const convnd_problem p = with_chain(problems[i], &chains[j].pro);
                    if (!convnd_schedule_supports(spec, &p, reason, sizeof reason)) continue;
                    char id[160];
                    snprintf(id, sizeof id, "%s on problem %zu", chains[j].id, i);
                    run_prologue_case(spec, id, &p, test_seed_of(id, 41));
                }
        }
    cr_expect(capable >= 2, "only %d configurations apply a prologue ('direct' has two)", capable);
}

/* The values the prologue makes, bit for bit: a state over the whole of x (no prefix) holds
 * P(x) rounded to the dtype, which is x̂ itself for a chain that ends rounded. Both dtypes of
 * 16 bits and f32, each chain. */
Test(prologue, values_bit_for_bit_through_a_whole_state) {
    static const char *const whole[] = {
        "fwd 1d N=2 Ci=5 Co=3 I=7 K=3 P0=1 P1=1 f16 x=cl axis=0 st=7",
        "fwd 2d N=2 Ci=4 Co=2 I=3,5 K=3 P0=1 P1=1 bf16 axis=1 st=5",
        "fwd 1d N=1 Ci=3 Co=2 I=6 K=2 axis=0 st=6",
    };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; ++i)
        for (size_t j = 0; j < N_CHAINS; ++j) {
            const convnd_problem p = with_chain(whole[i], &chains[j].pro);
            char id[160];
            snprintf(id, sizeof id, "%s on whole-state problem %zu", chains[j].id, i);
            cr_expect(run_prologue_case("direct", id, &p, test_seed_of(id, 43)), "%s", id);
        }
}

/* The planner routes a prologue problem to a schedule that applies it; every other schedule
 * says why it declines. */
Test(prologue, other_schedules_decline_with_the_reason) {
    const convnd_problem p = with_chain(problems[0], &chains[0].pro);
    for (int32_t s = 0; s < convnd_schedule_count(); ++s) {
        char reason[512] = "";
        const char *name = convnd_schedule_name(s);
        const int32_t ok = convnd_schedule_supports(name, &p, reason, sizeof reason);
        if (strcmp(name, "direct") == 0) {
            cr_expect(ok, "direct declines a prologue: %s", reason);
            continue;
        }
        cr_expect(!ok, "%s accepts a prologue it does not apply", name);
    }
    char plan[128];
    convnd_problem big =
        with_chain("fwd 2d N=2 Ci=64 Co=64 I=16,16 K=3 P0=1 P1=1 f16 x=cl w=cl", &chains[0].pro);
    cr_assert_eq(convnd_plan_name(&big, NULL, plan, sizeof plan), CONVND_OK, "%s",
                 convnd_last_error());
    cr_expect(strncmp(plan, "direct:", 7) == 0, "a GEMM-shaped prologue problem planned to %s",
              plan);
    char reason[512] = "";
    cr_expect(!convnd_schedule_supports("igemm_tc", &big, reason, sizeof reason));
    cr_expect(strstr(reason, "applies no input prologue (SPEC §15: prologue.num_steps=2") != NULL,
              "igemm_tc's reason: %s", reason);
}

/* The operands' shapes (f32, packed): r [N, I...], a and b [C_in] or [N, C_in]. */
Test(prologue, operand_shapes) {
    convnd_problem p = with_chain(problems[2], &chains[2].pro); /* wan: r, a, b; [C_in] */
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_PRO_R, &d), CONVND_OK);
    cr_expect(d.rank == 2 && d.shape[0] == 2 && d.shape[1] == 9 && d.numel == 18 &&
              d.strides[0] == 9 && d.strides[1] == 1 && d.bytes == 72);
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_PRO_A, &d), CONVND_OK);
    cr_expect(d.rank == 1 && d.shape[0] == 3 && d.bytes == 12);
    p.prologue.ab_per_sample = 1;
    cr_assert_eq(convnd_tensor_describe(&p, CONVND_PRO_B, &d), CONVND_OK);
    cr_expect(d.rank == 2 && d.shape[0] == 2 && d.shape[1] == 3 && d.strides[0] == 3);
    p = with_chain(problems[2], &chains[4].pro); /* scalar, gelu: no operand */
    cr_expect_eq(convnd_tensor_describe(&p, CONVND_PRO_R, &d), CONVND_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(convnd_last_error(), "tensor=pro_r: no step of the problem's prologue reads "
                                          "it") != NULL,
              "%s", convnd_last_error());
}

static void expect_invalid(const convnd_problem *p, convnd_status want, const char *needle) {
    cr_expect_eq(convnd_validate(p), want, "status for '%s': %s", needle, convnd_last_error());
    cr_expect(strstr(convnd_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              convnd_last_error(), needle);
}

Test(prologue, bad_prologues_are_refused) {
    convnd_problem p = with_chain(problems[0], &chains[0].pro);
    convnd_problem q = p;
    q.prologue.num_steps = 7;
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.num_steps=7 must be 0..6");
    q = p;
    q.prologue.steps[1].op = (convnd_prologue_op)9;
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.steps[1].op=9 is not a");
    q = p;
    q.prologue.steps[0].round = 2;
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.steps[0].round=2 must be 0 or 1");
    q = p;
    q.prologue.steps[1].act = (convnd_activation)5;
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.steps[1].act=5 is not a");
    q = p;
    q.prologue.steps[0] = (convnd_prologue_step)SCALAR(NAN, 0);
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.steps[0].scalar=nan must be finite");
    q = p;
    q.prologue.ab_per_sample = 3;
    expect_invalid(&q, CONVND_ERR_INVALID_ARGUMENT, "prologue.ab_per_sample=3 must be 0 or 1");
    q = test_parse_valid("wg 2d N=1 Ci=4 Co=4 I=5,5 K=3");
    q.prologue = chains[0].pro;
    expect_invalid(&q, CONVND_ERR_UNSUPPORTED, "needs mode=forward or transposed (mode=wgrad");
}

/* A missing or misaligned operand is refused before any launch: y keeps its poison. */
Test(prologue, bad_operands_write_nothing) {
    const convnd_problem p = with_chain(problems[2], &chains[2].pro); /* reads r, a, b */
    char err[512];
    test_conv_case c;
    convnd_problem plain = p;
    memset(&plain.prologue, 0, sizeof plain.prologue);
    cr_assert(test_case_init(&c, &plain, 0, 5, err, sizeof err), "%s", err);
    test_rng rng = test_rng_seed(6);
    pro_operands o = make_operands(&p, &rng);
    convnd_status st =
        test_case_run_prologue(&c, &p, "direct", NULL, c.dx, NULL, NULL, o.dr, NULL, o.db);
    cr_expect_eq(st, CONVND_ERR_NULL_POINTER, "%s", convnd_last_error());
    cr_expect(strstr(convnd_last_error(), "pro_a is NULL but the problem reads 12 bytes of it (a "
                                          "prologue step reads it") != NULL,
              "%s", convnd_last_error());
    for (int64_t i = 0; i < c.yd.numel; ++i)
        cr_assert(test_is_poison(p.dtype, c.hy, i), "y[%lld] written", (long long)i);
    st = test_case_run_prologue(&c, &p, "direct", NULL, c.dx, NULL, NULL,
                                (const float *)((const char *)o.dr + 2), o.da, o.db);
    cr_expect_eq(st, CONVND_ERR_INVALID_ARGUMENT, "%s", convnd_last_error());
    cr_expect(strstr(convnd_last_error(), "is not aligned to its 4-byte f32 elements") != NULL,
              "%s", convnd_last_error());
    for (int64_t i = 0; i < c.yd.numel; ++i)
        cr_assert(test_is_poison(p.dtype, c.hy, i), "y[%lld] written", (long long)i);
    free_operands(&o);
    test_case_free(&c);
}
