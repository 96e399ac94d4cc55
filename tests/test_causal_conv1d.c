/* Stateful causal conv1d (SPEC §13): the streaming kernel against the f64 reference (widths 2 to
 * 256, both layouts, every dtype, bias, SiLU, states in and out), the chunking identity bit for
 * bit, packed batches by offsets and by seq_idx, the decode step token by token (linear and
 * circular state, state indices) equal to the whole run, and every rejection with nothing
 * written. Each kernel case runs in every thread order of the active device on poisoned
 * outputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal_ref.h"
#include "convnd.h"
#include "convnd_causal.h"
#include "convnd_ref.h"
#include "golden/golden_fixture.h"
#include "test_orders.h"
#include "test_random.h"
#include "test_tolerance.h"

TestSuite(causal, .timeout = 600);

/* Problems in one line: the tables and loops below differ in these fields only. */
static convnd_causal_problem fwd_problem(int64_t B, int64_t D, int64_t L, int32_t W,
                                         convnd_dtype dt, convnd_causal_layout lay, int32_t bias,
                                         int32_t silu, int64_t num_seqs) {
    const convnd_causal_problem p = {B, D, L, W, dt, lay, bias, silu, num_seqs};
    return p;
}

static convnd_causal_update_problem update_problem(int64_t B, int64_t D, int64_t L, int32_t W,
                                                   convnd_dtype dt, convnd_causal_layout lay,
                                                   int32_t bias, int32_t silu, int64_t state_len,
                                                   int64_t state_rows) {
    const convnd_causal_update_problem p = {B, D, L, W, dt, lay, bias, silu, state_len, state_rows};
    return p;
}

/* ---- device helpers ------------------------------------------------------------------------ */

static void *dev_copy(const void *host, size_t bytes) {
    if (!host) return NULL;
    void *d = NULL;
    cr_assert_eq(convnd_malloc(&d, bytes ? bytes : 1), CONVND_OK);
    if (bytes) cr_assert_eq(convnd_memcpy_h2d(d, host, bytes), CONVND_OK);
    return d;
}

static void dev_fetch(void *host, void *dev, size_t bytes) {
    if (dev && bytes) cr_assert_eq(convnd_memcpy_d2h(host, dev, bytes), CONVND_OK);
    convnd_free(dev);
}

static size_t esize(convnd_dtype dt) {
    return convnd_ref_dtype_size(dt);
}

static void *random_tensor(convnd_dtype dt, int64_t n, test_rng *r) {
    void *h = malloc(esize(dt) * (size_t)(n > 0 ? n : 1));
    test_fill_random(dt, h, n, r);
    return h;
}

/* convnd_causal_conv1d with host tensors: copies in, poisons y and final_states (all one bits,
 * NaN in every dtype), runs, copies y and final_states back. final_states may be
 * initial_states (in place: one device buffer). */
static convnd_status run_fwd(const convnd_causal_problem *p, const convnd_causal_tensors *h) {
    const size_t eb = esize(p->dtype);
    const size_t xb = eb * (size_t)(p->batch * p->dim * p->seqlen);
    const int64_t S = p->num_seqs > 0 ? p->num_seqs : p->batch;
    const size_t sb = eb * (size_t)(S * p->dim * (p->width - 1));
    convnd_causal_tensors d = {
        .x = dev_copy(h->x, xb),
        .weight = dev_copy(h->weight, eb * (size_t)(p->dim * p->width)),
        .bias = dev_copy(h->bias, eb * (size_t)p->dim),
        .seq_idx = dev_copy(h->seq_idx, 4 * (size_t)(p->batch * p->seqlen)),
        .query_start_loc = dev_copy(h->query_start_loc, 4 * (size_t)(p->num_seqs + 1)),
        .initial_states = dev_copy(h->initial_states, sb),
        .y = dev_copy(h->y, xb),
    };
    const int in_place = h->final_states && h->final_states == h->initial_states;
    d.final_states = in_place ? (void *)d.initial_states : dev_copy(h->final_states, sb);
    if (d.y) convnd_memset(d.y, 0xFF, xb);
    if (d.final_states && !in_place) convnd_memset(d.final_states, 0xFF, sb);
    const convnd_status st = convnd_causal_conv1d(p, &d, NULL);
    dev_fetch(h->y, d.y, xb);
    dev_fetch(h->final_states, d.final_states, sb);
    if (!in_place) convnd_free((void *)d.initial_states);
    convnd_free((void *)d.x);
    convnd_free((void *)d.weight);
    convnd_free((void *)d.bias);
    convnd_free((void *)d.seq_idx);
    convnd_free((void *)d.query_start_loc);
    return st;
}

/* The decode step with host tensors; conv_state is updated in place. */
static convnd_status run_update(const convnd_causal_update_problem *p,
                                const convnd_causal_update_tensors *h) {
    const size_t eb = esize(p->dtype);
    const size_t xb = eb * (size_t)(p->batch * p->dim * p->seqlen);
    const size_t sb = eb * (size_t)(p->state_rows * p->dim * p->state_len);
    convnd_causal_update_tensors d = {
        .x = dev_copy(h->x, xb),
        .conv_state = dev_copy(h->conv_state, sb),
        .weight = dev_copy(h->weight, eb * (size_t)(p->dim * p->width)),
        .bias = dev_copy(h->bias, eb * (size_t)p->dim),
        .cache_seqlens = dev_copy(h->cache_seqlens, 4 * (size_t)p->batch),
        .conv_state_indices = dev_copy(h->conv_state_indices, 4 * (size_t)p->batch),
        .y = dev_copy(h->y, xb),
    };
    const convnd_status st = convnd_causal_conv1d_update(p, &d, NULL);
    dev_fetch(h->y, d.y, xb);
    dev_fetch(h->conv_state, d.conv_state, sb);
    convnd_free((void *)d.x);
    convnd_free((void *)d.weight);
    convnd_free((void *)d.bias);
    convnd_free((void *)d.cache_seqlens);
    convnd_free((void *)d.conv_state_indices);
    return st;
}

/* The conv_nd tolerance of the same reduction: a depthwise 1-D conv with a kernel of W taps. */
static test_tolerance causal_tolerance(convnd_dtype dt, int32_t width, int32_t silu) {
    convnd_problem q;
    memset(&q, 0, sizeof q);
    q.dims = 1;
    q.N = 1;
    q.C_in = q.C_out = q.groups = 1;
    q.input[0] = width;
    q.kernel[0] = width;
    q.stride[0] = q.dilation[0] = 1;
    q.dtype = dt;
    q.alpha = 1.0f;
    q.activation = silu ? CONVND_ACT_SILU : CONVND_ACT_NONE;
    return test_tolerance_for(&q);
}

static void expect_close(convnd_dtype dt, const void *got, const double *ref, const double *mag,
                         int64_t n, const test_tolerance *tol, const char *what) {
    for (int64_t i = 0; i < n; ++i) {
        const double g = convnd_ref_load(dt, got, i);
        const double bound = test_tolerance_bound(tol, ref[i], mag[i]);
        cr_assert(g - ref[i] <= bound && ref[i] - g <= bound,
                  "%s: element %lld is %.9g, reference %.9g (bound %.3g)", what, (long long)i, g,
                  ref[i], bound);
    }
}

/* States are copies: exactly the reference's values. */
static void expect_exact(convnd_dtype dt, const void *got, const double *ref, int64_t n,
                         const char *what) {
    for (int64_t i = 0; i < n; ++i)
        cr_assert(convnd_ref_load(dt, got, i) == ref[i], "%s: element %lld is %.9g, expected %.9g",
                  what, (long long)i, convnd_ref_load(dt, got, i), ref[i]);
}

/* ---- the forward kernel against the reference ---------------------------------------------- */

typedef struct fwd_case {
    int64_t B, D, L;
    int32_t W;
    convnd_dtype dt;
    convnd_causal_layout layout;
    int bias, silu, init, fin;
} fwd_case;

static const fwd_case fwd_cases[] = {
    {2, 5, 9, 2, CONVND_F32, CONVND_CAUSAL_BDL, 0, 0, 0, 0},
    {2, 33, 70, 4, CONVND_F32, CONVND_CAUSAL_BDL, 1, 1, 1, 1},
    {2, 33, 70, 4, CONVND_F32, CONVND_CAUSAL_BLD, 1, 1, 1, 1},
    {1, 64, 130, 3, CONVND_BF16, CONVND_CAUSAL_BLD, 1, 1, 1, 1},
    {3, 17, 65, 4, CONVND_F16, CONVND_CAUSAL_BDL, 1, 0, 0, 1},
    {1, 8, 3, 5, CONVND_F32, CONVND_CAUSAL_BDL, 0, 0, 1, 1},  /* L < W-1: state carried over */
    {1, 8, 2, 5, CONVND_F32, CONVND_CAUSAL_BDL, 0, 0, 0, 1},  /* L < W-1 from zeros */
    {1, 1, 3, 4, CONVND_F16, CONVND_CAUSAL_BDL, 1, 1, 1, 1},  /* batch 1 x channel 1 */
    {2, 7, 13, 1, CONVND_F32, CONVND_CAUSAL_BDL, 1, 1, 1, 1}, /* width 1: no state */
    {3, 9, 40, 1, CONVND_F16, CONVND_CAUSAL_BLD, 1, 0, 0, 1},
    {1, 5, 0, 1, CONVND_BF16, CONVND_CAUSAL_BDL, 0, 1, 1, 1},
    {1, 8, 0, 4, CONVND_F32, CONVND_CAUSAL_BLD, 0, 0, 1, 1}, /* L = 0 */
    {2, 40, 100, 16, CONVND_BF16, CONVND_CAUSAL_BDL, 1, 1, 1, 1},
    {1, 35, 200, 33, CONVND_F32, CONVND_CAUSAL_BLD, 1, 0, 1, 1},
    {1, 16, 150, 64, CONVND_F16, CONVND_CAUSAL_BLD, 0, 1, 1, 1},
    {1, 12, 140, 65, CONVND_F32, CONVND_CAUSAL_BDL, 1, 1, 1, 0},
    {1, 4, 300, 256, CONVND_F32, CONVND_CAUSAL_BDL, 1, 0, 1, 1},
};

static void check_fwd_case(const fwd_case *c, uint64_t seed) {
    test_rng r = test_rng_seed(seed);
    const convnd_causal_problem p =
        fwd_problem(c->B, c->D, c->L, c->W, c->dt, c->layout, c->bias, c->silu, 0);
    const int64_t nx = c->B * c->D * c->L, ns = c->B * c->D * (c->W - 1);
    convnd_causal_tensors h = {
        .x = random_tensor(c->dt, nx, &r),
        .weight = random_tensor(c->dt, c->D * c->W, &r),
        .bias = c->bias ? random_tensor(c->dt, c->D, &r) : NULL,
        .initial_states = c->init ? random_tensor(c->dt, ns, &r) : NULL,
        .final_states = c->fin ? random_tensor(c->dt, ns, &r) : NULL,
        .y = random_tensor(c->dt, nx, &r),
    };
    double *ref = calloc((size_t)nx + 1, sizeof(double)), *mag = calloc((size_t)nx + 1, 8),
           *fref = calloc((size_t)ns + 1, 8);
    convnd_ref_causal_conv1d(&p, &h, ref, mag, fref);
    const test_tolerance tol = causal_tolerance(c->dt, c->W, c->silu);
    for (int o = 0; o < test_order_count(); ++o) {
        test_order_apply(o);
        cr_assert_eq(run_fwd(&p, &h), CONVND_OK, "B=%lld D=%lld L=%lld W=%d: %s", (long long)c->B,
                     (long long)c->D, (long long)c->L, c->W, convnd_last_error());
        char what[160];
        snprintf(what, sizeof what, "y of B=%lld D=%lld L=%lld W=%d dtype=%d layout=%d (%s)",
                 (long long)c->B, (long long)c->D, (long long)c->L, c->W, c->dt, c->layout,
                 test_order_name(o));
        expect_close(c->dt, h.y, ref, mag, nx, &tol, what);
        if (c->fin) expect_exact(c->dt, h.final_states, fref, ns, "final_states");
    }
    free((void *)h.x), free((void *)h.weight), free((void *)h.bias);
    free((void *)h.initial_states), free(h.final_states), free(h.y);
    free(ref), free(mag), free(fref);
}

Test(causal, matches_reference) {
    for (size_t i = 0; i < sizeof fwd_cases / sizeof fwd_cases[0]; ++i)
        check_fwd_case(&fwd_cases[i], 100 + i);
}

/* Widths 1..66 one by one, channels-last f32 with everything on. */
Test(causal, every_width_1_to_66) {
    for (int32_t w = 1; w <= 66; ++w) {
        const fwd_case c = {1, 9, 80, w, CONVND_F32, w % 2 ? CONVND_CAUSAL_BLD : CONVND_CAUSAL_BDL,
                            1, 1, 1,  1};
        check_fwd_case(&c, 1000 + (uint64_t)w);
    }
}

/* ---- chunked == whole, bit for bit --------------------------------------------------------- */

/* Tokens [t0, t0+n) of a packed (B, D, L) or (B, L, D) tensor, as a packed tensor. */
static void slice_tokens(convnd_dtype dt, convnd_causal_layout layout, int64_t B, int64_t D,
                         int64_t L, const void *src, int64_t t0, int64_t n, void *dst, int back) {
    const size_t eb = esize(dt);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t d = 0; d < D; ++d)
            for (int64_t t = 0; t < n; ++t) {
                const int64_t full = layout == CONVND_CAUSAL_BDL ? (b * D + d) * L + t0 + t
                                                                 : (b * L + t0 + t) * D + d;
                const int64_t part =
                    layout == CONVND_CAUSAL_BDL ? (b * D + d) * n + t : (b * n + t) * D + d;
                if (back)
                    memcpy((char *)dst + eb * (size_t)full, (const char *)src + eb * (size_t)part,
                           eb);
                else
                    memcpy((char *)dst + eb * (size_t)part, (const char *)src + eb * (size_t)full,
                           eb);
            }
}

Test(causal, chunked_equals_whole_bit_for_bit) {
    static const int32_t widths[] = {2, 4, 7, 64};
    static const int64_t chunks[] = {1, 5, 64, 2, 63, 0, 80, 1000}; /* the last takes the rest */
    for (int dt = 0; dt < 3; ++dt)
        for (int lay = 0; lay < 2; ++lay)
            for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi) {
                test_rng r = test_rng_seed(77 + (uint64_t)(dt * 10 + lay * 100) + wi);
                const int64_t B = 2, D = 37, L = 230;
                const int32_t W = widths[wi];
                convnd_causal_problem p =
                    fwd_problem(B, D, L, W, (convnd_dtype)dt, (convnd_causal_layout)lay, 1, 1, 0);
                const size_t eb = esize(p.dtype);
                const int64_t ns = B * D * (W - 1);
                convnd_causal_tensors whole = {
                    .x = random_tensor(p.dtype, B * D * L, &r),
                    .weight = random_tensor(p.dtype, D * W, &r),
                    .bias = random_tensor(p.dtype, D, &r),
                    .final_states = malloc(eb * (size_t)ns),
                    .y = malloc(eb * (size_t)(B * D * L)),
                };
                cr_assert_eq(run_fwd(&p, &whole), CONVND_OK, "%s", convnd_last_error());
                void *y_chunks = malloc(eb * (size_t)(B * D * L));
                void *state = NULL; /* the first chunk starts from zeros, as the whole run */
                int64_t t0 = 0;
                for (size_t ci = 0; t0 < L; ++ci) {
                    int64_t n = chunks[ci % (sizeof chunks / sizeof chunks[0])];
                    if (t0 + n > L) n = L - t0;
                    void *xc = malloc(eb * (size_t)(B * D * n) + 1),
                         *yc = malloc(eb * (size_t)(B * D * n) + 1);
                    slice_tokens(p.dtype, p.layout, B, D, L, whole.x, t0, n, xc, 0);
                    convnd_causal_problem pc = p;
                    pc.seqlen = n;
                    void *next = malloc(eb * (size_t)ns);
                    convnd_causal_tensors part = {.x = xc,
                                                  .weight = whole.weight,
                                                  .bias = whole.bias,
                                                  .initial_states = state,
                                                  .final_states = next,
                                                  .y = yc};
                    cr_assert_eq(run_fwd(&pc, &part), CONVND_OK, "%s", convnd_last_error());
                    slice_tokens(p.dtype, p.layout, B, D, L, yc, t0, n, y_chunks, 1);
                    free(state), free(xc), free(yc);
                    state = next;
                    t0 += n;
                }
                cr_assert(memcmp(y_chunks, whole.y, eb * (size_t)(B * D * L)) == 0,
                          "dtype=%d layout=%d W=%d: chunked y differs from the whole run", dt, lay,
                          W);
                cr_assert(memcmp(state, whole.final_states, eb * (size_t)ns) == 0,
                          "dtype=%d layout=%d W=%d: chunked final state differs", dt, lay, W);
                free(state), free(y_chunks);
                free((void *)whole.x), free((void *)whole.weight), free((void *)whole.bias);
                free(whole.final_states), free(whole.y);
            }
}

/* ---- packed variable-length batches -------------------------------------------------------- */

/* Offsets with an empty sequence, one shorter than W-1 and ones across tile boundaries; states
 * in and out (in place), against the reference and against running each sequence alone. */
Test(causal, packed_offsets_with_states) {
    static const int32_t lens[] = {5, 0, 1, 70, 2, 131};
    const int64_t S = sizeof lens / sizeof lens[0];
    for (int lay = 0; lay < 2; ++lay) {
        test_rng r = test_rng_seed(4242 + (uint64_t)lay);
        const int64_t D = 33;
        const int32_t W = 4;
        int32_t qsl[sizeof lens / sizeof lens[0] + 1] = {0};
        for (int64_t s = 0; s < S; ++s)
            qsl[s + 1] = qsl[s] + lens[s];
        const int64_t L = qsl[S], ns = S * D * (W - 1);
        const convnd_causal_problem p =
            fwd_problem(1, D, L, W, CONVND_F32, (convnd_causal_layout)lay, 1, 1, S);
        void *init = random_tensor(p.dtype, ns, &r);
        void *states = malloc(4 * (size_t)ns);
        memcpy(states, init, 4 * (size_t)ns);
        convnd_causal_tensors h = {.x = random_tensor(p.dtype, L * D, &r),
                                   .weight = random_tensor(p.dtype, D * W, &r),
                                   .bias = random_tensor(p.dtype, D, &r),
                                   .query_start_loc = qsl,
                                   .initial_states = states,
                                   .final_states = states, /* in place */
                                   .y = malloc(4 * (size_t)(L * D))};
        double *ref = calloc((size_t)L * D, 8), *mag = calloc((size_t)L * D, 8),
               *fref = calloc((size_t)ns, 8);
        convnd_causal_tensors hr = h;
        hr.initial_states = init;
        convnd_ref_causal_conv1d(&p, &hr, ref, mag, fref);
        const test_tolerance tol = causal_tolerance(p.dtype, W, 1);
        for (int o = 0; o < test_order_count(); ++o) {
            test_order_apply(o);
            memcpy(states, init, 4 * (size_t)ns);
            cr_assert_eq(run_fwd(&p, &h), CONVND_OK, "%s", convnd_last_error());
            expect_close(p.dtype, h.y, ref, mag, L * D, &tol, "packed y");
            expect_exact(p.dtype, states, fref, ns, "packed final_states (in place)");
        }
        /* each sequence alone gives the same bits */
        for (int64_t s = 0; s < S; ++s) {
            const int64_t n = lens[s];
            const convnd_causal_problem p1 = fwd_problem(1, D, n, W, p.dtype, p.layout, 1, 1, 0);
            float *x1 = malloc(4 * (size_t)(n * D) + 4), *y1 = malloc(4 * (size_t)(n * D) + 4);
            slice_tokens(p.dtype, p.layout, 1, D, L, h.x, qsl[s], n, x1, 0);
            convnd_causal_tensors h1 = {.x = x1,
                                        .weight = h.weight,
                                        .bias = h.bias,
                                        .initial_states = (const float *)init + s * D * (W - 1),
                                        .y = y1};
            cr_assert_eq(run_fwd(&p1, &h1), CONVND_OK, "%s", convnd_last_error());
            float *yslice = malloc(4 * (size_t)(n * D) + 4);
            slice_tokens(p.dtype, p.layout, 1, D, L, h.y, qsl[s], n, yslice, 0);
            cr_assert(memcmp(y1, yslice, 4 * (size_t)(n * D)) == 0,
                      "sequence %lld alone differs from the packed run", (long long)s);
            free(x1), free(y1), free(yslice);
        }
        free(init), free(states), free((void *)h.x), free((void *)h.weight);
        free((void *)h.bias), free(h.y), free(ref), free(mag), free(fref);
    }
}

Test(causal, packed_seq_idx) {
    for (int lay = 0; lay < 2; ++lay) {
        test_rng r = test_rng_seed(99 + (uint64_t)lay);
        const int64_t B = 2, D = 20, L = 150;
        const int32_t W = 5;
        int32_t *sid = malloc(4 * (size_t)(B * L));
        for (int64_t b = 0; b < B; ++b) /* runs of 1..40 tokens */
            for (int64_t t = 0, id = 0; t < L;) {
                const int64_t n = test_rng_int(&r, 1, 40);
                for (int64_t k = 0; k < n && t < L; ++k)
                    sid[b * L + t++] = (int32_t)id;
                ++id;
            }
        const convnd_causal_problem p =
            fwd_problem(B, D, L, W, CONVND_BF16, (convnd_causal_layout)lay, 1, 0, 0);
        convnd_causal_tensors h = {.x = random_tensor(p.dtype, B * L * D, &r),
                                   .weight = random_tensor(p.dtype, D * W, &r),
                                   .bias = random_tensor(p.dtype, D, &r),
                                   .seq_idx = sid,
                                   .y = malloc(2 * (size_t)(B * L * D))};
        double *ref = calloc((size_t)(B * L * D), 8), *mag = calloc((size_t)(B * L * D), 8);
        convnd_ref_causal_conv1d(&p, &h, ref, mag, NULL);
        const test_tolerance tol = causal_tolerance(p.dtype, W, 0);
        for (int o = 0; o < test_order_count(); ++o) {
            test_order_apply(o);
            cr_assert_eq(run_fwd(&p, &h), CONVND_OK, "%s", convnd_last_error());
            expect_close(p.dtype, h.y, ref, mag, B * L * D, &tol, "seq_idx y");
        }
        free(sid), free((void *)h.x), free((void *)h.weight), free((void *)h.bias), free(h.y);
        free(ref), free(mag);
    }
}

/* ---- the decode step ----------------------------------------------------------------------- */

/* Feeds a (B, D, L) sequence `step` tokens per call through the update (linear state of
 * state_len, or a circular one with cache_seqlens and permuted state rows plus one padding row
 * that must stay untouched) and checks y and the last W-1 state entries bit for bit against the
 * whole forward run from the same initial state. */
static void check_token_by_token(convnd_dtype dt, convnd_causal_layout lay, int32_t W,
                                 int64_t state_len, int ring, int64_t step, uint64_t seed) {
    test_rng r = test_rng_seed(seed);
    const int64_t B = 3, D = 21, L = 23, rows = B + 2;
    const size_t eb = esize(dt);
    const convnd_causal_problem p = fwd_problem(B, D, L, W, dt, lay, 1, 1, 0);
    const int64_t ns = B * D * (W - 1);
    convnd_causal_tensors whole = {.x = random_tensor(dt, B * D * L, &r),
                                   .weight = random_tensor(dt, D * W, &r),
                                   .bias = random_tensor(dt, D, &r),
                                   .initial_states = random_tensor(dt, ns, &r),
                                   .final_states = malloc(eb * (size_t)ns),
                                   .y = malloc(eb * (size_t)(B * D * L))};
    cr_assert_eq(run_fwd(&p, &whole), CONVND_OK, "%s", convnd_last_error());

    /* batch b uses state row idx[b] (rows 1 and `rows-1` unused, so they must not change) */
    int32_t idx[3] = {3, 0, 2}, seen[3] = {0, 0, 0};
    for (int64_t b = 0; b < B; ++b)
        seen[b] = ring ? (int32_t)(5 + 7 * b) : 0; /* ring positions start anywhere */
    void *state = random_tensor(dt, rows * D * state_len, &r);
    void *untouched = malloc(eb * (size_t)(rows * D * state_len));
    /* place initial_states as the tokens just before this call */
    for (int64_t b = 0; b < B; ++b)
        for (int64_t d = 0; d < D; ++d)
            for (int64_t j = 0; j < W - 1; ++j) {
                const int64_t tok = state_len - (W - 1) + j; /* linear slot */
                const int64_t slot =
                    ring ? ((seen[b] - (W - 1) + j) % state_len + state_len) % state_len : tok;
                memcpy((char *)state + eb * (size_t)((idx[b] * D + d) * state_len + slot),
                       (const char *)whole.initial_states +
                           eb * (size_t)((b * D + d) * (W - 1) + j),
                       eb);
            }
    memcpy(untouched, state, eb * (size_t)(rows * D * state_len));
    void *y = malloc(eb * (size_t)(B * D * L));
    for (int64_t t0 = 0; t0 < L; t0 += step) {
        const int64_t n = t0 + step > L ? L - t0 : step;
        void *xc = malloc(eb * (size_t)(B * D * n)), *yc = malloc(eb * (size_t)(B * D * n));
        slice_tokens(dt, lay, B, D, L, whole.x, t0, n, xc, 0);
        const convnd_causal_update_problem up =
            update_problem(B, D, n, W, dt, lay, 1, 1, state_len, rows);
        convnd_causal_update_tensors ut = {.x = xc,
                                           .conv_state = state,
                                           .weight = whole.weight,
                                           .bias = whole.bias,
                                           .cache_seqlens = ring ? seen : NULL,
                                           .conv_state_indices = idx,
                                           .y = yc};
        test_order_apply((int)((t0 / step) % test_order_count()));
        cr_assert_eq(run_update(&up, &ut), CONVND_OK, "%s", convnd_last_error());
        slice_tokens(dt, lay, B, D, L, yc, t0, n, y, 1);
        for (int64_t b = 0; b < B; ++b)
            seen[b] += (int32_t)n;
        free(xc), free(yc);
    }
    cr_assert(memcmp(y, whole.y, eb * (size_t)(B * D * L)) == 0,
              "dtype=%d layout=%d W=%d state_len=%lld ring=%d step=%lld: token by token differs "
              "from the whole run",
              dt, lay, W, (long long)state_len, ring, (long long)step);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t d = 0; d < D; ++d)
            for (int64_t j = 0; j < W - 1; ++j) {
                const int64_t slot =
                    ring ? ((seen[b] - (W - 1) + j) % state_len + state_len) % state_len
                         : state_len - (W - 1) + j;
                cr_assert(
                    memcmp((char *)state + eb * (size_t)((idx[b] * D + d) * state_len + slot),
                           (char *)whole.final_states + eb * (size_t)((b * D + d) * (W - 1) + j),
                           eb) == 0,
                    "state of b=%lld d=%lld entry %lld differs from final_states", (long long)b,
                    (long long)d, (long long)j);
            }
    for (int64_t row = 1; row < rows; row += rows - 2) /* rows 1 and rows-1: no batch uses them */
        cr_assert(memcmp((char *)state + eb * (size_t)(row * D * state_len),
                         (char *)untouched + eb * (size_t)(row * D * state_len),
                         eb * (size_t)(D * state_len)) == 0,
                  "unused state row %lld was written", (long long)row);
    free((void *)whole.x), free((void *)whole.weight), free((void *)whole.bias);
    free((void *)whole.initial_states), free(whole.final_states), free(whole.y);
    free(state), free(untouched), free(y);
}

Test(causal, update_token_by_token_equals_whole) {
    for (int dt = 0; dt < 3; ++dt)
        for (int lay = 0; lay < 2; ++lay) {
            const convnd_dtype d = (convnd_dtype)dt;
            const convnd_causal_layout l = (convnd_causal_layout)lay;
            check_token_by_token(d, l, 4, 3, 0, 1, 1 + (uint64_t)dt);   /* linear, W-1 */
            check_token_by_token(d, l, 4, 6, 0, 3, 2 + (uint64_t)dt);   /* linear, longer */
            check_token_by_token(d, l, 4, 3, 1, 1, 3 + (uint64_t)dt);   /* ring of W-1 */
            check_token_by_token(d, l, 7, 11, 1, 2, 4 + (uint64_t)dt);  /* ring, 2 tokens */
            check_token_by_token(d, l, 64, 70, 1, 5, 5 + (uint64_t)dt); /* wide ring */
            check_token_by_token(d, l, 1, 0, 0, 1, 6 + (uint64_t)dt);   /* width 1: no state */
            check_token_by_token(d, l, 1, 2, 1, 2, 7 + (uint64_t)dt);   /* width 1, a ring */
            check_token_by_token(d, l, 1, 0, 1, 1, 8 + (uint64_t)dt);   /* ... of no slots */
        }
}

/* A single update call against the reference of the update, with a padding index (-1) whose
 * y rows must stay as they were. */
Test(causal, update_matches_reference) {
    for (int ring = 0; ring < 2; ++ring) {
        test_rng r = test_rng_seed(31 + (uint64_t)ring);
        const int64_t B = 3, D = 10, Ln = 3, SL = 6, rows = 4;
        const int32_t W = 5;
        const convnd_causal_update_problem p =
            update_problem(B, D, Ln, W, CONVND_F16, CONVND_CAUSAL_BLD, 0, 1, SL, rows);
        int32_t idx[3] = {2, -1, 0}, seen[3] = {4, 9, 13};
        void *y0 = random_tensor(p.dtype, B * D * Ln, &r);
        convnd_causal_update_tensors h = {.x = random_tensor(p.dtype, B * D * Ln, &r),
                                          .conv_state = random_tensor(p.dtype, rows * D * SL, &r),
                                          .weight = random_tensor(p.dtype, D * W, &r),
                                          .cache_seqlens = ring ? seen : NULL,
                                          .conv_state_indices = idx,
                                          .y = malloc(2 * (size_t)(B * D * Ln))};
        double *sref = malloc(8 * (size_t)(rows * D * SL)), *ref = calloc((size_t)(B * D * Ln), 8),
               *mag = calloc((size_t)(B * D * Ln), 8);
        for (int64_t i = 0; i < rows * D * SL; ++i)
            sref[i] = convnd_ref_load(p.dtype, h.conv_state, i);
        convnd_ref_causal_update(&p, &h, sref, ref, mag);
        memcpy(h.y, y0, 2 * (size_t)(B * D * Ln));
        cr_assert_eq(run_update(&p, &h), CONVND_OK, "%s", convnd_last_error());
        const test_tolerance tol = causal_tolerance(p.dtype, W, 1);
        for (int64_t b = 0; b < B; ++b)
            for (int64_t i = b * Ln * D; i < (b + 1) * Ln * D; ++i) {
                const double g = convnd_ref_load(p.dtype, h.y, i);
                if (idx[b] < 0) {
                    cr_assert(g == convnd_ref_load(p.dtype, y0, i), "padding row b=%lld written",
                              (long long)b);
                    continue;
                }
                const double bound = test_tolerance_bound(&tol, ref[i], mag[i]);
                cr_assert(g - ref[i] <= bound && ref[i] - g <= bound,
                          "ring=%d y[%lld] = %.9g, reference %.9g", ring, (long long)i, g, ref[i]);
            }
        expect_exact(p.dtype, h.conv_state, sref, rows * D * SL, "conv_state");
        free(y0), free((void *)h.x), free(h.conv_state), free((void *)h.weight), free(h.y);
        free(sref), free(ref), free(mag);
    }
}

/* ---- rejections ---------------------------------------------------------------------------- */

typedef struct bad_call {
    const char *what;
    convnd_causal_problem p;
    int drop; /* which tensor to break: see break_tensors */
    convnd_status status;
    const char *message_part;
} bad_call;

static float bx[4 * 8 * 16], bw[8 * 4], bb[8], bs[4 * 8 * 3], by[4 * 8 * 16];
static int32_t bq[3] = {0, 8, 16}, bi[4 * 16];

/* GOOD, then the one field a case breaks (a later designator overrides an earlier one) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define GOOD .batch = 4, .dim = 8, .seqlen = 16, .width = 4, .dtype = CONVND_F32

static const bad_call bad_calls[] = {
    {"width 0", {GOOD, .width = 0}, 0, CONVND_ERR_INVALID_ARGUMENT, "width=0 must be in 1..256"},
    {"width 257", {GOOD, .width = 257}, 0, CONVND_ERR_INVALID_ARGUMENT, "width=257"},
    {"dtype", {GOOD, .dtype = (convnd_dtype)7}, 0, CONVND_ERR_UNSUPPORTED, "dtype=7"},
    {"layout",
     {GOOD, .layout = (convnd_causal_layout)3},
     0,
     CONVND_ERR_INVALID_ARGUMENT,
     "layout=3"},
    {"negative dim", {GOOD, .dim = -1}, 0, CONVND_ERR_INVALID_ARGUMENT, "dim=-1 must be >= 0"},
    {"silu 2", {GOOD, .silu = 2}, 0, CONVND_ERR_INVALID_ARGUMENT, "silu=2 must be 0 or 1"},
    {"has_bias 3", {GOOD, .has_bias = 3}, 0, CONVND_ERR_INVALID_ARGUMENT, "has_bias=3"},
    {"packed with batch 4",
     {GOOD, .num_seqs = 2},
     0,
     CONVND_ERR_INVALID_ARGUMENT,
     "needs batch=1, got batch=4"},
    {"offsets without num_seqs",
     {GOOD},
     1,
     CONVND_ERR_INVALID_ARGUMENT,
     "query_start_loc is given but num_seqs=0"},
    {"seq_idx with states",
     {GOOD},
     2,
     CONVND_ERR_UNSUPPORTED,
     "seq_idx cannot be combined with initial_states"},
    {"bias NULL",
     {GOOD, .has_bias = 1},
     3,
     CONVND_ERR_NULL_POINTER,
     "bias is NULL but the call reads 32 bytes"},
    {"x NULL", {GOOD}, 4, CONVND_ERR_NULL_POINTER, "x is NULL but the call reads 2048 bytes"},
    {"y overlapping x", {GOOD}, 5, CONVND_ERR_ALIASING, "overlaps y"},
    {"final_states overlapping initial_states partly",
     {GOOD},
     6,
     CONVND_ERR_ALIASING,
     "only final_states == initial_states exactly may alias"},
    {"x misaligned", {GOOD}, 7, CONVND_ERR_INVALID_ARGUMENT, "is not aligned to its 4-byte"},
    {"element count past int64",
     {GOOD, .seqlen = (int64_t)1 << 62},
     0,
     CONVND_ERR_OVERFLOW,
     "x has more bytes than int64 can count"},
};
#pragma GCC diagnostic pop

static convnd_causal_tensors break_tensors(int drop) {
    convnd_causal_tensors t = {.x = bx, .weight = bw, .bias = bb, .y = by};
    switch (drop) {
    case 1:
        t.query_start_loc = bq;
        break;
    case 2:
        t.seq_idx = bi, t.initial_states = bs;
        break;
    case 3:
        t.bias = NULL;
        break;
    case 4:
        t.x = NULL;
        break;
    case 5:
        t.x = by + 3;
        break;
    case 6:
        t.initial_states = bs, t.final_states = bs + 1;
        break;
    case 7:
        t.x = (const char *)bx + 2;
        break;
    default:
        break;
    }
    return t;
}

Test(causal, rejects_bad_calls_and_writes_nothing) {
    for (size_t i = 0; i < sizeof bad_calls / sizeof bad_calls[0]; ++i) {
        const bad_call *c = &bad_calls[i];
        memset(by, 0x5A, sizeof by);
        memset(bs, 0x5A, sizeof bs);
        const convnd_causal_tensors t = break_tensors(c->drop);
        const convnd_status st = convnd_causal_conv1d(&c->p, &t, NULL);
        cr_assert_eq(st, c->status, "%s: status %d, expected %d (%s)", c->what, st, c->status,
                     convnd_last_error());
        cr_assert(strstr(convnd_last_error(), c->message_part), "%s: message '%s' lacks '%s'",
                  c->what, convnd_last_error(), c->message_part);
        for (size_t k = 0; k < sizeof by; ++k)
            cr_assert_eq(((unsigned char *)by)[k], 0x5A, "%s: y written", c->what);
        for (size_t k = 0; k < sizeof bs; ++k)
            cr_assert_eq(((unsigned char *)bs)[k], 0x5A, "%s: states written", c->what);
    }
}

Test(causal, update_rejects_bad_calls) {
    const convnd_causal_update_problem good =
        update_problem(2, 8, 1, 4, CONVND_F32, CONVND_CAUSAL_BDL, 0, 0, 3, 2);
    convnd_causal_update_tensors t = {.x = bx, .conv_state = bs, .weight = bw, .y = by};
    convnd_causal_update_problem p = good;
    p.state_len = 2;
    cr_assert_eq(convnd_causal_conv1d_update(&p, &t, NULL), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "state_len=2 must be >= width-1=3"), "%s",
              convnd_last_error());
    p = good;
    p.state_rows = 1;
    cr_assert_eq(convnd_causal_conv1d_update(&p, &t, NULL), CONVND_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(convnd_last_error(), "state_rows=1 < batch=2"), "%s", convnd_last_error());
    p = good;
    t.y = bs + 2; /* y inside the state */
    cr_assert_eq(convnd_causal_conv1d_update(&p, &t, NULL), CONVND_ERR_ALIASING);
    t.y = by;
    t.conv_state = NULL;
    cr_assert_eq(convnd_causal_conv1d_update(&p, &t, NULL), CONVND_ERR_NULL_POINTER);
    cr_assert(strstr(convnd_last_error(), "conv_state is NULL but the call writes 192 bytes"), "%s",
              convnd_last_error());
}

/* ---- PyTorch golden fixtures (tests/golden/causal, gen_golden_causal.py) ----------------------
 */

static int64_t gint(const golden_case *c, const char *key) {
    int64_t v = 0;
    cr_assert(golden_int(c, key, &v), "%s: no integer %s", c->name, key);
    return v;
}

static const float *gin(const golden_set *s, const golden_case *c, const char *key) {
    const int64_t o = gint(c, key);
    return o < 0 ? NULL : s->inputs + o;
}

/* Both the kernel (in every order) and the C reference against PyTorch's float64 values. */
Test(causal, pytorch_golden) {
    golden_set set;
    char err[256];
    cr_assert(golden_load(CONVND_TESTS_DIR "/golden/causal", &set, err, sizeof err), "%s", err);
    cr_assert_geq(set.count, 11);
    for (int32_t ci = 0; ci < set.count; ++ci) {
        const golden_case *c = &set.cases[ci];
        const int64_t B = gint(c, "B"), D = gint(c, "D"), L = gint(c, "L");
        const int32_t W = (int32_t)gint(c, "W");
        const convnd_causal_layout lay =
            strcmp(golden_get(c, "layout"), "bld") == 0 ? CONVND_CAUSAL_BLD : CONVND_CAUSAL_BDL;
        const int silu = (int)gint(c, "silu"), hb = (int)gint(c, "bias");
        const double *gy = set.expected + gint(c, "yo");
        const int64_t fo = gint(c, "fo"), ny = B * D * L;
        double *ref = calloc((size_t)ny + 1, 8), *mag = calloc((size_t)ny + 1, 8);
        float *y = malloc(4 * (size_t)ny + 4);
        const test_tolerance tol = causal_tolerance(CONVND_F32, W, silu);
        if (strcmp(golden_get(c, "kind"), "fwd") == 0) {
            int64_t q64[16];
            int32_t qsl[16];
            const int nq = golden_ints(c, "qsl", q64, 16);
            for (int i = 0; i < nq; ++i)
                qsl[i] = (int32_t)q64[i];
            const convnd_causal_problem p =
                fwd_problem(B, D, L, W, CONVND_F32, lay, hb, silu, nq > 0 ? nq - 1 : 0);
            const int64_t ns = (nq > 0 ? nq - 1 : B) * D * (W - 1);
            float *fin = fo >= 0 ? malloc(4 * (size_t)ns) : NULL;
            double *fref = calloc((size_t)ns + 1, 8);
            convnd_causal_tensors h = {.x = gin(&set, c, "xo"),
                                       .weight = gin(&set, c, "wo"),
                                       .bias = gin(&set, c, "bo"),
                                       .query_start_loc = nq > 0 ? qsl : NULL,
                                       .initial_states = gin(&set, c, "so"),
                                       .final_states = fin,
                                       .y = y};
            convnd_ref_causal_conv1d(&p, &h, ref, mag, fref);
            for (int64_t i = 0; i < ny; ++i)
                cr_assert(fabs(ref[i] - gy[i]) <= 1e-12 * (1.0 + mag[i]),
                          "%s: C reference y[%lld] = %.17g, PyTorch %.17g", c->name, (long long)i,
                          ref[i], gy[i]);
            for (int o = 0; o < test_order_count(); ++o) {
                test_order_apply(o);
                cr_assert_eq(run_fwd(&p, &h), CONVND_OK, "%s: %s", c->name, convnd_last_error());
                expect_close(CONVND_F32, y, gy, mag, ny, &tol, c->name);
                if (fin) expect_exact(CONVND_F32, fin, set.expected + fo, ns, c->name);
            }
            free(fin), free(fref);
        } else {
            int64_t seen64[8], idx64[8];
            int32_t seen[8], idx[8];
            const int ns_ = golden_ints(c, "seen", seen64, 8), ni = golden_ints(c, "idx", idx64, 8);
            for (int i = 0; i < ns_; ++i)
                seen[i] = (int32_t)seen64[i];
            for (int i = 0; i < ni; ++i)
                idx[i] = (int32_t)idx64[i];
            const int64_t SL = gint(c, "SL"), rows = gint(c, "rows");
            const convnd_causal_update_problem p =
                update_problem(B, D, L, W, CONVND_F32, lay, hb, silu, SL, rows);
            float *state = malloc(4 * (size_t)(rows * D * SL));
            double *sref = malloc(8 * (size_t)(rows * D * SL));
            for (int o = 0; o < test_order_count(); ++o) {
                test_order_apply(o);
                memcpy(state, gin(&set, c, "so"), 4 * (size_t)(rows * D * SL));
                for (int64_t i = 0; i < rows * D * SL; ++i)
                    sref[i] = state[i];
                memset(y, 0, 4 * (size_t)ny);
                convnd_causal_update_tensors h = {.x = gin(&set, c, "xo"),
                                                  .conv_state = state,
                                                  .weight = gin(&set, c, "wo"),
                                                  .bias = gin(&set, c, "bo"),
                                                  .cache_seqlens = ns_ > 0 ? seen : NULL,
                                                  .conv_state_indices = ni > 0 ? idx : NULL,
                                                  .y = y};
                convnd_ref_causal_update(&p, &h, sref, ref, mag);
                for (int64_t i = 0; i < ny; ++i)
                    cr_assert(fabs(ref[i] - gy[i]) <= 1e-12 * (1.0 + mag[i]),
                              "%s: C reference y[%lld] = %.17g, PyTorch %.17g", c->name,
                              (long long)i, ref[i], gy[i]);
                cr_assert_eq(run_update(&p, &h), CONVND_OK, "%s: %s", c->name, convnd_last_error());
                expect_close(CONVND_F32, y, gy, mag, ny, &tol, c->name);
                expect_exact(CONVND_F32, state, set.expected + fo, rows * D * SL, c->name);
            }
            free(state), free(sref);
        }
        free(ref), free(mag), free(y);
    }
    golden_free(&set);
}
