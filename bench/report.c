/* Table, CSV and JSON output (bench/report.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

const char *bench_status_name(bench_status s) {
    switch (s) {
    case BENCH_OK:
        return "ok";
    case BENCH_FAILED:
        return "FAILED";
    case BENCH_SKIPPED:
        return "skip";
    default:
        return "ERROR";
    }
}

void bench_row_note(bench_row *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

void bench_row_init(bench_row *r) {
    memset(r, 0, sizeof *r);
    r->status = BENCH_OK;
    r->val_rel_l2 = r->val_worst = NAN;
    r->median_ms = r->min_ms = r->max_ms = NAN;
    r->tflops = r->gbps = r->pct_compute = r->pct_bandwidth = NAN;
    r->vs_best_peer = r->vs_baseline = NAN;
}

const char *bench_row_display(const bench_row *r, char *buf, size_t len) {
    if (r->plan[0] && strcmp(r->candidate, "auto") == 0)
        snprintf(buf, len, "auto -> %s", r->plan);
    else
        snprintf(buf, len, "%s", r->candidate);
    return buf;
}

/* ---- the table ----------------------------------------------------------------------------- */

#define TABLE_FMT "%-22s %-8s %-30s %-6s %8s %10s %8s %8s %6s %6s %8s  %s\n"

void bench_print_header(FILE *f, const bench_meta *m) {
    fprintf(f, "convnd-bench on %s, %s%s%s\n", m->device, m->date, m->commit[0] ? ", commit " : "",
            m->commit);
    if (m->ceilings.measured)
        fprintf(f,
                "measured ceilings: device copy %.0f GB/s, bf16 GEMM %.0f TFLOP/s, f32 GEMM %.1f "
                "TFLOP/s; L2 %.0f MiB\n",
                m->ceilings.copy_gbps, m->ceilings.gemm_bf16_tflops, m->ceilings.gemm_f32_tflops,
                (double)m->l2_bytes / (1 << 20));
    if (m->emulated)
        fprintf(f, "EMULATED: every row ran on the emulated device (kernels on the CPU); timings "
                   "are CPU emulation timings, not GPU timings.\n");
    fprintf(f, TABLE_FMT, "problem", "device", "candidate", "status", "val.err", "median ms",
            "TFLOP/s", "GB/s", "%FLOP", "%BW", "vs peer", "plan / note");
}

/* "%.3g" of v, or "-" for NaN. */
static const char *num(char *buf, size_t len, const char *fmt, double v) {
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

void bench_print_row(FILE *f, const bench_row *r) {
    char disp[BENCH_LABEL_LEN + 16], e[32], ms[32], tf[32], gb[32], pc[32], pb[32], vp[32];
    char tail[sizeof r->plan + sizeof r->note + 8];
    if (r->status == BENCH_OK)
        snprintf(tail, sizeof tail, "%s%s%s", strcmp(r->candidate, "auto") == 0 ? "" : r->plan,
                 r->note[0] ? "; " : "", r->note);
    else
        snprintf(tail, sizeof tail, "%s", r->note);
    fprintf(f, TABLE_FMT, r->problem, r->device, bench_row_display(r, disp, sizeof disp),
            bench_status_name(r->status), num(e, sizeof e, "%.1e", r->val_rel_l2),
            num(ms, sizeof ms, "%.4g", r->median_ms), num(tf, sizeof tf, "%.3g", r->tflops),
            num(gb, sizeof gb, "%.4g", r->gbps), num(pc, sizeof pc, "%.1f%%", r->pct_compute),
            num(pb, sizeof pb, "%.1f%%", r->pct_bandwidth),
            num(vp, sizeof vp, "%.2fx", r->vs_best_peer), tail);
}

void bench_print_summary(FILE *f, const bench_row *rows, int32_t n, const bench_meta *m) {
    int32_t count[4] = {0, 0, 0, 0};
    for (int32_t i = 0; i < n; ++i)
        ++count[rows[i].status];
    fprintf(f,
            "\n%d rows: %d timed, %d FAILED validation, %d skipped (unsupported; reasons in "
            "results.csv, or --show-skipped), %d errors.\n",
            (int)n, (int)count[BENCH_OK], (int)count[BENCH_FAILED], (int)count[BENCH_SKIPPED],
            (int)count[BENCH_ERROR]);
    if (m->emulated)
        fprintf(f, "Note: EMULATED rows are CPU emulation timings, not GPU timings; they show "
                   "that every candidate runs and validates, not how fast it is on a GPU.\n");
    else if (m->ceilings.measured)
        fprintf(f, "%%FLOP and %%BW are of the ceilings measured above; 'vs peer' is the best "
                   "peer's time over this row's (> 1: faster than every peer).\n");
}

/* ---- CSV ------------------------------------------------------------------------------------ */

static void csv_text(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v) {
    if (isnan(v))
        fputs(",", f);
    else
        fprintf(f, ",%.6g", v);
}

int bench_write_csv(const char *path, const bench_row *rows, int32_t n, const bench_meta *m) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    fprintf(f, "problem,family,definition,device,candidate,series,plan,is_peer,status,flops,"
               "bytes,validated_on,val_rel_l2,val_worst,median_ms,min_ms,max_ms,reps,sets,"
               "workspace_bytes,tflops,gbps,pct_compute,pct_bandwidth,vs_best_peer,vs_baseline,"
               "note\n");
    for (int32_t i = 0; i < n; ++i) {
        const bench_row *r = &rows[i];
        csv_text(f, r->problem);
        fputc(',', f);
        csv_text(f, r->family);
        fputc(',', f);
        csv_text(f, r->definition);
        fprintf(f, ",%s,", r->device);
        csv_text(f, r->candidate);
        fputc(',', f);
        csv_text(f, r->series);
        fputc(',', f);
        csv_text(f, r->plan);
        fprintf(f, ",%d,%s,%.6g,%.6g,", (int)r->is_peer, bench_status_name(r->status), r->flops,
                r->bytes);
        csv_text(f, r->validated_on);
        csv_num(f, r->val_rel_l2);
        csv_num(f, r->val_worst);
        csv_num(f, r->median_ms);
        csv_num(f, r->min_ms);
        csv_num(f, r->max_ms);
        fprintf(f, ",%d,%d,%zu", (int)r->reps, (int)r->sets, r->workspace_bytes);
        csv_num(f, r->tflops);
        csv_num(f, r->gbps);
        csv_num(f, r->pct_compute);
        csv_num(f, r->pct_bandwidth);
        csv_num(f, r->vs_best_peer);
        csv_num(f, r->vs_baseline);
        fputc(',', f);
        csv_text(f, r->note);
        fputc('\n', f);
    }
    (void)m;
    const int ok = fclose(f) == 0;
    if (!ok) perror(path);
    return ok;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void json_text(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; ++s) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_key_text(FILE *f, const char *key, const char *v, int last) {
    fprintf(f, "\"%s\": ", key);
    json_text(f, v);
    fputs(last ? "" : ", ", f);
}

static void json_key_num(FILE *f, const char *key, double v, int last) {
    if (isnan(v) || isinf(v))
        fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
    else
        fprintf(f, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
}

int bench_write_json(const char *path, const bench_row *rows, int32_t n, const bench_meta *m) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    fputs("{\n  \"meta\": {", f);
    json_key_text(f, "device", m->device, 0);
    fprintf(f, "\"emulated\": %s, ", m->emulated ? "true" : "false");
    json_key_text(f, "date", m->date, 0);
    json_key_text(f, "commit", m->commit, 0);
    json_key_text(f, "baseline", m->baseline, 0);
    json_key_text(f, "host_blas", m->host_blas, 0);
    json_key_num(f, "l2_bytes", (double)m->l2_bytes, 0);
    fprintf(f, "\"small\": %s, \"seed\": %llu, ", m->small ? "true" : "false",
            (unsigned long long)m->seed);
    fprintf(f, "\"ceilings_measured\": %s, ", m->ceilings.measured ? "true" : "false");
    json_key_num(f, "copy_gbps", m->ceilings.measured ? m->ceilings.copy_gbps : NAN, 0);
    json_key_num(f, "gemm_bf16_tflops", m->ceilings.measured ? m->ceilings.gemm_bf16_tflops : NAN,
                 0);
    json_key_num(f, "gemm_f32_tflops", m->ceilings.measured ? m->ceilings.gemm_f32_tflops : NAN, 1);
    fputs("},\n  \"rows\": [\n", f);
    for (int32_t i = 0; i < n; ++i) {
        const bench_row *r = &rows[i];
        fputs("    {", f);
        json_key_text(f, "problem", r->problem, 0);
        json_key_text(f, "family", r->family, 0);
        json_key_text(f, "definition", r->definition, 0);
        json_key_text(f, "device", r->device, 0);
        json_key_text(f, "candidate", r->candidate, 0);
        json_key_text(f, "series", r->series, 0);
        json_key_text(f, "plan", r->plan, 0);
        fprintf(f, "\"is_peer\": %s, ", r->is_peer ? "true" : "false");
        json_key_text(f, "status", bench_status_name(r->status), 0);
        json_key_num(f, "flops", r->flops, 0);
        json_key_num(f, "bytes", r->bytes, 0);
        json_key_text(f, "validated_on", r->validated_on, 0);
        json_key_num(f, "val_rel_l2", r->val_rel_l2, 0);
        json_key_num(f, "val_worst", r->val_worst, 0);
        json_key_num(f, "median_ms", r->median_ms, 0);
        json_key_num(f, "min_ms", r->min_ms, 0);
        json_key_num(f, "max_ms", r->max_ms, 0);
        json_key_num(f, "reps", (double)r->reps, 0);
        json_key_num(f, "sets", (double)r->sets, 0);
        json_key_num(f, "workspace_bytes", (double)r->workspace_bytes, 0);
        json_key_num(f, "tflops", r->tflops, 0);
        json_key_num(f, "gbps", r->gbps, 0);
        json_key_num(f, "pct_compute", r->pct_compute, 0);
        json_key_num(f, "pct_bandwidth", r->pct_bandwidth, 0);
        json_key_num(f, "vs_best_peer", r->vs_best_peer, 0);
        json_key_num(f, "vs_baseline", r->vs_baseline, 0);
        json_key_text(f, "note", r->note, 1);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fputs("  ]\n}\n", f);
    const int ok = fclose(f) == 0;
    if (!ok) perror(path);
    return ok;
}

/* ---- Markdown ------------------------------------------------------------------------------- */

static const char *md_num(char *buf, size_t len, const char *fmt, double v) {
    return num(buf, len, fmt, v);
}

int bench_write_markdown(const char *path, const bench_row *rows, int32_t n, const bench_meta *m) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    fprintf(f, "### %s, %s%s%s\n\n", m->device, m->date, m->commit[0] ? ", commit " : "",
            m->commit);
    if (m->ceilings.measured)
        fprintf(f,
                "Measured ceilings: device copy %.0f GB/s, bf16 GEMM %.0f TFLOP/s, f32 GEMM "
                "%.1f TFLOP/s.\n\n",
                m->ceilings.copy_gbps, m->ceilings.gemm_bf16_tflops, m->ceilings.gemm_f32_tflops);
    if (m->emulated) fprintf(f, "EMULATED: CPU emulation timings, not GPU timings.\n\n");
    fprintf(f,
            "| problem | candidate | plan | median ms | TFLOP/s | GB/s | %%FLOP | %%BW | vs best "
            "peer |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    int32_t bad = 0;
    for (int32_t i = 0; i < n; ++i) {
        const bench_row *r = &rows[i];
        if (r->status == BENCH_FAILED || r->status == BENCH_ERROR) ++bad;
        if (r->status != BENCH_OK) continue;
        char disp[BENCH_LABEL_LEN + 16], a[32], b[32], c[32], d[32], e[32], g[32];
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->problem,
                bench_row_display(r, disp, sizeof disp), r->plan,
                md_num(a, sizeof a, "%.4g", r->median_ms), md_num(b, sizeof b, "%.3g", r->tflops),
                md_num(c, sizeof c, "%.4g", r->gbps), md_num(d, sizeof d, "%.1f%%", r->pct_compute),
                md_num(e, sizeof e, "%.1f%%", r->pct_bandwidth),
                md_num(g, sizeof g, "%.2fx", r->vs_best_peer));
    }
    if (bad) {
        fprintf(f, "\nFAILED or errored:\n\n");
        for (int32_t i = 0; i < n; ++i)
            if (rows[i].status == BENCH_FAILED || rows[i].status == BENCH_ERROR)
                fprintf(f, "- %s / %s: %s: %s\n", rows[i].problem, rows[i].candidate,
                        bench_status_name(rows[i].status), rows[i].note);
    }
    const int ok = fclose(f) == 0;
    if (!ok) perror(path);
    return ok;
}
