/* Candidate instances, the convnd kind (forced schedule or planner) and the candidate list
 * (bench/candidate.h). */
#include <stdio.h>
#include <string.h>

#include "candidate.h"

convnd_status bench_alloc(void **ptr, size_t bytes) {
    *ptr = NULL;
    if (bytes == 0) return CONVND_OK;
    return convnd_malloc(ptr, bytes);
}

void bench_free(void **ptr) {
    if (*ptr) convnd_free(*ptr);
    *ptr = NULL;
}

convnd_status bench_instance_prepare(bench_instance *in, const bench_candidate *c,
                                     const convnd_problem *p, const void *x, const void *w, void *y,
                                     char *why, size_t why_len) {
    memset(in, 0, sizeof *in);
    in->cand = c;
    in->problem = *p;
    in->inner = *p;
    if (why_len) why[0] = '\0';
    return c->ops->prepare(in, p, x, w, y, why, why_len);
}

convnd_status bench_instance_run(bench_instance *in, const void *x, const void *w, void *y,
                                 void *stream) {
    ++in->runs;
    return in->cand->ops->run(in, x, w, y, stream);
}

void bench_instance_release(bench_instance *in) {
    if (in->cand && in->cand->ops->release) in->cand->ops->release(in);
    bench_free(&in->workspace);
    bench_free(&in->scratch);
}

/* ---- convnd: a forced schedule, or the planner's choice ------------------------------------ */

static convnd_status convnd_prepare(bench_instance *in, const convnd_problem *p, const void *x,
                                    const void *w, void *y, char *why, size_t why_len) {
    (void)x, (void)w, (void)y;
    snprintf(in->inner_spec, sizeof in->inner_spec, "%s", in->cand->spec);
    const convnd_options opts = {.schedule = in->inner_spec[0] ? in->inner_spec : NULL};
    if (opts.schedule && !convnd_schedule_supports(opts.schedule, p, why, why_len))
        return CONVND_ERR_UNSUPPORTED;
    convnd_status s = convnd_plan_name(p, &opts, in->plan, sizeof in->plan);
    if (s == CONVND_OK) s = convnd_workspace_size(p, &opts, &in->workspace_bytes);
    if (s == CONVND_OK) s = bench_alloc(&in->workspace, in->workspace_bytes);
    if (s != CONVND_OK) snprintf(why, why_len, "%s", convnd_last_error());
    return s;
}

static convnd_status convnd_run(bench_instance *in, const void *x, const void *w, void *y,
                                void *stream) {
    const convnd_options opts = {.schedule = in->inner_spec[0] ? in->inner_spec : NULL};
    return conv_nd(&in->inner, x, w, NULL, NULL, y, in->workspace, in->workspace_bytes, stream,
                   &opts);
}

const bench_candidate_ops bench_convnd_ops = {convnd_prepare, convnd_run, NULL};

/* ---- the list ------------------------------------------------------------------------------ */

static int add(bench_candidate *out, int32_t cap, int32_t *count, const char *label,
               const char *spec, int32_t is_peer, const bench_candidate_ops *ops, char *err,
               size_t err_len) {
    if (*count >= cap) {
        snprintf(err, err_len, "more than %d candidates", (int)cap);
        return 0;
    }
    bench_candidate *c = &out[(*count)++];
    memset(c, 0, sizeof *c);
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->series, sizeof c->series, "%s", label);
    snprintf(c->spec, sizeof c->spec, "%s", spec);
    c->is_peer = is_peer;
    c->ops = ops;
    return 1;
}

/* cublas_im2col is a convnd schedule and, as the "cuBLAS alone" reference, a peer. */
static int32_t schedule_is_peer(const char *name) {
    return strcmp(name, "cublas_im2col") == 0;
}

static int32_t find_schedule(const char *name, size_t len) {
    for (int32_t i = 0; i < convnd_schedule_count(); ++i) {
        const char *n = convnd_schedule_name(i);
        if (strlen(n) == len && strncmp(n, name, len) == 0) return i;
    }
    return -1;
}

/* Adds schedule i: one row, or one per configuration. */
static int add_schedule(int32_t i, int32_t every_config, bench_candidate *out, int32_t cap,
                        int32_t *count, char *err, size_t err_len) {
    const char *name = convnd_schedule_name(i);
    if (!every_config)
        return add(out, cap, count, name, name, schedule_is_peer(name), &bench_convnd_ops, err,
                   err_len);
    for (int32_t c = 0; c < convnd_schedule_config_count(i); ++c) {
        char spec[BENCH_LABEL_LEN];
        snprintf(spec, sizeof spec, "%s:%s", name, convnd_schedule_config_name(i, c));
        if (!add(out, cap, count, spec, spec, schedule_is_peer(name), &bench_convnd_ops, err,
                 err_len))
            return 0;
    }
    return 1;
}

/* One "name" or "name:config" of --schedule. */
static int add_named(const char *item, size_t len, int32_t every_config, bench_candidate *out,
                     int32_t cap, int32_t *count, char *err, size_t err_len) {
    char spec[BENCH_LABEL_LEN];
    if (len == 0 || len >= sizeof spec) {
        snprintf(err, err_len, "--schedule: empty or overlong name '%.*s'", (int)len, item);
        return 0;
    }
    memcpy(spec, item, len);
    spec[len] = '\0';
    const char *colon = strchr(spec, ':');
    const int32_t i = find_schedule(spec, colon ? (size_t)(colon - spec) : len);
    if (i < 0) {
        snprintf(err, err_len, "--schedule: no schedule named '%.*s' (see --list)",
                 (int)(colon ? (size_t)(colon - spec) : len), spec);
        return 0;
    }
    if (!colon) return add_schedule(i, every_config, out, cap, count, err, err_len);
    for (int32_t c = 0; c < convnd_schedule_config_count(i); ++c)
        if (strcmp(convnd_schedule_config_name(i, c), colon + 1) == 0)
            return add(out, cap, count, spec, spec, schedule_is_peer(convnd_schedule_name(i)),
                       &bench_convnd_ops, err, err_len);
    snprintf(err, err_len, "--schedule: schedule '%s' has no configuration '%s' (see --list)",
             convnd_schedule_name(i), colon + 1);
    return 0;
}

int bench_candidates(const bench_selection *sel, bench_candidate *out, int32_t cap, int32_t *count,
                     char *err, size_t err_len) {
    *count = 0;
    if (sel->auto_row && !add(out, cap, count, "auto", "", 0, &bench_convnd_ops, err, err_len))
        return 0;
    if (sel->schedules) {
        for (const char *s = sel->schedules; *s;) {
            const char *comma = strchr(s, ',');
            const size_t len = comma ? (size_t)(comma - s) : strlen(s);
            if (!add_named(s, len, sel->every_config, out, cap, count, err, err_len)) return 0;
            s += len + (comma ? 1 : 0);
        }
    } else {
        for (int32_t i = 0; i < convnd_schedule_count(); ++i)
            if (!add_schedule(i, sel->every_config, out, cap, count, err, err_len)) return 0;
    }
    if (sel->peers) {
        if (!add(out, cap, count, "pad + conv", "", 1, &bench_pad_conv_ops, err, err_len)) return 0;
        if (bench_have_cudnn() && convnd_active_device() == CONVND_DEVICE_GPU &&
            !add(out, cap, count, "cuDNN", "", 1, &bench_cudnn_ops, err, err_len))
            return 0;
    }
    return 1;
}
