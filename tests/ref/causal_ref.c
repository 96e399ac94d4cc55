/* The stateful causal conv1d reference: obviously-correct loops in f64. */
#include "causal_ref.h"

#include <stdlib.h>

#include "convnd_ref.h"

static int64_t x_offset(convnd_causal_layout layout, int64_t D, int64_t L, int64_t b, int64_t d,
                        int64_t t) {
    return layout == CONVND_CAUSAL_BDL ? (b * D + d) * L + t : (b * L + t) * D + d;
}

static double finish(int32_t silu, double v) {
    return silu ? convnd_ref_activate(CONVND_ACT_SILU, v) : v;
}

void convnd_ref_causal_conv1d(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                              double *y, double *mag, double *final_states) {
    const convnd_dtype dt = p->dtype;
    const int64_t D = p->dim, L = p->seqlen, W = p->width;
    const int packed = p->num_seqs > 0;
    const int64_t seqs = packed ? p->num_seqs : p->batch;
    double *X = malloc(sizeof(double) * (size_t)(W - 1 + L));
    for (int64_t s = 0; s < seqs; ++s) {
        const int64_t b = packed ? 0 : s;
        const int64_t start = packed ? t->query_start_loc[s] : 0;
        const int64_t end = packed ? t->query_start_loc[s + 1] : L;
        const int64_t len = end - start;
        for (int64_t d = 0; d < D; ++d) {
            /* X = cat(initial_state, x[start:end]) */
            for (int64_t j = 0; j < W - 1; ++j)
                X[j] = t->initial_states
                           ? convnd_ref_load(dt, t->initial_states, (s * D + d) * (W - 1) + j)
                           : 0.0;
            for (int64_t j = 0; j < len; ++j)
                X[W - 1 + j] =
                    convnd_ref_load(dt, t->x, x_offset(p->layout, D, L, b, d, start + j));
            const double bias = p->has_bias ? convnd_ref_load(dt, t->bias, d) : 0.0;
            for (int64_t j = 0; j < len; ++j) {
                const int64_t tok = start + j;
                double acc = bias, m = bias < 0 ? -bias : bias;
                for (int64_t k = 0; k < W; ++k) {
                    const int64_t src = tok - (W - 1) + k; /* token read by tap k */
                    /* seq_idx: a tap reads only tokens of the output's own sequence */
                    if (t->seq_idx && src >= 0 &&
                        t->seq_idx[b * L + src] != t->seq_idx[b * L + tok])
                        continue;
                    const double v = convnd_ref_load(dt, t->weight, d * W + k) * X[j + k];
                    acc += v;
                    m += v < 0 ? -v : v;
                }
                const int64_t o = x_offset(p->layout, D, L, b, d, tok);
                y[o] = finish(p->silu, acc);
                mag[o] = m;
            }
            if (final_states)
                for (int64_t j = 0; j < W - 1; ++j)
                    final_states[(s * D + d) * (W - 1) + j] = X[len + j];
        }
    }
    free(X);
}

void convnd_ref_causal_update(const convnd_causal_update_problem *p,
                              const convnd_causal_update_tensors *t, double *state, double *y,
                              double *mag) {
    const convnd_dtype dt = p->dtype;
    const int64_t D = p->dim, Ln = p->seqlen, W = p->width, SL = p->state_len;
    /* the window as a sequence: the state's tokens oldest first, then the new ones */
    double *X = malloc(sizeof(double) * (size_t)(SL + Ln));
    for (int64_t b = 0; b < p->batch; ++b) {
        const int64_t row = t->conv_state_indices ? t->conv_state_indices[b] : b;
        if (row < 0) continue;
        const int64_t seen = t->cache_seqlens ? t->cache_seqlens[b] : 0;
        for (int64_t d = 0; d < D; ++d) {
            double *st = state + (row * D + d) * SL;
            for (int64_t j = 0; j < SL; ++j) /* token seen - SL + j */
                X[j] = t->cache_seqlens ? st[((seen - SL + j) % SL + SL) % SL] : st[j];
            for (int64_t j = 0; j < Ln; ++j)
                X[SL + j] = convnd_ref_load(dt, t->x, x_offset(p->layout, D, Ln, b, d, j));
            const double bias = p->has_bias ? convnd_ref_load(dt, t->bias, d) : 0.0;
            for (int64_t j = 0; j < Ln; ++j) {
                double acc = bias, m = bias < 0 ? -bias : bias;
                for (int64_t k = 0; k < W; ++k) {
                    const double v =
                        convnd_ref_load(dt, t->weight, d * W + k) * X[SL + j - (W - 1) + k];
                    acc += v;
                    m += v < 0 ? -v : v;
                }
                const int64_t o = x_offset(p->layout, D, Ln, b, d, j);
                y[o] = finish(p->silu, acc);
                mag[o] = m;
            }
            /* the last SL tokens, back where they live */
            for (int64_t j = 0; j < SL; ++j) {
                const double v = X[Ln + j]; /* token seen + Ln - SL + j */
                if (t->cache_seqlens)
                    st[((seen + Ln - SL + j) % SL + SL) % SL] = v;
                else
                    st[j] = v;
            }
        }
    }
    free(X);
}
