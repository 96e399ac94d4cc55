/* Autotune: time every (schedule, configuration) that supports a problem and cache the winner
 * per key (problem, device name, compute capability, SM count, library version). Only the
 * planner calls it; it sees the registry, never the planner. */
#ifndef CONVND_AUTOTUNE_H
#define CONVND_AUTOTUNE_H

#include <stddef.h>
#include <stdint.h>
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The buffers timed runs use: operands they read, a y they may overwrite (never the caller's),
 * the workspace candidates must fit in. All given by the caller: autotune allocates nothing. */
typedef struct convnd_tune_buffers {
    const void *x, *w, *bias, *z;
    void *y;
    void *workspace;
    size_t workspace_bytes;
    void *stream;
} convnd_tune_buffers;

/* The cache key of p on the active device: FNV-1a over every field that is read (per-dim arrays
 * up to dims), the device's name, compute capability and SM count, and CONVND_VERSION. */
uint64_t convnd_problem_key(const convnd_problem *p);

/* The cached winner for p (in memory, else in cache_file when not NULL, if it still supports p
 * with these params). 1 when found. */
int32_t convnd_autotune_lookup(const convnd_problem *p, const convnd_conv_params *params,
                               const char *cache_file, convnd_choice *out);

/* Times every candidate that fits b->workspace_bytes once after a warm-up, on device with b's
 * buffers, caches and returns the winner. CONVND_ERR_NO_SCHEDULE (message cleared) when no
 * candidate ran. */
convnd_status convnd_autotune(const convnd_problem *p, const convnd_conv_params *params,
                              convnd_device device, const convnd_tune_buffers *b,
                              const char *cache_file, convnd_choice *out);

/* Largest workspace among the candidates of p. */
size_t convnd_autotune_workspace(const convnd_problem *p, const convnd_conv_params *params);

/* How many times a timing loop has run in this process (tests: execute never tunes). */
uint64_t convnd_autotune_runs(void);

/* Test hook: 1 lets autotune time candidates on the emulated device (host clock; the numbers
 * say nothing about a GPU, the mechanism is what is tested). Default 0: ignored there. */
void convnd_autotune_allow_emulated(int32_t allow);
int32_t convnd_autotune_runs_on(convnd_device device);

#ifdef __cplusplus
}
#endif

#endif
