/* The schedule table and the public listing API (convnd.h "schedules"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "errata.h"
#include "error.h"
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"

/* In planner priority order: registry.h's CONVND_SCHEDULES. */
#define CONVND_TABLE_ENTRY(name) &convnd_schedule_##name,
const convnd_schedule *const convnd_schedule_table[] = {CONVND_SCHEDULES(CONVND_TABLE_ENTRY)};
#undef CONVND_TABLE_ENTRY
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

size_t convnd_schedule_table_markdown(char *buf, size_t buf_len) {
    size_t n = 0;
    char row[1024];
    for (int32_t i = -2; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = i >= 0 ? convnd_schedule_table[i] : NULL;
        int len;
        if (i == -2)
            len = snprintf(row, sizeof row, "| schedule | source | what |\n");
        else if (i == -1)
            len = snprintf(row, sizeof row, "|---|---|---|\n");
        else {
            /* each of "a, b" in backticks */
            char files[512];
            size_t f = 0;
            for (const char *at = s->sources; *at && f + 4 < sizeof files;) {
                const char *comma = strstr(at, ", ");
                const size_t item = comma ? (size_t)(comma - at) : strlen(at);
                const int w =
                    snprintf(files + f, sizeof files - f, "%s`%.*s`", f ? ", " : "", (int)item, at);
                if (w < 0) return 0;
                f += (size_t)w < sizeof files - f ? (size_t)w : sizeof files - f - 1;
                at += item + (comma ? 2 : 0);
            }
            len = snprintf(row, sizeof row, "| `%s` | %s | %s |\n", s->name, files, s->summary);
        }
        if (len < 0) return 0;
        if (buf && n + (size_t)len < buf_len) memcpy(buf + n, row, (size_t)len + 1);
        n += (size_t)len;
    }
    return n;
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

/* A caller's string echoed in a message: its first 64 characters (then "..."), so that a huge
 * one cannot push the reason out of the message. */
#define ECHO_MAX 64
#define ECHO_FMT "%.*s%s"
#define ECHO_ARGS(str)                                                                             \
    (int)(strlen(str) > ECHO_MAX ? ECHO_MAX : strlen(str)), (str),                                 \
        (strlen(str) > ECHO_MAX ? "..." : "")

convnd_status convnd_parse_spec(const char *spec, int32_t *schedule, int32_t *config) {
    const char *colon = strchr(spec, ':');
    const size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const int32_t i = convnd_schedule_find(spec, name_len);
    if (i < 0) {
        char names[512];
        convnd_schedule_list_names(names, sizeof names);
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "schedule='" ECHO_FMT "': unknown schedule (valid: %s)",
                            ECHO_ARGS(spec), names);
    }
    const convnd_schedule *s = convnd_schedule_table[i];
    const int32_t c = colon ? convnd_schedule_find_config(s, colon + 1) : -1;
    if (colon && c < 0) {
        char configs[512];
        convnd_schedule_list_configs(s, configs, sizeof configs);
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "schedule='" ECHO_FMT "': unknown configuration '" ECHO_FMT
                            "' of '%s' (valid: %s, or an index 0..%d)",
                            ECHO_ARGS(spec), ECHO_ARGS(colon + 1), s->name, configs,
                            (int)s->num_configs - 1);
    }
    *schedule = i;
    *config = c;
    return CONVND_OK;
}

int32_t convnd_for_each_candidate(const convnd_problem *p, const convnd_conv_params *params,
                                  int32_t only_schedule, convnd_candidate_visit visit, void *ctx,
                                  char *first_reason, size_t first_reason_len) {
    int32_t first = 1;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        if (only_schedule >= 0 && i != only_schedule) continue;
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            /* only the first refusal's reason is kept: the others are not formatted at all */
            const int32_t keep = first && first_reason && first_reason_len;
            first = 0;
            if (!convnd_schedule_supports_here(s, p, params, c, keep ? first_reason : NULL,
                                               keep ? first_reason_len : 0))
                continue;
            const int32_t stop = visit((convnd_choice){i, c}, ctx);
            if (stop) return stop;
        }
    }
    return 0;
}

size_t convnd_choice_workspace(const convnd_conv_params *params, convnd_choice choice) {
    const convnd_schedule *s = convnd_schedule_table[choice.schedule];
    return s->workspace_size ? s->workspace_size(params, choice.config) : 0;
}

static int32_t stop_at_first(convnd_choice choice, void *ctx) {
    (void)choice;
    (void)ctx;
    return 1;
}

int32_t convnd_schedule_supports(const char *schedule, const convnd_problem *p, char *reason,
                                 size_t reason_len) {
    if (reason && reason_len) reason[0] = '\0';
    if (!schedule || !p) return convnd_refuse(reason, reason_len, "NULL schedule or problem");
    /* the public question takes any problem: validated here, once, like a plan's */
    convnd_resolved r;
    if (convnd_resolve(p, &r) != CONVND_OK)
        return convnd_refuse(reason, reason_len, "invalid problem: %s", convnd_last_error());
    int32_t i, c;
    if (convnd_errata_refresh() != CONVND_OK || convnd_parse_spec(schedule, &i, &c) != CONVND_OK) {
        convnd_refuse(reason, reason_len, "%s", convnd_last_error());
        convnd_clear_error();
        return 0;
    }
    /* schedules always get a real buffer, whatever the caller passed */
    char why[512] = "";
    const convnd_schedule *s = convnd_schedule_table[i];
    if (c >= 0 ? convnd_schedule_supports_here(s, &r.problem, &r.params, c, why, sizeof why)
               : convnd_for_each_candidate(&r.problem, &r.params, i, stop_at_first, NULL, why,
                                           sizeof why))
        return 1;
    /* any configuration would do; when none does, the first one's reason */
    return convnd_refuse(reason, reason_len, "%s", why);
}
