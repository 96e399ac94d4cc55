/* The schedule table and the public listing API (convnd.h "schedules"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "error.h"

/* Planner priority order: the planner takes the first (schedule, config) that supports the
 * problem and is worth routing (schedules/planner.c documents the heuristic). Specialised
 * schedules go above; the universal direct schedule stays last, as the fallback. */
const convnd_schedule *const convnd_schedule_table[] = {
    &convnd_schedule_depthwise,    /* groups == C_in (the implicit GEMM declines them) */
    &convnd_schedule_grouped,      /* few channels per group */
    &convnd_schedule_tiled_direct, /* stems: C_in <= 8 */
    &convnd_schedule_igemm_tc,
    &convnd_schedule_igemm_simt,
    &convnd_schedule_convT_tc, /* transposed: phase-decomposed implicit GEMM */
    &convnd_schedule_convT_simt,
    &convnd_schedule_wgrad_splitk,  /* wgrad: few dw elements, long reduction */
    &convnd_schedule_wgrad_direct,  /* wgrad: the fallback */
    &convnd_schedule_cublas_im2col, /* never worth routing: a reference, forced only */
    &convnd_schedule_direct,
};
const int32_t convnd_schedule_table_size =
    (int32_t)(sizeof(convnd_schedule_table) / sizeof(convnd_schedule_table[0]));

int32_t convnd_schedule_find(const char *name, size_t name_len) {
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const char *n = convnd_schedule_table[i]->name;
        if (strlen(n) == name_len && strncmp(n, name, name_len) == 0) return i;
    }
    return -1;
}

int32_t convnd_schedule_find_config(const convnd_schedule *s, const char *config) {
    for (int32_t c = 0; c < s->num_configs; ++c)
        if (strcmp(s->config_names[c], config) == 0) return c;
    /* a decimal index, digits only */
    if (config[0] == '\0' || strspn(config, "0123456789") != strlen(config)) return -1;
    char *end = NULL;
    const long c = strtol(config, &end, 10);
    return c >= 0 && c < s->num_configs ? (int32_t)c : -1;
}

/* Appends `item` to buf with a ", " separator, truncating safely. */
static void append_item(char *buf, size_t buf_len, const char *item) {
    const size_t used = strlen(buf);
    if (used + 1 >= buf_len) return;
    snprintf(buf + used, buf_len - used, "%s%s", used ? ", " : "", item);
}

void convnd_schedule_list_names(char *buf, size_t buf_len) {
    if (!buf || buf_len == 0) return;
    buf[0] = '\0';
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i)
        append_item(buf, buf_len, convnd_schedule_table[i]->name);
}

void convnd_schedule_list_configs(const convnd_schedule *s, char *buf, size_t buf_len) {
    if (!buf || buf_len == 0) return;
    buf[0] = '\0';
    for (int32_t c = 0; c < s->num_configs; ++c)
        append_item(buf, buf_len, s->config_names[c]);
}

void convnd_problem_resolve_layout(const convnd_problem *p, convnd_problem *out) {
    *out = *p;
    if (out->y_layout == CONVND_LAYOUT_AUTO)
        out->y_layout = convnd_default_output_layout(p->x_layout, p->w_layout);
}

/* ---- public listing API ---------------------------------------------------------------------- */

int32_t convnd_schedule_count(void) {
    return convnd_schedule_table_size;
}

const char *convnd_schedule_name(int32_t i) {
    return i >= 0 && i < convnd_schedule_table_size ? convnd_schedule_table[i]->name : NULL;
}

int32_t convnd_schedule_config_count(int32_t i) {
    return i >= 0 && i < convnd_schedule_table_size ? convnd_schedule_table[i]->num_configs : 0;
}

const char *convnd_schedule_config_name(int32_t i, int32_t config) {
    if (i < 0 || i >= convnd_schedule_table_size) return NULL;
    const convnd_schedule *s = convnd_schedule_table[i];
    return config >= 0 && config < s->num_configs ? s->config_names[config] : NULL;
}

/* Writes the reason (printf-style) and returns 0, "not supported". */
static int32_t unsupported(char *reason, size_t reason_len, const char *fmt, ...)
    CONVND_PRINTF(3, 4);
static int32_t unsupported(char *reason, size_t reason_len, const char *fmt, ...) {
    if (reason && reason_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, reason_len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int32_t convnd_schedule_supports(const char *schedule, const convnd_problem *p, char *reason,
                                 size_t reason_len) {
    if (reason && reason_len) reason[0] = '\0';
    if (!schedule || !p) return unsupported(reason, reason_len, "NULL schedule or problem");
    if (convnd_validate(p) != CONVND_OK)
        return unsupported(reason, reason_len, "invalid problem: %s", convnd_last_error());
    const char *colon = strchr(schedule, ':');
    const size_t name_len = colon ? (size_t)(colon - schedule) : strlen(schedule);
    const int32_t i = convnd_schedule_find(schedule, name_len);
    if (i < 0) return unsupported(reason, reason_len, "unknown schedule '%s'", schedule);
    const convnd_schedule *s = convnd_schedule_table[i];
    convnd_problem q;
    convnd_problem_resolve_layout(p, &q);
    /* schedules always get a real buffer, whatever the caller passed */
    char why[512] = "", other[512];
    int32_t ok = 0;
    if (colon) {
        const int32_t c = convnd_schedule_find_config(s, colon + 1);
        if (c < 0)
            return unsupported(reason, reason_len, "unknown configuration '%s' of schedule '%s'",
                               colon + 1, s->name);
        ok = s->supports(&q, c, why, sizeof why);
    } else {
        /* any configuration will do; when none does, report the first one's reason */
        for (int32_t c = 0; c < s->num_configs && !ok; ++c)
            ok = s->supports(&q, c, c == 0 ? why : other, c == 0 ? sizeof why : sizeof other);
    }
    if (ok) return 1;
    return unsupported(reason, reason_len, "%s", why);
}
