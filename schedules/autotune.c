/* Autotune: time every supporting (schedule, configuration) once and cache the winner per key
 * (autotune.h), in memory (process-wide, mutex-protected) and, when the caller gives one, in a
 * text file of lines "<key as 16 hex digits> <schedule>:<config>" (later lines win). Like cuDNN's
 * benchmark mode. It runs only when the planner asks, at plan creation (or in conv_nd, which
 * makes a plan per call), on buffers the caller gave; timing is the device layer's. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "autotune.h"
#include "device_services.h"
#include "error.h"

#ifndef CONVND_VERSION
#define CONVND_VERSION "unversioned"
#endif

/* ---- problem key: FNV-1a over every field that is read ------------------------------------ */

static uint64_t fnv_mix(uint64_t h, uint64_t v) {
    for (int b = 0; b < 8; ++b) {
        h ^= (v >> (8 * b)) & 0xffu;
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t fnv_text(uint64_t h, const char *text) {
    for (; *text; ++text)
        h = fnv_mix(h, (uint64_t)(unsigned char)*text);
    return h;
}

static uint64_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint64_t convnd_problem_key(const convnd_problem *p) {
    uint64_t h = 0xcbf29ce484222325ull;
    const int64_t scalars[] = {p->dims,     p->mode,  p->N,          p->C_in,     p->C_out,
                               p->groups,   p->dtype, p->x_layout,   p->w_layout, p->y_layout,
                               p->has_bias, p->has_z, p->activation, p->math};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; ++i)
        h = fnv_mix(h, (uint64_t)scalars[i]);
    for (int32_t t = 0; t < p->dims && t < CONVND_MAX_DIMS; ++t) {
        h = fnv_mix(h, (uint64_t)p->input[t]);
        h = fnv_mix(h, (uint64_t)p->kernel[t]);
        h = fnv_mix(h, (uint64_t)p->stride[t]);
        h = fnv_mix(h, (uint64_t)p->dilation[t]);
        h = fnv_mix(h, (uint64_t)p->pad_before[t]);
        h = fnv_mix(h, (uint64_t)p->pad_after[t]);
    }
    h = fnv_mix(h, float_bits(p->alpha));
    h = fnv_mix(h, float_bits(p->beta));
    /* a winner on one device or library version says nothing about another */
    const convnd_device_props *d = convnd_device_properties(convnd_active_device());
    h = fnv_text(h, d->name);
    h = fnv_mix(h, (uint64_t)(d->cc_major * 10 + d->cc_minor));
    h = fnv_mix(h, (uint64_t)d->sm_count);
    return fnv_text(h, CONVND_VERSION);
}

/* ---- the in-memory cache -------------------------------------------------------------------- */

typedef struct cache_entry {
    uint64_t key;
    convnd_choice plan;
} cache_entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *cache_entries;
static size_t cache_count, cache_capacity;

/* Callers hold cache_lock. */
static int32_t cache_find(uint64_t key, convnd_choice *out) {
    for (size_t i = 0; i < cache_count; ++i)
        if (cache_entries[i].key == key) {
            *out = cache_entries[i].plan;
            return 1;
        }
    return 0;
}

static void cache_put(uint64_t key, convnd_choice plan) {
    for (size_t i = 0; i < cache_count; ++i)
        if (cache_entries[i].key == key) {
            cache_entries[i].plan = plan;
            return;
        }
    if (cache_count == cache_capacity) {
        const size_t cap = cache_capacity ? 2 * cache_capacity : 64;
        cache_entry *grown = realloc(cache_entries, cap * sizeof *grown);
        if (!grown) return; /* a cache that cannot grow only costs a re-tune */
        cache_entries = grown;
        cache_capacity = cap;
    }
    cache_entries[cache_count++] = (cache_entry){key, plan};
}

/* ---- the file ----------------------------------------------------------------------------- */

/* The cache file is read and written under the cache lock, so it must never block: only a
 * regular file is used (a FIFO or a device such as /dev/zero is ignored), opened non-blocking,
 * and one past this size is neither read nor grown. */
#define CACHE_FILE_MAX_BYTES (1 << 20)

static FILE *open_cache_file(const char *path, int append) {
    const int flags = append ? O_WRONLY | O_APPEND | O_CREAT : O_RDONLY;
    const int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CACHE_FILE_MAX_BYTES) {
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, append ? "a" : "r");
    if (!f) close(fd);
    return f;
}

/* The last line for key in the file whose plan names a registered schedule and config that
 * still support p (a stale or edited file is ignored rather than trusted). */
static int32_t file_find(const char *path, uint64_t key, const convnd_problem *p,
                         const convnd_conv_params *params, convnd_choice *out) {
    FILE *f = open_cache_file(path, 0);
    if (!f) return 0;
    char line[512];
    int32_t found = 0;
    while (fgets(line, sizeof line, f)) {
        uint64_t k;
        char spec[256];
        if (sscanf(line, "%" SCNx64 " %255s", &k, spec) != 2 || k != key) continue;
        int32_t i, c;
        if (convnd_parse_spec(spec, &i, &c) != CONVND_OK || c < 0) {
            convnd_clear_error();
            continue;
        }
        const convnd_schedule *s = convnd_schedule_table[i];
        char reason[256];
        if (!convnd_schedule_supports_here(s, p, params, c, reason, sizeof reason)) continue;
        *out = (convnd_choice){i, c};
        found = 1;
    }
    fclose(f);
    return found;
}

static void file_append(const char *path, uint64_t key, convnd_choice plan) {
    FILE *f = open_cache_file(path, 1);
    if (!f) return; /* an unwritable cache file only costs a re-tune next process */
    fprintf(f, "%016" PRIx64 " %s:%s\n", key, convnd_schedule_table[plan.schedule]->name,
            convnd_schedule_table[plan.schedule]->config_names[plan.config]);
    fclose(f);
}

int32_t convnd_autotune_lookup(const convnd_problem *p, const convnd_conv_params *params,
                               const char *cache_file, convnd_choice *out) {
    const uint64_t key = convnd_problem_key(p);
    pthread_mutex_lock(&cache_lock);
    int32_t found = cache_find(key, out);
    if (!found && cache_file && file_find(cache_file, key, p, params, out)) {
        cache_put(key, *out);
        found = 1;
    }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

static void remember(const convnd_problem *p, const char *cache_file, convnd_choice plan) {
    const uint64_t key = convnd_problem_key(p);
    pthread_mutex_lock(&cache_lock);
    cache_put(key, plan);
    if (cache_file) file_append(cache_file, key, plan);
    pthread_mutex_unlock(&cache_lock);
}

typedef struct most_workspace {
    const convnd_conv_params *params;
    size_t most;
} most_workspace;

static int32_t widen(convnd_choice c, void *ctx) {
    most_workspace *m = ctx;
    const size_t need = convnd_choice_workspace(m->params, c);
    if (need > m->most) m->most = need;
    return 0;
}

size_t convnd_autotune_workspace(const convnd_problem *p, const convnd_conv_params *params) {
    most_workspace m = {params, 0};
    convnd_for_each_candidate(p, params, -1, widen, &m, NULL, 0);
    return m.most;
}

/* ---- timing ---------------------------------------------------------------------------------- */

static int32_t allow_emulated;
static uint64_t runs;

void convnd_autotune_allow_emulated(int32_t allow) {
    __atomic_store_n(&allow_emulated, allow, __ATOMIC_RELAXED);
}

int32_t convnd_autotune_runs_on(convnd_device device) {
    return device == CONVND_DEVICE_GPU || __atomic_load_n(&allow_emulated, __ATOMIC_RELAXED);
}

uint64_t convnd_autotune_runs(void) {
    return __atomic_load_n(&runs, __ATOMIC_RELAXED);
}

typedef struct timing {
    convnd_launch_args a;
    const convnd_schedule *schedule;
    convnd_choice best;
    float best_ms;
} timing;

static convnd_status launch_once(void *ctx) {
    timing *t = ctx;
    return t->schedule->launch(&t->a);
}

static int32_t time_one(convnd_choice c, void *ctx) {
    timing *t = ctx;
    if (convnd_choice_workspace(&t->a.params, c) > t->a.workspace_bytes) return 0;
    t->schedule = convnd_schedule_table[c.schedule];
    t->a.config = c.config;
    float ms = 0.0f;
    if (convnd_device_time(t->a.device, t->a.stream, launch_once, t, &ms) != CONVND_OK)
        return 0; /* a failed candidate is skipped */
    if (t->best.schedule < 0 || ms < t->best_ms) {
        t->best = c;
        t->best_ms = ms;
    }
    return 0;
}

convnd_status convnd_autotune(const convnd_problem *p, const convnd_conv_params *params,
                              convnd_device device, const convnd_tune_buffers *b,
                              const char *cache_file, convnd_choice *out) {
    __atomic_add_fetch(&runs, 1, __ATOMIC_RELAXED);
    timing t;
    memset(&t, 0, sizeof t);
    t.a.params = *params;
    t.a.x = b->x;
    t.a.w = b->w;
    t.a.bias = p->has_bias ? b->bias : NULL;
    t.a.z = p->has_z ? b->z : NULL;
    t.a.y = b->y; /* never the caller's y: a candidate failing midway cannot touch it */
    t.a.workspace = b->workspace;
    t.a.workspace_bytes = b->workspace ? b->workspace_bytes : 0;
    t.a.stream = b->stream;
    t.a.device = device;
    t.best = (convnd_choice){-1, -1};
    convnd_for_each_candidate(p, params, -1, time_one, &t, NULL, 0);
    convnd_clear_error(); /* failed candidates are skipped, not reported */
    if (t.best.schedule < 0) return CONVND_ERR_NO_SCHEDULE;
    remember(p, cache_file, t.best);
    *out = t.best;
    return CONVND_OK;
}
