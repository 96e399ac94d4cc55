/* Copy-free rows against copy-based peers (bench/copy_free.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "copy_free.h"
#include "gpu_runtime.h"
#include "materialized_pad.h"
#include "random_fill.h"

/* ---- tensors on the host and the device ---------------------------------------------------- */

typedef struct cf_tensor {
    void *h, *d;
    int64_t n;
    size_t bytes;
} cf_tensor;

/* n elements of dt: random (r) or poisoned (r NULL), uploaded. */
static convnd_status tensor_make(cf_tensor *t, convnd_dtype dt, int64_t n, bench_rng *r) {
    t->n = n;
    t->bytes = convnd_ref_dtype_size(dt) * (size_t)(n > 0 ? n : 1);
    t->h = malloc(t->bytes);
    if (!t->h) return CONVND_ERR_OUT_OF_MEMORY;
    if (r)
        bench_fill_random_tiled(dt, t->h, (int64_t)(t->bytes / convnd_ref_dtype_size(dt)), 4096, r);
    else
        bench_poison(t->h, t->bytes);
    const convnd_status s = bench_alloc(&t->d, t->bytes);
    return s != CONVND_OK ? s : convnd_memcpy_h2d(t->d, t->h, t->bytes);
}

static convnd_status tensor_download(cf_tensor *t) {
    return convnd_memcpy_d2h(t->h, t->d, t->bytes);
}

static void tensor_free(cf_tensor *t) {
    free(t->h);
    bench_free(&t->d);
    memset(t, 0, sizeof *t);
}

/* max |got - ref| / max |ref| over n elements, got indexed through got_at. */
static double rel_error(convnd_dtype dt, const void *got, const int64_t *got_at, const void *ref,
                        int64_t n) {
    double err = 0.0, scale = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double g = convnd_ref_load(dt, got, got_at ? got_at[i] : i);
        const double r = convnd_ref_load(dt, ref, i);
        err = fmax(err, isfinite(g) ? fabs(g - r) : INFINITY);
        scale = fmax(scale, fabs(r));
    }
    return scale > 0.0 ? err / scale : err;
}

/* Two roundings of the output to the dtype apart (each within half an ulp, the accumulation
 * order aside): 2^-7 of the largest output for bf16, 2^-10 f16, 2^-20 f32. */
static double rel_tolerance(convnd_dtype dt) {
    return dt == CONVND_BF16 ? 0x1p-7 : dt == CONVND_F16 ? 0x1p-10 : 0x1p-20;
}

/* ---- a scenario --------------------------------------------------------------------------------
 */

typedef struct cf_scenario {
    const char *name, *fused_label, *peer_label;
    size_t size; /* of its state */
    /* small: the validation shape; else the full one */
    convnd_status (*setup)(void *s, int32_t small, uint64_t seed);
    convnd_status (*run)(void *s, int32_t peer);
    /* after a run: 1 when the outputs match the reference; the error and a note */
    int32_t (*check)(void *s, int32_t peer, double *rel_err, char *note, size_t len);
    void (*plan)(const void *s, int32_t peer, char *buf, size_t len);
    void (*release)(void *s);
} cf_scenario;

static void plan_text(const convnd_plan_t *plan, const char *prefix, char *buf, size_t len) {
    char name[512] = "?"; /* the description carries the planner's reason, cut below */
    if (plan) convnd_plan_describe(plan, name, sizeof name);
    snprintf(buf, len, "%s%s", prefix, name);
    char *paren = strstr(buf, " (");
    if (paren) *paren = '\0';
}

/* The planner's plans of the fused problem and of the peer's conv, and one workspace for both. */
static convnd_status plans_and_workspace(const convnd_problem *fused_p, convnd_plan_t **fused,
                                         const convnd_problem *peer_p, convnd_plan_t **peer,
                                         void **ws, size_t *ws_bytes) {
    convnd_status st;
    if ((st = convnd_plan_create(fused, fused_p, NULL)) != CONVND_OK ||
        (st = convnd_plan_create(peer, peer_p, NULL)) != CONVND_OK)
        return st;
    size_t a = 0, b = 0;
    convnd_plan_workspace_size(*fused, &a);
    convnd_plan_workspace_size(*peer, &b);
    *ws_bytes = a > b ? a : b;
    return *ws_bytes ? bench_alloc(ws, *ws_bytes) : CONVND_OK;
}

/* ---- Wan's causal conv3d with a 2-frame cache ------------------------------------------------ */

typedef struct wan_cache {
    convnd_problem io;     /* the chunk: prefix 2, state 2, time P0 = 0 */
    convnd_problem cat;    /* the conv over X = cat(cache, x), H/W padded */
    convnd_problem padded; /* the conv over F.pad(X) */
    convnd_plan_t *fused, *conv;
    cf_tensor cache, x, w, y, state, xcat, xpad, y_peer, state_peer;
    void *ws;
    size_t ws_bytes, frame_bytes; /* one frame (H*W elements) */
    int64_t rows, T;              /* N*C rows of frames; frames in the chunk */
} wan_cache;

enum { WAN_CACHE_T = 2 };

static convnd_status wan_setup(void *vs, int32_t small, uint64_t seed) {
    wan_cache *s = vs;
    const int64_t C = small ? 8 : 128, T = small ? 2 : 4, H = small ? 6 : 64;
    const convnd_shape in = {5, {1, C, T, H, H}}, w = {5, {C, C, 3, 3, 3}};
    const convnd_ints pad = {1, {1}};
    convnd_problem causal;
    convnd_status st = convnd_bind_causal_conv(3, &in, &w, -1, NULL, &pad, NULL, 1, &causal);
    if (st != CONVND_OK) return st;
    causal.dtype = CONVND_BF16;
    if ((st = convnd_bind_causal_cache(&causal, WAN_CACHE_T, WAN_CACHE_T, &s->io)) != CONVND_OK)
        return st;
    s->cat = causal;
    s->cat.input[0] = T + WAN_CACHE_T;
    s->cat.pad_before[0] = 0;
    bench_padded_problem(&s->cat, &s->padded);
    s->T = T;
    s->rows = C;
    const size_t es = convnd_ref_dtype_size(CONVND_BF16);
    s->frame_bytes = (size_t)(H * H) * es;
    if ((st = plans_and_workspace(&s->io, &s->fused, &s->padded, &s->conv, &s->ws, &s->ws_bytes)) !=
        CONVND_OK)
        return st;
    convnd_tensor_desc d[6];
    const struct {
        const convnd_problem *p;
        convnd_tensor t;
    } descs[6] = {{&s->io, CONVND_X_PREFIX}, {&s->io, CONVND_X},     {&s->io, CONVND_W},
                  {&s->io, CONVND_Y},        {&s->io, CONVND_STATE}, {&s->padded, CONVND_X}};
    for (int i = 0; i < 6; ++i)
        if ((st = convnd_tensor_describe(descs[i].p, descs[i].t, &d[i])) != CONVND_OK) return st;
    bench_rng r = bench_rng_seed(seed);
    const convnd_dtype dt = CONVND_BF16;
    const int64_t xcat_n = C * (T + WAN_CACHE_T) * H * H;
    if ((st = tensor_make(&s->cache, dt, d[0].numel, &r)) ||
        (st = tensor_make(&s->x, dt, d[1].numel, &r)) ||
        (st = tensor_make(&s->w, dt, d[2].numel, &r)) ||
        (st = tensor_make(&s->y, dt, d[3].numel, NULL)) ||
        (st = tensor_make(&s->state, dt, d[4].numel, NULL)) ||
        (st = tensor_make(&s->xcat, dt, xcat_n, NULL)) ||
        (st = tensor_make(&s->xpad, dt, d[5].numel, NULL)) ||
        (st = tensor_make(&s->y_peer, dt, d[3].numel, NULL)) ||
        (st = tensor_make(&s->state_peer, dt, d[4].numel, NULL)))
        return st;
    return CONVND_OK;
}

static convnd_status wan_run(void *vs, int32_t peer) {
    wan_cache *s = vs;
    if (!peer) {
        const convnd_io io = {
            .x = s->x.d, .x_prefix = s->cache.d, .w = s->w.d, .y = s->y.d, .state = s->state.d};
        return convnd_plan_execute_io(s->fused, &io, s->ws, s->ws_bytes, NULL);
    }
    /* torch.cat([cache, x], dim=2); F.pad(..., H and W); conv; cache = X[:, :, -2:] */
    const size_t fb = s->frame_bytes, T = (size_t)s->T, R = (size_t)s->rows, K = WAN_CACHE_T;
    const size_t pitch = (T + K) * fb;
    convnd_status st = bench_copy_2d(s->xcat.d, pitch, s->cache.d, K * fb, K * fb, R, NULL);
    if (st == CONVND_OK)
        st = bench_copy_2d((char *)s->xcat.d + K * fb, pitch, s->x.d, T * fb, T * fb, R, NULL);
    if (st == CONVND_OK) st = bench_pad_copy(&s->cat, s->xcat.d, s->xpad.d, NULL);
    if (st == CONVND_OK)
        st = convnd_plan_execute(s->conv, s->xpad.d, s->w.d, NULL, NULL, s->y_peer.d, s->ws,
                                 s->ws_bytes, NULL);
    if (st == CONVND_OK)
        st = bench_copy_2d(s->state_peer.d, K * fb, (char *)s->xcat.d + T * fb, pitch, K * fb, R,
                           NULL);
    return st;
}

static int32_t wan_check(void *vs, int32_t peer, double *rel_err, char *note, size_t len) {
    wan_cache *s = vs;
    cf_tensor *y = peer ? &s->y_peer : &s->y, *state = peer ? &s->state_peer : &s->state;
    void *yref = malloc(y->bytes), *sref = malloc(state->bytes);
    int32_t ok =
        yref && sref && tensor_download(y) == CONVND_OK && tensor_download(state) == CONVND_OK &&
        convnd_ref_conv_io(&s->io, s->cache.h, s->x.h, NULL, s->w.h, NULL, NULL, yref, sref) ==
            CONVND_OK;
    if (!ok) {
        snprintf(note, len, "validation could not run: %s", convnd_last_error());
    } else {
        *rel_err = rel_error(CONVND_BF16, y->h, NULL, yref, y->n);
        const int state_same = memcmp(state->h, sref, state->bytes) == 0;
        ok = *rel_err <= rel_tolerance(CONVND_BF16) && state_same;
        if (!ok)
            snprintf(note, len, "y rel err %.3g%s", *rel_err,
                     state_same ? "" : ", the state differs from X's last 2 frames");
    }
    free(yref);
    free(sref);
    return ok;
}

static void wan_plan(const void *vs, int32_t peer, char *buf, size_t len) {
    const wan_cache *s = vs;
    plan_text(peer ? s->conv : s->fused, peer ? "cat + pad copies + " : "", buf, len);
}

static void wan_release(void *vs) {
    wan_cache *s = vs;
    convnd_plan_destroy(s->fused);
    convnd_plan_destroy(s->conv);
    cf_tensor *t[] = {&s->cache, &s->x,    &s->w,      &s->y,         &s->state,
                      &s->xcat,  &s->xpad, &s->y_peer, &s->state_peer};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        tensor_free(t[i]);
    bench_free(&s->ws);
    memset(s, 0, sizeof *s);
}

/* ---- a DenseNet-style conv into a channel slice -----------------------------------------------
 */

typedef struct channel_slice {
    convnd_problem conv;  /* y packed */
    convnd_problem slice; /* y a view of channels [c0, c0 + C_out) of [N, Ct, H, W] */
    convnd_plan_t *fused, *peer;
    cf_tensor x, w, big, big_peer, y_tmp;
    void *before; /* the buffer's contents before the run (its other channels must stay) */
    void *ws;
    size_t ws_bytes, plane_bytes;
    int64_t N, c0, ct, co, plane;
} channel_slice;

static convnd_status slice_setup(void *vs, int32_t small, uint64_t seed) {
    channel_slice *s = vs;
    s->N = small ? 2 : 8; /* N > 1: the slice is a real view (N = 1 addresses it as packed) */
    const int64_t ci = small ? 8 : 128, H = small ? 6 : 28;
    s->co = small ? 4 : 32;
    s->c0 = small ? 8 : 256;
    s->ct = s->c0 + s->co + (small ? 2 : 0); /* small: channels after the slice too */
    s->plane = H * H;
    convnd_problem *p = &s->conv;
    convnd_problem_init(p, 2);
    p->N = s->N;
    p->C_in = ci;
    p->C_out = s->co;
    p->input[0] = p->input[1] = H;
    p->kernel[0] = p->kernel[1] = 3;
    p->pad_before[0] = p->pad_before[1] = p->pad_after[0] = p->pad_after[1] = 1;
    p->dtype = CONVND_BF16;
    s->slice = *p;
    convnd_view *v = &s->slice.y_view;
    v->custom = 1;
    v->strides[0] = s->ct * s->plane;
    v->strides[1] = s->plane;
    v->strides[2] = H;
    v->strides[3] = 1;
    v->extent = (s->N * s->ct - s->c0) * s->plane;
    convnd_status st =
        plans_and_workspace(&s->slice, &s->fused, &s->conv, &s->peer, &s->ws, &s->ws_bytes);
    if (st != CONVND_OK) return st;
    s->plane_bytes = (size_t)s->plane * convnd_ref_dtype_size(CONVND_BF16);
    bench_rng r = bench_rng_seed(seed);
    const int64_t big = s->N * s->ct * s->plane;
    if ((st = tensor_make(&s->x, CONVND_BF16, s->N * ci * s->plane, &r)) ||
        (st = tensor_make(&s->w, CONVND_BF16, s->co * ci * 9, &r)) ||
        (st = tensor_make(&s->big, CONVND_BF16, big, &r)) ||
        (st = tensor_make(&s->y_tmp, CONVND_BF16, s->N * s->co * s->plane, NULL)))
        return st;
    /* the peer's buffer starts with the same earlier features */
    s->big_peer = s->big;
    s->big_peer.h = malloc(s->big.bytes);
    s->big_peer.d = NULL;
    s->before = malloc(s->big.bytes);
    if (!s->big_peer.h || !s->before) return CONVND_ERR_OUT_OF_MEMORY;
    memcpy(s->big_peer.h, s->big.h, s->big.bytes);
    memcpy(s->before, s->big.h, s->big.bytes);
    if ((st = bench_alloc(&s->big_peer.d, s->big.bytes)) != CONVND_OK) return st;
    return convnd_memcpy_h2d(s->big_peer.d, s->big_peer.h, s->big.bytes);
}

static convnd_status slice_run(void *vs, int32_t peer) {
    channel_slice *s = vs;
    const size_t at = (size_t)s->c0 * s->plane_bytes;
    if (!peer)
        return convnd_plan_execute(s->fused, s->x.d, s->w.d, NULL, NULL, (char *)s->big.d + at,
                                   s->ws, s->ws_bytes, NULL);
    /* conv, then torch.cat's copy of it into the features */
    const convnd_status st = convnd_plan_execute(s->peer, s->x.d, s->w.d, NULL, NULL, s->y_tmp.d,
                                                 s->ws, s->ws_bytes, NULL);
    if (st != CONVND_OK) return st;
    const size_t slab = (size_t)s->co * s->plane_bytes;
    return bench_copy_2d((char *)s->big_peer.d + at, (size_t)s->ct * s->plane_bytes, s->y_tmp.d,
                         slab, slab, (size_t)s->N, NULL);
}

static int32_t slice_check(void *vs, int32_t peer, double *rel_err, char *note, size_t len) {
    channel_slice *s = vs;
    cf_tensor *big = peer ? &s->big_peer : &s->big;
    const int64_t n_out = s->N * s->co * s->plane;
    void *yref = malloc(convnd_ref_dtype_size(CONVND_BF16) * (size_t)n_out);
    int64_t *at = malloc(sizeof(int64_t) * (size_t)n_out);
    int32_t ok = yref && at && tensor_download(big) == CONVND_OK &&
                 convnd_ref_conv(&s->conv, s->x.h, s->w.h, NULL, NULL, yref) == CONVND_OK;
    if (!ok) {
        snprintf(note, len, "validation could not run: %s", convnd_last_error());
    } else {
        /* y's elements in the buffer; every other element must be as it was */
        unsigned char *mine = calloc((size_t)big->n, 1);
        int64_t k = 0, changed = 0;
        for (int64_t n = 0; n < s->N; ++n)
            for (int64_t c = 0; c < s->co; ++c)
                for (int64_t i = 0; i < s->plane; ++i, ++k) {
                    at[k] = (n * s->ct + s->c0 + c) * s->plane + i;
                    if (mine) mine[at[k]] = 1;
                }
        const size_t es = convnd_ref_dtype_size(CONVND_BF16);
        for (int64_t i = 0; mine && i < big->n; ++i)
            changed += !mine[i] && memcmp((char *)big->h + (size_t)i * es,
                                          (char *)s->before + (size_t)i * es, es) != 0;
        *rel_err = rel_error(CONVND_BF16, big->h, at, yref, n_out);
        ok = mine && *rel_err <= rel_tolerance(CONVND_BF16) && changed == 0;
        if (!ok)
            snprintf(note, len, "y rel err %.3g, %lld other elements of the buffer changed",
                     *rel_err, (long long)changed);
        free(mine);
    }
    free(yref);
    free(at);
    return ok;
}

static void slice_plan(const void *vs, int32_t peer, char *buf, size_t len) {
    const channel_slice *s = vs;
    plan_text(peer ? s->peer : s->fused, "", buf, len);
    if (peer) strncat(buf, " + cat copy", len - strlen(buf) - 1);
}

static void slice_release(void *vs) {
    channel_slice *s = vs;
    convnd_plan_destroy(s->fused);
    convnd_plan_destroy(s->peer);
    cf_tensor *t[] = {&s->x, &s->w, &s->big, &s->big_peer, &s->y_tmp};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        tensor_free(t[i]);
    free(s->before);
    bench_free(&s->ws);
    memset(s, 0, sizeof *s);
}

static const cf_scenario scenarios[] = {
    {"wan_causal_conv3d_cache", "fused prefix + state", "cat + pad + conv + cache copy",
     sizeof(wan_cache), wan_setup, wan_run, wan_check, wan_plan, wan_release},
    {"channel_slice_output", "fused y view", "conv + cat", sizeof(channel_slice), slice_setup,
     slice_run, slice_check, slice_plan, slice_release},
};
#define SCENARIOS ((int32_t)(sizeof scenarios / sizeof scenarios[0]))

/* ---- the driver ---------------------------------------------------------------------------- */

static convnd_status time_one(const cf_scenario *sc, void *s, int32_t peer,
                              const bench_timing_config *cfg, bench_copy_free_row *row) {
    double t[BENCH_MAX_REPS];
    convnd_status st = CONVND_OK;
    for (int32_t i = 0; i < cfg->warmup && st == CONVND_OK; ++i)
        st = sc->run(s, peer);
    if (st == CONVND_OK) st = convnd_synchronize(NULL);
    double total = 0.0;
    int32_t reps = 0;
    while (st == CONVND_OK && reps < cfg->max_reps && reps < BENCH_MAX_REPS &&
           (reps < cfg->min_reps || total < cfg->target_ms)) {
        const double t0 = bench_now_ms();
        st = sc->run(s, peer);
        if (st == CONVND_OK) st = convnd_synchronize(NULL);
        t[reps] = bench_now_ms() - t0;
        total += t[reps++];
    }
    if (st != CONVND_OK) return st;
    row->reps = reps;
    row->median_ms = bench_median(t, reps);
    return CONVND_OK;
}

/* Validates on the small shapes, then times on the small or full ones. Returns the bad rows. */
static int32_t run_scenario(const cf_scenario *sc, int32_t small, const bench_timing_config *cfg,
                            uint64_t seed, bench_copy_free_row rows[2]) {
    void *s = calloc(1, sc->size);
    int32_t bad = 0;
    for (int32_t peer = 0; peer < 2; ++peer) {
        memset(&rows[peer], 0, sizeof rows[peer]);
        snprintf(rows[peer].scenario, sizeof rows[peer].scenario, "%s", sc->name);
        snprintf(rows[peer].candidate, sizeof rows[peer].candidate, "%s",
                 peer ? sc->peer_label : sc->fused_label);
    }
    if (!s) return 2;
    for (int32_t pass = 0; pass < 2; ++pass) { /* 0: validate (small); 1: time */
        const int32_t shape_small = pass == 0 || small;
        convnd_status st = sc->setup(s, shape_small, seed);
        for (int32_t peer = 0; peer < 2; ++peer) {
            bench_copy_free_row *r = &rows[peer];
            if (st != CONVND_OK) {
                if (!r->note[0])
                    snprintf(r->note, sizeof r->note, "setup: %s", convnd_last_error());
                continue;
            }
            if (pass == 0) {
                convnd_status rs = sc->run(s, peer);
                if (rs == CONVND_OK) rs = convnd_synchronize(NULL);
                if (rs != CONVND_OK)
                    snprintf(r->note, sizeof r->note, "run: %s", convnd_last_error());
                else
                    r->validated = sc->check(s, peer, &r->rel_err, r->note, sizeof r->note);
                continue;
            }
            sc->plan(s, peer, r->plan, sizeof r->plan);
            if (r->validated && time_one(sc, s, peer, cfg, r) != CONVND_OK)
                snprintf(r->note, sizeof r->note, "timing: %s", convnd_last_error());
        }
        sc->release(s);
    }
    free(s);
    for (int32_t peer = 0; peer < 2; ++peer) {
        rows[peer].vs_peer = rows[1].median_ms > 0.0 && rows[peer].median_ms > 0.0
                                 ? rows[1].median_ms / rows[peer].median_ms
                                 : 0.0;
        bad += !rows[peer].validated || !(rows[peer].median_ms > 0.0);
    }
    return bad;
}

int32_t bench_copy_free_run(int32_t small, const bench_timing_config *timing, uint64_t seed,
                            bench_copy_free_row *rows) {
    int32_t bad = 0;
    for (int32_t i = 0; i < SCENARIOS; ++i)
        bad += run_scenario(&scenarios[i], small, timing, seed + (uint64_t)i, rows + 2 * i);
    return bad;
}

void bench_copy_free_print(FILE *f, const bench_copy_free_row *rows, int32_t n,
                           const char *device_label) {
    const int emulated = strcmp(device_label, "GPU") != 0;
    fprintf(f, "\nCopy-free rows (%s%s)\n\n", device_label,
            emulated ? ": CPU emulation times, not GPU times" : "");
    fprintf(f, "| scenario | candidate | plan | validated | median ms | vs peer | note |\n");
    fprintf(f, "|---|---|---|---|---|---|---|\n");
    for (int32_t i = 0; i < n; ++i) {
        const bench_copy_free_row *r = &rows[i];
        fprintf(f, "| %s | %s | %s | %s (rel err %.2g) | %.4g | %.2fx | %s |\n", r->scenario,
                r->candidate, r->plan, r->validated ? "ok" : "FAILED", r->rel_err, r->median_ms,
                r->vs_peer, r->note);
    }
}
