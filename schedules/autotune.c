/* Autotune: time every supporting (schedule, configuration) once on the GPU and cache the
 * winner per problem key, in memory (process-wide, mutex-protected) and, when the caller gives
 * one, in a text file of lines "<key as 16 hex digits> <schedule>:<config>" (later lines win).
 * Like cuDNN's benchmark mode. On the emulated device conv_nd never calls this (see planner.c). */
#define _GNU_SOURCE /* O_CLOEXEC */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "registry.h"
#include "error.h"

#ifdef CONVND_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---- problem key: FNV-1a over every field that is read ------------------------------------ */

static uint64_t fnv_mix(uint64_t h, uint64_t v) {
    for (int b = 0; b < 8; ++b) {
        h ^= (v >> (8 * b)) & 0xffu;
        h *= 0x100000001b3ull;
    }
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
    return fnv_mix(h, float_bits(p->beta));
}

/* ---- the in-memory cache -------------------------------------------------------------------- */

typedef struct cache_entry {
    uint64_t key;
    convnd_plan plan;
} cache_entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry *cache_entries;
static size_t cache_count, cache_capacity;

/* Callers hold cache_lock. */
static int32_t cache_find(uint64_t key, convnd_plan *out) {
    for (size_t i = 0; i < cache_count; ++i)
        if (cache_entries[i].key == key) {
            *out = cache_entries[i].plan;
            return 1;
        }
    return 0;
}

static void cache_put(uint64_t key, convnd_plan plan) {
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
                         convnd_plan *out) {
    FILE *f = open_cache_file(path, 0);
    if (!f) return 0;
    char line[512];
    int32_t found = 0;
    while (fgets(line, sizeof line, f)) {
        uint64_t k;
        char spec[256];
        if (sscanf(line, "%" SCNx64 " %255s", &k, spec) != 2 || k != key) continue;
        char *colon = strchr(spec, ':');
        if (!colon) continue;
        const int32_t i = convnd_schedule_find(spec, (size_t)(colon - spec));
        if (i < 0) continue;
        const convnd_schedule *s = convnd_schedule_table[i];
        const int32_t c = convnd_schedule_find_config(s, colon + 1);
        char reason[256];
        if (c < 0 || !s->supports(p, c, reason, sizeof reason)) continue;
        *out = (convnd_plan){i, c};
        found = 1;
    }
    fclose(f);
    return found;
}

static void file_append(const char *path, uint64_t key, convnd_plan plan) {
    FILE *f = open_cache_file(path, 1);
    if (!f) return; /* an unwritable cache file only costs a re-tune next process */
    fprintf(f, "%016" PRIx64 " %s:%s\n", key, convnd_plan_schedule_name(plan),
            convnd_plan_config_name(plan));
    fclose(f);
}

int32_t convnd_autotune_lookup(const convnd_problem *p, const char *cache_file, convnd_plan *out) {
    const uint64_t key = convnd_problem_key(p);
    pthread_mutex_lock(&cache_lock);
    int32_t found = cache_find(key, out);
    if (!found && cache_file && file_find(cache_file, key, p, out)) {
        cache_put(key, *out);
        found = 1;
    }
    pthread_mutex_unlock(&cache_lock);
    return found;
}

static void remember(const convnd_problem *p, const char *cache_file, convnd_plan plan) {
    const uint64_t key = convnd_problem_key(p);
    pthread_mutex_lock(&cache_lock);
    cache_put(key, plan);
    if (cache_file) file_append(cache_file, key, plan);
    pthread_mutex_unlock(&cache_lock);
}

size_t convnd_autotune_workspace(const convnd_problem *p) {
    size_t most = 0;
    char reason[512];
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            if (!s->supports(p, c, reason, sizeof reason)) continue;
            const size_t need = convnd_plan_workspace(p, (convnd_plan){i, c});
            if (need > most) most = need;
        }
    }
    return most;
}

/* ---- timing ---------------------------------------------------------------------------------- */

#ifdef CONVND_HAVE_CUDA
/* Milliseconds of one launch of plan after a warm-up one; negative when it fails. */
static float time_candidate(const convnd_launch_args *base, convnd_plan plan) {
    convnd_launch_args a = *base;
    a.config = plan.config;
    const convnd_schedule *s = convnd_schedule_table[plan.schedule];
    cudaStream_t stream = (cudaStream_t)base->stream;
    cudaEvent_t start, stop;
    if (cudaEventCreate(&start) != cudaSuccess) return -1.0f;
    if (cudaEventCreate(&stop) != cudaSuccess) {
        cudaEventDestroy(start);
        return -1.0f;
    }
    float ms = -1.0f;
    const int ok = s->launch(&a) == CONVND_OK && /* warm-up */
                   cudaEventRecord(start, stream) == cudaSuccess && s->launch(&a) == CONVND_OK &&
                   cudaEventRecord(stop, stream) == cudaSuccess &&
                   cudaEventSynchronize(stop) == cudaSuccess &&
                   cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
    if (!ok) ms = -1.0f;
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}
#endif

convnd_status convnd_autotune(const convnd_launch_args *a, const char *cache_file,
                              convnd_plan *out) {
    const convnd_problem *p = a->problem;
    if (convnd_autotune_lookup(p, cache_file, out)) return CONVND_OK;
#ifdef CONVND_HAVE_CUDA
    if (a->device != CONVND_DEVICE_GPU) return convnd_plan_heuristic(p, out);
    /* The timed runs write a scratch y, never the caller's: a candidate that fails midway leaves
     * the caller's y untouched (conv_nd's contract), and with z == y every run reads the
     * caller's z unchanged. Without memory for it, the heuristic plans. */
    convnd_tensor_desc yd;
    void *scratch = NULL;
    if (convnd_tensor_describe(p, CONVND_Y, &yd) != CONVND_OK ||
        cudaMalloc(&scratch, yd.bytes > 0 ? (size_t)yd.bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        convnd_clear_error();
        return convnd_plan_heuristic(p, out);
    }
    convnd_launch_args timed = *a;
    timed.y = scratch;
    convnd_plan best = {-1, -1};
    float best_ms = 0.0f;
    char reason[512];
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs; ++c) {
            const convnd_plan plan = {i, c};
            if (!s->supports(p, c, reason, sizeof reason) ||
                convnd_plan_workspace(p, plan) > a->workspace_bytes)
                continue;
            const float ms = time_candidate(&timed, plan);
            if (ms >= 0.0f && (best.schedule < 0 || ms < best_ms)) {
                best = plan;
                best_ms = ms;
            }
        }
    }
    cudaFree(scratch);
    convnd_clear_error(); /* a failed candidate is skipped, not reported */
    if (best.schedule < 0) return convnd_plan_heuristic(p, out);
    remember(p, cache_file, best);
    *out = best;
    return CONVND_OK;
#else
    (void)remember;
    return convnd_plan_heuristic(p, out);
#endif
}
