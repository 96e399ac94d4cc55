/* Grid execution on the emulated device: launch checks, the emulator settings (thread order,
 * seed, host threads), and the pool of host worker threads that run blocks in parallel.
 *
 * Nothing is created before the first launch: Criterion forks each test, and threads created in
 * the parent would not exist in the child. A fork handler forgets the pool in the child all the
 * same, so a process that launched before forking still works after. */
#define _GNU_SOURCE
#include "device_services.h"
#include "emu_internal.h"
#include "emu_fiber.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

/* ---- settings ----------------------------------------------------------------------------- */

#define MAX_HOST_THREADS 1024

static int order_set_by_api; /* else: CONVND_EMU_ORDER / CONVND_EMU_SEED */
static int order_value = CONVND_EMU_FORWARD;
static uint64_t seed_value;
static int copies_set_by_api; /* else: CONVND_EMU_COPIES / CONVND_EMU_SEED */
static int copies_value = CONVND_EMU_COPIES_LATE;
static uint64_t copy_seed_value;
static int32_t host_threads_value; /* 0: CONVND_EMU_THREADS or the number of cores */

void convnd_emu_set_order(convnd_emu_order order, uint64_t seed) {
    if (order != CONVND_EMU_REVERSE && order != CONVND_EMU_SHUFFLE &&
        order != CONVND_EMU_WARP_AHEAD)
        order = CONVND_EMU_FORWARD;
    __atomic_store_n(&seed_value, seed, __ATOMIC_RELAXED);
    __atomic_store_n(&order_value, (int)order, __ATOMIC_RELAXED);
    __atomic_store_n(&order_set_by_api, 1, __ATOMIC_RELEASE);
}

void convnd_emu_set_copies(convnd_emu_copies mode, uint64_t seed) {
    if (mode != CONVND_EMU_COPIES_EARLY && mode != CONVND_EMU_COPIES_MIXED)
        mode = CONVND_EMU_COPIES_LATE;
    __atomic_store_n(&copy_seed_value, seed, __ATOMIC_RELAXED);
    __atomic_store_n(&copies_value, (int)mode, __ATOMIC_RELAXED);
    __atomic_store_n(&copies_set_by_api, 1, __ATOMIC_RELEASE);
}

void convnd_emu_set_host_threads(int32_t n) {
    __atomic_store_n(&host_threads_value,
                     n > MAX_HOST_THREADS ? MAX_HOST_THREADS
                     : n > 0              ? n
                                          : 0,
                     __ATOMIC_RELAXED);
}

static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || *s == '-') return -1;
    *out = v;
    return 0;
}

static convnd_status read_copies(convnd_emu_copies *copies, uint64_t *seed) {
    if (__atomic_load_n(&copies_set_by_api, __ATOMIC_ACQUIRE)) {
        *copies = (convnd_emu_copies)__atomic_load_n(&copies_value, __ATOMIC_RELAXED);
        *seed = __atomic_load_n(&copy_seed_value, __ATOMIC_RELAXED);
        return CONVND_OK;
    }
    *copies = CONVND_EMU_COPIES_LATE;
    *seed = 0;
    const char *c = getenv("CONVND_EMU_COPIES");
    if (c && *c) {
        if (!strcmp(c, "late"))
            *copies = CONVND_EMU_COPIES_LATE;
        else if (!strcmp(c, "early"))
            *copies = CONVND_EMU_COPIES_EARLY;
        else if (!strcmp(c, "mixed"))
            *copies = CONVND_EMU_COPIES_MIXED;
        else
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "CONVND_EMU_COPIES=%s: expected late, early or mixed", c);
    }
    const char *s = getenv("CONVND_EMU_SEED");
    if (s && *s && parse_u64(s, seed) != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "CONVND_EMU_SEED=%s: expected an unsigned integer", s);
    return CONVND_OK;
}

static convnd_status read_settings(convnd_emu_settings *settings, int32_t *threads) {
    convnd_emu_order *order = &settings->order;
    uint64_t *seed = &settings->seed;
    if (__atomic_load_n(&order_set_by_api, __ATOMIC_ACQUIRE)) {
        *order = (convnd_emu_order)__atomic_load_n(&order_value, __ATOMIC_RELAXED);
        *seed = __atomic_load_n(&seed_value, __ATOMIC_RELAXED);
    } else {
        *order = CONVND_EMU_FORWARD;
        *seed = 0;
        const char *o = getenv("CONVND_EMU_ORDER");
        if (o && *o) {
            if (!strcmp(o, "forward"))
                *order = CONVND_EMU_FORWARD;
            else if (!strcmp(o, "reverse"))
                *order = CONVND_EMU_REVERSE;
            else if (!strcmp(o, "shuffle"))
                *order = CONVND_EMU_SHUFFLE;
            else if (!strcmp(o, "warp_ahead"))
                *order = CONVND_EMU_WARP_AHEAD;
            else
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "CONVND_EMU_ORDER=%s: expected forward, reverse, shuffle or "
                                    "warp_ahead",
                                    o);
        }
        const char *s = getenv("CONVND_EMU_SEED");
        if (s && *s && parse_u64(s, seed) != 0)
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "CONVND_EMU_SEED=%s: expected an unsigned integer", s);
    }
    const convnd_status st = read_copies(&settings->copies, &settings->copy_seed);
    if (st != CONVND_OK) return st;
    if (convnd_emu_fiber_stack_bytes() == 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "CONVND_EMU_STACK_KB=%s: expected a stack size in KiB in [16, %u]",
                            getenv("CONVND_EMU_STACK_KB"), CONVND_EMU_MAX_STACK_KB);
    *threads = __atomic_load_n(&host_threads_value, __ATOMIC_RELAXED);
    if (*threads == 0) {
        const char *t = getenv("CONVND_EMU_THREADS");
        uint64_t v;
        if (t && *t) {
            if (parse_u64(t, &v) != 0 || v < 1 || v > 1024)
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "CONVND_EMU_THREADS=%s: expected a count in [1, 1024]", t);
            *threads = (int32_t)v;
        } else {
            const long cores = sysconf(_SC_NPROCESSORS_ONLN);
            *threads = cores > 0 ? (int32_t)(cores < 1024 ? cores : 1024) : 1;
        }
    }
    return CONVND_OK;
}

int32_t convnd_emu_host_threads(void) {
    convnd_emu_settings settings;
    int32_t threads = 0;
    return read_settings(&settings, &threads) == CONVND_OK ? threads : -1;
}

/* ---- per-host-thread workers -------------------------------------------------------------- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t worker_key;
static __thread convnd_emu_worker *this_worker;

static void worker_destructor(void *w) {
    convnd_emu_worker_free(w);
}

convnd_emu_worker *convnd_emu_worker_get(void) {
    if (!this_worker) {
        this_worker = convnd_emu_worker_new();
        if (this_worker) pthread_setspecific(worker_key, this_worker); /* freed at thread exit */
    }
    return this_worker;
}

/* ---- the pool ----------------------------------------------------------------------------- */

typedef struct grid_job {
    const convnd_emu_launch *launch;
    uint64_t num_blocks, next;
    convnd_emu_settings settings;
    int32_t participants, prepared; /* host threads taking part; those done preparing */
    int failed;
    uint64_t failed_block;
    char message[1024];
} grid_job;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, done, prepared;
    int32_t created; /* helper threads that exist */
    uint64_t generation;
    grid_job *job;
    int32_t helpers; /* helper threads taking part in the current job */
    int32_t busy;    /* of those, still running */
} pool = {PTHREAD_MUTEX_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER,
          0,
          0,
          NULL,
          0,
          0};
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

/* "kernel NAME (launched by F at FILE:LINE)"; NAME is how the launch site spells the kernel,
 * left out when that is only a variable called `kernel` (F then names the instance). */
static void put_kernel(char *buf, size_t len, const convnd_emu_launch *l) {
    if (l->kernel && strcmp(l->kernel, "kernel") != 0)
        snprintf(buf, len, "kernel %s (launched by %s at %s:%d)", l->kernel, l->launcher, l->file,
                 l->line);
    else
        snprintf(buf, len, "kernel launched by %s at %s:%d", l->launcher, l->file, l->line);
}

/* block == UINT64_MAX: a failure before any block ran. */
static void record_failure(grid_job *j, uint64_t block, const char *detail) {
    pthread_mutex_lock(&pool.lock);
    if (!j->failed || block < j->failed_block) {
        const convnd_emu_launch *l = j->launch;
        const uint64_t gx = l->grid.x, gy = l->grid.y;
        char kernel[512];
        put_kernel(kernel, sizeof kernel, l);
        if (block == UINT64_MAX)
            snprintf(j->message, sizeof j->message,
                     "emulated device: %s, grid (%u,%u,%u) x block (%u,%u,%u): %s before any "
                     "block ran; nothing was written",
                     kernel, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z,
                     detail);
        else
            snprintf(j->message, sizeof j->message,
                     "emulated device: %s, block (%llu,%llu,%llu) of grid (%u,%u,%u) x block "
                     "(%u,%u,%u): %s",
                     kernel, (unsigned long long)(block % gx),
                     (unsigned long long)(block / gx % gy), (unsigned long long)(block / (gx * gy)),
                     l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, detail);
        j->failed_block = block;
    }
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pool.lock);
}

/* Every host thread taking part acquires its worker, fiber stacks and copy queues, then waits
 * for the others: a launch that cannot get its resources fails before any block writes. */
static convnd_emu_worker *prepare_and_wait(grid_job *j) {
    convnd_emu_worker *w = convnd_emu_worker_get();
    const uint32_t n = j->launch->block.x * j->launch->block.y * j->launch->block.z;
    if (!w)
        record_failure(j, UINT64_MAX, "out of memory creating a worker");
    else if (convnd_emu_worker_prepare(w, n) != 0) {
        char detail[96];
        snprintf(detail, sizeof detail, "out of memory creating %u fiber stacks", n);
        record_failure(j, UINT64_MAX, detail);
    }
    pthread_mutex_lock(&pool.lock);
    if (++j->prepared == j->participants)
        pthread_cond_broadcast(&pool.prepared);
    else
        while (j->prepared < j->participants)
            pthread_cond_wait(&pool.prepared, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    return w;
}

static void run_blocks(grid_job *j) {
    convnd_emu_worker *w = prepare_and_wait(j);
    while (w && !__atomic_load_n(&j->failed, __ATOMIC_ACQUIRE)) {
        const uint64_t b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (b >= j->num_blocks) break;
        if (convnd_emu_run_block(w, j->launch, b, &j->settings) != 0)
            record_failure(j, b, w->block.message);
    }
}

typedef struct helper_start {
    int32_t index;
    uint64_t generation; /* the last job before it existed */
} helper_start;

static void *helper_main(void *arg) {
    const helper_start start = *(helper_start *)arg;
    free(arg);
    const int32_t index = start.index;
    uint64_t seen = start.generation;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen)
            pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        if (index >= pool.helpers) continue;
        grid_job *j = pool.job;
        pthread_mutex_unlock(&pool.lock);
        run_blocks(j);
        pthread_mutex_lock(&pool.lock);
        if (--pool.busy == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

static void forget_pool_in_child(void) {
    /* Only the forking thread exists in the child: start the pool over. */
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_cond_init(&pool.prepared, NULL);
    pthread_mutex_init(&launch_lock, NULL);
    pool.created = pool.helpers = pool.busy = 0;
    pool.job = NULL;
}

static void init_once(void) {
    pthread_key_create(&worker_key, worker_destructor);
    pthread_atfork(NULL, NULL, forget_pool_in_child);
}

/* Makes sure `n` helper threads exist; returns how many do. Caller holds launch_lock. */
static int32_t ensure_helpers(int32_t n) {
    while (pool.created < n) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        helper_start *start = malloc(sizeof *start);
        if (!start) break;
        pthread_mutex_lock(&pool.lock);
        start->index = pool.created;
        start->generation = pool.generation;
        const int rc = pthread_create(&th, &attr, helper_main, start);
        if (rc == 0) pool.created++;
        pthread_mutex_unlock(&pool.lock);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            free(start);
            break;
        }
    }
    return pool.created < n ? pool.created : n;
}

/* ---- launch ------------------------------------------------------------------------------- */

static convnd_status bad_config(const convnd_emu_launch *l, const char *what) {
    char kernel[512];
    put_kernel(kernel, sizeof kernel, l);
    return convnd_error(CONVND_ERR_DEVICE,
                        "emulated device: %s: invalid launch configuration grid (%u,%u,%u) x "
                        "block (%u,%u,%u), %zu bytes of dynamic shared memory: %s",
                        kernel, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z,
                        l->dynamic_smem, what);
}

static int32_t launches_skipped;

void convnd_emu_set_skip_launches(int32_t skip) {
    __atomic_store_n(&launches_skipped, skip, __ATOMIC_RELAXED);
}

convnd_status convnd_emu_run(const convnd_emu_launch *l) {
    if (convnd_emu_self)
        return bad_config(l, "launched from inside a kernel (dynamic parallelism is not emulated)");
    const uint64_t threads = (uint64_t)l->block.x * l->block.y * l->block.z;
    if (!l->block.x || !l->block.y || !l->block.z || !l->grid.x || !l->grid.y || !l->grid.z)
        return bad_config(l, "a dimension is 0");
    if (threads > CONVND_EMU_MAX_THREADS || l->block.x > 1024 || l->block.y > 1024 ||
        l->block.z > 64)
        return bad_config(l, "more than 1024 threads per block or a block dimension over its "
                             "limit (1024, 1024, 64)");
    if (l->grid.x > 2147483647u || l->grid.y > 65535 || l->grid.z > 65535)
        return bad_config(l, "a grid dimension over its limit (2^31-1, 65535, 65535)");
    if (l->dynamic_smem > CONVND_EMU_MAX_SMEM)
        return bad_config(l, "more dynamic shared memory than a block can have (232448 bytes)");
    /* the host-overhead benchmark measures everything up to here: the launch itself */
    if (__atomic_load_n(&launches_skipped, __ATOMIC_RELAXED)) return CONVND_OK;

    convnd_emu_settings settings;
    int32_t host_threads;
    const convnd_status st = read_settings(&settings, &host_threads);
    if (st != CONVND_OK) return st;
    pthread_once(&once, init_once);

    grid_job job;
    memset(&job, 0, sizeof job);
    job.launch = l;
    job.num_blocks = (uint64_t)l->grid.x * l->grid.y * l->grid.z;
    job.settings = settings;

    pthread_mutex_lock(&launch_lock);
    int32_t helpers = 0;
    if (host_threads > 1 && job.num_blocks > 1) {
        const uint64_t want = job.num_blocks - 1 < (uint64_t)host_threads - 1
                                  ? job.num_blocks - 1
                                  : (uint64_t)host_threads - 1;
        helpers = ensure_helpers((int32_t)want);
    }
    job.participants = helpers + 1;
    if (helpers) {
        pthread_mutex_lock(&pool.lock);
        pool.job = &job;
        pool.helpers = pool.busy = helpers;
        pool.generation++;
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.lock);
    }
    run_blocks(&job);
    if (helpers) {
        pthread_mutex_lock(&pool.lock);
        while (pool.busy > 0)
            pthread_cond_wait(&pool.done, &pool.lock);
        pool.job = NULL;
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&launch_lock);
    if (job.failed) return convnd_error(CONVND_ERR_DEVICE, "%s", job.message);
    return CONVND_OK;
}
