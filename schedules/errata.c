/* The errata file (schedules/errata.h, docs/errata.md): parsed when it changes, consulted by
 * convnd_schedule_supports_here for every candidate the planner, a forced schedule, autotune or
 * convnd_plan_explain asks about. */
#define _POSIX_C_SOURCE 200809L /* stat's st_mtim */
#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device_services.h"
#include "errata.h"
#include "error.h"
#include "problem_internal.h"
#include "refuse.h"
#include "registry.h"

#ifndef CONVND_VERSION
#define CONVND_VERSION "0"
#endif

enum { ERRATA_MAX_BYTES = 1 << 20, ERRATA_PATH_LEN = 1024, ERRATA_TEXT_LEN = 256 };

/* One "exclude" line. A field left out matches anything: list fields as bit sets (0 = any),
 * numbers as -1, strings as "". */
typedef struct errata_entry {
    int32_t schedule, config; /* config -1: every configuration of the schedule */
    uint32_t dtypes;          /* bit 1 << errata_dtype */
    uint32_t layouts;         /* bit 1 << convnd_layout (x's) */
    uint32_t modes;           /* bit 1 << convnd_mode */
    char device[ERRATA_TEXT_LEN];
    int32_t device_prefix; /* the name ended in '*' */
    int32_t cc;            /* major * 10 + minor */
    int32_t sms, driver;
    char version[32];
    int32_t line;
    char why[ERRATA_TEXT_LEN]; /* the line's comment */
} errata_entry;

/* f32 problems that allow TF32 math are their own class: their kernels differ */
enum { ERRATA_F32, ERRATA_TF32, ERRATA_F16, ERRATA_BF16, ERRATA_DTYPES };
static const char *const dtype_names[ERRATA_DTYPES] = {"f32", "tf32", "f16", "bf16"};

typedef struct errata_table {
    char path[ERRATA_PATH_LEN];
    int found; /* the file existed when read */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    convnd_status status; /* of parsing it: an error is returned until the file changes */
    char error[ERRATA_PATH_LEN + 512];
    errata_entry *entries;
    int32_t count;
} errata_table;

static pthread_mutex_t errata_lock = PTHREAD_MUTEX_INITIALIZER;
static errata_table current; /* read under errata_lock */
static int have_current;

convnd_status convnd_errata_path(char *buf, size_t len) {
    if (!buf || !len) return convnd_error(CONVND_ERR_NULL_POINTER, "buf is NULL or len=0");
    const char *env = getenv("CONVND_ERRATA");
    int n;
    if (env && !strcmp(env, "off"))
        n = snprintf(buf, len, "%s", "");
    else if (env && env[0])
        n = snprintf(buf, len, "%s", env);
    else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0])
        n = snprintf(buf, len, "%s/convnd/errata", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME") && getenv("HOME")[0])
        n = snprintf(buf, len, "%s/.cache/convnd/errata", getenv("HOME"));
    else
        n = snprintf(buf, len, "%s", ""); /* nowhere to look: no errata */
    if (n < 0 || (size_t)n >= len)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "len=%zu is too small for the errata path (%d bytes)", len, n + 1);
    return CONVND_OK;
}

convnd_status convnd_errata_device_key(char *buf, size_t len) {
    if (!buf || !len) return convnd_error(CONVND_ERR_NULL_POINTER, "buf is NULL or len=0");
    const convnd_device_props *d = convnd_device_properties(convnd_active_device());
    const int n = snprintf(buf, len, "device=\"%s\" cc=%d.%d sms=%d driver=%d convnd=%s", d->name,
                           (int)d->cc_major, (int)d->cc_minor, (int)d->sm_count,
                           (int)d->driver_version, CONVND_VERSION);
    if (n < 0 || (size_t)n >= len)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "len=%zu is too small for the device key (%d bytes)", len, n + 1);
    return CONVND_OK;
}

/* ---- parsing ------------------------------------------------------------------------------- */

typedef struct line_parse {
    const char *path;
    int32_t line;
    char *error;
    size_t error_len;
} line_parse;

CONVND_PRINTF(2, 3)
static int bad(line_parse *lp, const char *fmt, ...) {
    char what[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(lp->error, lp->error_len, "errata %s:%d: %s (docs/errata.md)", lp->path, (int)lp->line,
             what);
    return 0;
}

/* The next token of *at: a word, or key="quoted text" whose quotes are dropped. 0 at the end
 * (or at a '#', the comment, which *comment then points to). */
static int next_token(char **at, char *tok, size_t tok_len, char **comment, line_parse *lp) {
    char *s = *at;
    while (*s == ' ' || *s == '\t')
        ++s;
    if (!*s || *s == '#') {
        *comment = *s == '#' ? s + 1 : NULL;
        return 0;
    }
    size_t n = 0;
    int quoted = 0;
    for (; *s && (quoted || (*s != ' ' && *s != '\t' && *s != '#')); ++s) {
        if (*s == '"') {
            quoted = !quoted;
            continue;
        }
        if (n + 1 >= tok_len) return bad(lp, "a token longer than %zu characters", tok_len - 1);
        tok[n++] = *s;
    }
    if (quoted) return bad(lp, "a quote is not closed");
    tok[n] = '\0';
    *at = s;
    return 1;
}

/* A comma-separated list of names (names[0..count)) as a bit set. */
static int parse_list(const char *key, const char *value, const char *const *names, int count,
                      uint32_t *bits, line_parse *lp) {
    *bits = 0;
    const char *at = value;
    while (*at) {
        const size_t len = strcspn(at, ",");
        int found = -1;
        for (int i = 0; i < count; ++i)
            if (names[i] && strlen(names[i]) == len && !strncmp(at, names[i], len)) found = i;
        if (found < 0) {
            char expected[128] = "";
            for (int i = 0; i < count; ++i)
                if (names[i])
                    snprintf(expected + strlen(expected), sizeof expected - strlen(expected),
                             "%s%s", expected[0] ? ", " : "", names[i]);
            return bad(lp, "%s=%.*s: expected a comma-separated list of %s", key, (int)len, at,
                       expected);
        }
        *bits |= 1u << found;
        at += len;
        if (*at == ',') ++at;
    }
    if (!*bits) return bad(lp, "%s= is empty", key);
    return 1;
}

static int parse_int(const char *key, const char *value, int32_t *out, line_parse *lp) {
    char *end = NULL;
    const long v = strtol(value, &end, 10);
    if (end == value || *end || v < 0 || v > INT32_MAX)
        return bad(lp, "%s=%s: expected a non-negative integer", key, value);
    *out = (int32_t)v;
    return 1;
}

static int parse_entry(char *text, errata_entry *e, int *is_entry, line_parse *lp) {
    memset(e, 0, sizeof *e);
    e->cc = e->sms = e->driver = -1;
    e->line = lp->line;
    char *at = text, *comment = NULL, tok[ERRATA_TEXT_LEN + 16];
    *is_entry = 0;
    if (!next_token(&at, tok, sizeof tok, &comment, lp)) return lp->error[0] == '\0';
    if (strcmp(tok, "exclude"))
        return bad(lp, "'%s': a line is 'exclude SCHEDULE[:CONFIG] [key=value ...] [# why]'", tok);
    if (!next_token(&at, tok, sizeof tok, &comment, lp))
        return lp->error[0] ? 0 : bad(lp, "'exclude' names no schedule");
    if (convnd_parse_spec(tok, &e->schedule, &e->config) != CONVND_OK) {
        bad(lp, "%s", convnd_last_error());
        convnd_clear_error();
        return 0;
    }
    /* the names problems print with (core/text_format.c) */
    const char *const layout_names[] = {convnd_layout_name(CONVND_CHANNELS_FIRST),
                                        convnd_layout_name(CONVND_CHANNELS_LAST)};
    const char *const mode_names[] = {convnd_mode_name(CONVND_FORWARD),
                                      convnd_mode_name(CONVND_TRANSPOSED),
                                      convnd_mode_name(CONVND_WGRAD)};
    while (next_token(&at, tok, sizeof tok, &comment, lp)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) return bad(lp, "'%s': expected key=value", tok);
        *eq = '\0';
        const char *key = tok, *value = eq + 1;
        if (!strcmp(key, "dtype")) {
            if (!parse_list(key, value, dtype_names, ERRATA_DTYPES, &e->dtypes, lp)) return 0;
        } else if (!strcmp(key, "layout")) {
            if (!parse_list(key, value, layout_names, 2, &e->layouts, lp)) return 0;
        } else if (!strcmp(key, "mode")) {
            if (!parse_list(key, value, mode_names, 3, &e->modes, lp)) return 0;
        } else if (!strcmp(key, "device")) {
            const size_t n = strlen(value);
            if (!n) return bad(lp, "device= is empty");
            e->device_prefix = value[n - 1] == '*';
            snprintf(e->device, sizeof e->device, "%.*s", (int)(n - (size_t)e->device_prefix),
                     value);
        } else if (!strcmp(key, "cc")) {
            int major, minor, used = 0;
            if (sscanf(value, "%d.%d%n", &major, &minor, &used) != 2 || value[used] || major < 0 ||
                minor < 0 || minor > 9)
                return bad(lp, "cc=%s: expected MAJOR.MINOR, e.g. cc=9.0", value);
            e->cc = major * 10 + minor;
        } else if (!strcmp(key, "sms")) {
            if (!parse_int(key, value, &e->sms, lp)) return 0;
        } else if (!strcmp(key, "driver")) {
            if (!parse_int(key, value, &e->driver, lp)) return 0;
        } else if (!strcmp(key, "convnd")) {
            if (!value[0] || strlen(value) >= sizeof e->version)
                return bad(lp, "convnd=%s: expected a version such as %s", value, CONVND_VERSION);
            snprintf(e->version, sizeof e->version, "%s", value);
        } else {
            return bad(lp,
                       "unknown key '%s' (expected dtype, layout, mode, device, cc, sms, "
                       "driver or convnd)",
                       key);
        }
    }
    if (lp->error[0]) return 0;
    if (comment) {
        while (*comment == ' ' || *comment == '\t')
            ++comment;
        snprintf(e->why, sizeof e->why, "%s", comment);
    }
    *is_entry = 1;
    return 1;
}

/* Parses the open file f into t (entries, status, error). */
static void parse_file(FILE *f, errata_table *t) {
    char line[2048];
    int32_t cap = 0;
    line_parse lp = {t->path, 0, t->error, sizeof t->error};
    t->error[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        ++lp.line;
        const size_t n = strlen(line);
        if (n && line[n - 1] != '\n' && !feof(f)) {
            bad(&lp, "a line longer than %zu characters", sizeof line - 2);
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        errata_entry e;
        int is_entry;
        if (!parse_entry(line, &e, &is_entry, &lp)) break;
        if (!is_entry) continue;
        if (t->count == cap) {
            cap = cap ? 2 * cap : 16;
            errata_entry *grown = realloc(t->entries, (size_t)cap * sizeof *grown);
            if (!grown) {
                bad(&lp, "out of memory");
                break;
            }
            t->entries = grown;
        }
        t->entries[t->count++] = e;
    }
    t->status = t->error[0] ? CONVND_ERR_INVALID_ARGUMENT : CONVND_OK;
}

static void table_free(errata_table *t) {
    free(t->entries);
    t->entries = NULL;
    t->count = 0;
}

convnd_status convnd_errata_refresh(void) {
    errata_table next;
    memset(&next, 0, sizeof next);
    convnd_status st = convnd_errata_path(next.path, sizeof next.path);
    if (st != CONVND_OK) return st;
    struct stat sb;
    next.found = next.path[0] && stat(next.path, &sb) == 0;
    if (next.found) {
        next.dev = sb.st_dev, next.ino = sb.st_ino, next.size = sb.st_size;
        next.mtime = sb.st_mtim;
    }
    pthread_mutex_lock(&errata_lock);
    const int same =
        have_current && !strcmp(current.path, next.path) && current.found == next.found &&
        (!next.found || (current.dev == next.dev && current.ino == next.ino &&
                         current.size == next.size && current.mtime.tv_sec == next.mtime.tv_sec &&
                         current.mtime.tv_nsec == next.mtime.tv_nsec));
    if (!same) {
        next.status = CONVND_OK;
        if (next.found) {
            FILE *f = NULL;
            if (!S_ISREG(sb.st_mode) || sb.st_size > ERRATA_MAX_BYTES)
                snprintf(next.error, sizeof next.error,
                         "errata %s: not a regular file of at most %d bytes", next.path,
                         ERRATA_MAX_BYTES);
            else if (!(f = fopen(next.path, "r")))
                snprintf(next.error, sizeof next.error, "errata %s: cannot be read", next.path);
            if (f) {
                parse_file(f, &next);
                fclose(f);
            } else {
                next.status = CONVND_ERR_INVALID_ARGUMENT;
            }
        }
        table_free(&current);
        current = next;
        have_current = 1;
    }
    st = current.status;
    char error[sizeof current.error];
    memcpy(error, current.error, sizeof error);
    pthread_mutex_unlock(&errata_lock);
    return st == CONVND_OK ? CONVND_OK : convnd_error(st, "%s", error);
}

convnd_status convnd_errata_check(void) {
    return convnd_errata_refresh();
}

/* ---- matching ------------------------------------------------------------------------------ */

static int device_matches(const errata_entry *e, const convnd_device_props *d) {
    if (e->device[0] && (e->device_prefix ? strncmp(d->name, e->device, strlen(e->device))
                                          : strcmp(d->name, e->device)))
        return 0;
    if (e->cc >= 0 && e->cc != d->cc_major * 10 + d->cc_minor) return 0;
    if (e->sms >= 0 && e->sms != d->sm_count) return 0;
    if (e->driver >= 0 && e->driver != d->driver_version) return 0;
    return !e->version[0] || !strcmp(e->version, CONVND_VERSION);
}

static int problem_matches(const errata_entry *e, const convnd_problem *p) {
    const int dtype = p->dtype == CONVND_F16              ? ERRATA_F16
                      : p->dtype == CONVND_BF16           ? ERRATA_BF16
                      : p->math == CONVND_MATH_ALLOW_TF32 ? ERRATA_TF32
                                                          : ERRATA_F32;
    if (e->dtypes && !(e->dtypes & (1u << dtype))) return 0;
    if (e->layouts && !(e->layouts & (1u << p->x_layout))) return 0;
    return !e->modes || (e->modes & (1u << p->mode));
}

int32_t convnd_errata_excludes(const convnd_schedule *s, int32_t config, const convnd_problem *p,
                               char *reason, size_t reason_len) {
    const convnd_device_props *d = convnd_device_properties(convnd_active_device());
    int32_t hit = 0;
    pthread_mutex_lock(&errata_lock);
    for (int32_t i = 0; have_current && i < current.count && !hit; ++i) {
        const errata_entry *e = &current.entries[i];
        if (convnd_schedule_table[e->schedule] != s || (e->config >= 0 && e->config != config) ||
            !device_matches(e, d) || !problem_matches(e, p))
            continue;
        hit = 1;
        convnd_refuse(reason, reason_len, "excluded by errata (%s:%d)%s%s", current.path,
                      (int)e->line, e->why[0] ? ": " : "", e->why);
    }
    pthread_mutex_unlock(&errata_lock);
    return hit;
}
