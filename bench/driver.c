/* Per-problem orchestration (bench/driver.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "reduce.h"
#include "validate.h"

convnd_status bench_timed_problem(const bench_problem *bp, const bench_config *cfg,
                                  convnd_problem *out) {
    if (!cfg->small) {
        *out = bp->p;
        return convnd_validate(out);
    }
    return bench_reduce(&bp->p, &bench_small_limits, out);
}

static void row_for(bench_row *r, const bench_problem *bp, const convnd_problem *p,
                    const bench_candidate *c, const bench_config *cfg) {
    bench_row_init(r);
    snprintf(r->problem, sizeof r->problem, "%s", bp->name);
    snprintf(r->family, sizeof r->family, "%s", bp->family);
    bench_problem timed = *bp;
    timed.p = *p;
    bench_format_row(&timed, r->definition, sizeof r->definition);
    snprintf(r->device, sizeof r->device, "%s", cfg->device_label);
    snprintf(r->candidate, sizeof r->candidate, "%s", c->label);
    snprintf(r->series, sizeof r->series, "%s", c->series);
    r->is_peer = c->is_peer;
    r->dtype = p->dtype;
    convnd_flops(p, &r->flops);
    convnd_min_bytes(p, &r->bytes);
}

/* Phase 1: every candidate on the reduced copy; rows that pass stay BENCH_OK. */
static void validate_all(const bench_problem *bp, const convnd_problem *p,
                         const bench_candidate *cands, int32_t n, const bench_config *cfg,
                         bench_row *rows) {
    convnd_problem vp;
    bench_reference ref;
    char err[512];
    convnd_status s = bench_reduce(p, &bench_validation_limits, &vp);
    if (s == CONVND_OK)
        s = bench_reference_make(&vp, cfg->seed, &ref, err, sizeof err);
    else
        snprintf(err, sizeof err, "reducing the problem: %s", convnd_last_error());
    char on[384];
    bench_problem vbp = *bp;
    vbp.p = vp;
    bench_format_row(&vbp, on, sizeof on);
    for (int32_t i = 0; i < n; ++i) {
        bench_row *r = &rows[i];
        snprintf(r->validated_on, sizeof r->validated_on, "%s", on);
        if (s != CONVND_OK) {
            r->status = BENCH_ERROR;
            bench_row_note(r, "validation copy: %s", err);
            continue;
        }
        bench_validation v;
        const double t0 = bench_now_ms();
        const convnd_status vs = bench_validate(&cands[i], &ref, &v);
        if (cfg->log)
            fprintf(cfg->log, "  %-28s validated in %6.2f s: %s\n", cands[i].label,
                    (bench_now_ms() - t0) * 1e-3,
                    v.unsupported ? "not supported"
                    : v.passed    ? "ok"
                                  : "FAILED or error");
        if (v.unsupported) {
            r->status = BENCH_SKIPPED;
            bench_row_note(r, "%s", v.message);
        } else if (vs != CONVND_OK) {
            r->status = BENCH_ERROR;
            bench_row_note(r, "%s", v.message);
        } else if (!v.passed) {
            r->status = BENCH_FAILED;
            r->val_rel_l2 = v.rel_l2;
            r->val_worst = v.worst;
            bench_row_note(r, "validation: %s", v.message);
        } else {
            r->val_rel_l2 = v.rel_l2;
            r->val_worst = v.worst;
        }
    }
    if (s == CONVND_OK) bench_reference_free(&ref);
}

/* Phase 2: the validated candidates on the full (timed) problem. */
static void time_all(const convnd_problem *p, const bench_candidate *cands, int32_t n,
                     const bench_config *cfg, bench_row *rows) {
    int32_t any = 0;
    for (int32_t i = 0; i < n; ++i)
        any |= rows[i].status == BENCH_OK;
    if (!any) return;
    bench_buffers b;
    char err[512];
    const convnd_status bs = bench_buffers_make(p, cfg->l2_bytes, cfg->max_sets,
                                                cfg->seed ^ 0x5bd1e995u, &b, err, sizeof err);
    for (int32_t i = 0; i < n; ++i) {
        bench_row *r = &rows[i];
        if (r->status != BENCH_OK) continue;
        if (bs != CONVND_OK) {
            r->status = BENCH_ERROR;
            bench_row_note(r, "%s", err);
            continue;
        }
        bench_instance in;
        char why[256];
        convnd_status s =
            bench_instance_prepare(&in, &cands[i], p, b.x[0], b.w[0], b.y, why, sizeof why);
        snprintf(r->plan, sizeof r->plan, "%s", in.plan);
        bench_row_note(r, "%s", in.note);
        r->workspace_bytes = in.workspace_bytes;
        if (s == CONVND_ERR_UNSUPPORTED) {
            r->status = BENCH_SKIPPED;
            bench_row_note(r, "full problem: %s", why);
        } else if (s != CONVND_OK) {
            r->status = BENCH_ERROR;
            bench_row_note(r, "prepare: %s", why[0] ? why : convnd_last_error());
        } else {
            bench_timing t;
            const double t0 = bench_now_ms();
            s = bench_time(&in, &b, &cfg->timing, &t);
            if (cfg->log)
                fprintf(cfg->log, "  %-28s timed in %6.2f s (%d runs)\n", cands[i].label,
                        (bench_now_ms() - t0) * 1e-3, (int)t.reps);
            if (s != CONVND_OK) {
                r->status = BENCH_ERROR;
                bench_row_note(r, "run: %s: %s", convnd_status_string(s), convnd_last_error());
            } else {
                r->median_ms = t.median_ms;
                r->min_ms = t.min_ms;
                r->max_ms = t.max_ms;
                r->reps = t.reps;
                r->sets = b.sets;
            }
        }
        bench_instance_release(&in);
    }
    if (bs == CONVND_OK) bench_buffers_free(&b);
}

void bench_finish_rows(bench_row *rows, int32_t n, const bench_config *cfg) {
    double best_peer = NAN, base = NAN;
    for (int32_t i = 0; i < n; ++i) {
        bench_row *r = &rows[i];
        if (r->status != BENCH_OK || !(r->median_ms > 0.0)) continue;
        if (r->is_peer && (isnan(best_peer) || r->median_ms < best_peer)) best_peer = r->median_ms;
        if (cfg->baseline && strcmp(r->series, cfg->baseline) == 0) base = r->median_ms;
    }
    for (int32_t i = 0; i < n; ++i) {
        bench_row *r = &rows[i];
        if (r->status != BENCH_OK || !(r->median_ms > 0.0)) continue;
        const double s = r->median_ms * 1e-3;
        r->tflops = r->flops / s / 1e12;
        r->gbps = r->bytes / s / 1e9;
        if (cfg->ceilings.measured) {
            r->pct_compute = 100.0 * r->tflops / bench_compute_ceiling(&cfg->ceilings, r->dtype);
            r->pct_bandwidth = 100.0 * r->gbps / cfg->ceilings.copy_gbps;
        }
        r->vs_best_peer = best_peer / r->median_ms;
        r->vs_baseline = base / r->median_ms;
    }
}

void bench_run_problem(const bench_problem *bp, const bench_candidate *cands, int32_t n,
                       const bench_config *cfg, bench_row *rows) {
    convnd_problem p;
    const convnd_status s = bench_timed_problem(bp, cfg, &p);
    for (int32_t i = 0; i < n; ++i)
        row_for(&rows[i], bp, s == CONVND_OK ? &p : &bp->p, &cands[i], cfg);
    if (s != CONVND_OK) {
        for (int32_t i = 0; i < n; ++i) {
            rows[i].status = BENCH_ERROR;
            snprintf(rows[i].note, sizeof rows[i].note, "reduction: %s", convnd_last_error());
        }
        return;
    }
    if (cfg->log) {
        char def[384];
        bench_problem timed = *bp;
        timed.p = p;
        fprintf(cfg->log, "convnd-bench: %s (%s)\n", bp->name,
                bench_format_row(&timed, def, sizeof def));
        fflush(cfg->log);
    }
    validate_all(bp, &p, cands, n, cfg, rows);
    time_all(&p, cands, n, cfg, rows);
    bench_finish_rows(rows, n, cfg);
}
