/* The block scheduler of the emulated device: runs the threads of one block as fibers, phase by
 * phase (a phase ends when every live thread waits at __syncthreads), in the selected order, and
 * reports barriers or warp collectives that not every thread reaches. */
#define _GNU_SOURCE
#include "emu_internal.h"
#include "emu_fiber.h"
#include "emu_hopper.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CONVND_EMU_TLS convnd_emu_thread *convnd_emu_self;

/* ---- workers ------------------------------------------------------------------------------ */

convnd_emu_worker *convnd_emu_worker_new(void) {
    convnd_emu_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->arena = aligned_alloc(128, CONVND_EMU_MAX_SMEM);
    if (!w->arena) {
        free(w);
        return NULL;
    }
    w->stack_bytes = convnd_emu_fiber_stack_bytes();
    return w;
}

void convnd_emu_worker_free(convnd_emu_worker *w) {
    if (!w) return;
    for (uint32_t i = 0; i < w->num_fibers; ++i) {
        convnd_emu_fiber_destroy(w->threads[i].fiber);
        free(w->threads[i].copies);
    }
    convnd_emu_hopper_free(w->block.hopper);
    free(w->arena);
    free(w);
}

/* The body of every fiber: run the current launch's kernel as this thread, forever. */
static void thread_main(void *arg) {
    convnd_emu_thread *t = arg;
    for (;;) {
        const convnd_emu_launch *launch = t->block->launch;
        t->in_kernel = 1;
        launch->invoke(launch->ctx);
        t->in_kernel = 0;
        t->state = CONVND_EMU_EXITED;
        convnd_emu_warp *w = &t->block->warps[t->warp];
        const uint32_t bit = 1u << t->lane;
        w->exited |= bit;
        if ((w->arrived & bit) == 0 && w->arrived != 0 && (w->mask & bit) && !t->block->failed) {
            t->block->failed = 1;
            snprintf(t->block->message, sizeof t->block->message,
                     "warp %u: lane %u exited while other lanes wait for it at %s (mask 0x%08x)",
                     t->warp, t->lane, w->name, w->mask);
        }
        convnd_emu_fiber_yield(t->fiber);
    }
}

/* Test hook (emu_internal.h): fiber creation fails on host threads other than this one. */
static pthread_t inject_owner;
static int inject_fiber_failure;

void convnd_emu_inject_fiber_failure(int on) {
    inject_owner = pthread_self();
    __atomic_store_n(&inject_fiber_failure, on, __ATOMIC_RELEASE);
}

/* cp.async queue entries reserved per thread before the first block, so that a launch whose
 * threads queue at most this many copies at a time never allocates while blocks run. */
#define CONVND_EMU_COPIES_RESERVED 64u

int convnd_emu_worker_prepare(convnd_emu_worker *w, uint32_t n) {
    while (w->num_fibers < n) {
        convnd_emu_thread *t = &w->threads[w->num_fibers];
        if (__atomic_load_n(&inject_fiber_failure, __ATOMIC_ACQUIRE) &&
            !pthread_equal(pthread_self(), inject_owner))
            return -1;
        t->fiber = convnd_emu_fiber_create(w->stack_bytes, thread_main, t);
        if (!t->fiber) return -1;
        if (!t->copies) {
            t->copies = malloc(CONVND_EMU_COPIES_RESERVED * sizeof *t->copies);
            if (!t->copies) {
                convnd_emu_fiber_destroy(t->fiber);
                t->fiber = NULL;
                return -1;
            }
            t->copies_cap = CONVND_EMU_COPIES_RESERVED;
        }
        w->num_fibers++;
    }
    return 0;
}

/* ---- kernel-side errors ------------------------------------------------------------------- */

void convnd_emu_fail(const char *fmt, ...) {
    convnd_emu_thread *t = convnd_emu_self;
    va_list ap;
    va_start(ap, fmt);
    if (!t) { /* a device primitive called outside a kernel: a programming error */
        fputs("convnd emulated device: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        abort();
    }
    convnd_emu_block *b = t->block;
    if (!b->failed) {
        b->failed = 1;
        int used = snprintf(b->message, sizeof b->message,
                            "thread %u (warp %u, lane %u): ", t->linear, t->warp, t->lane);
        if (used > 0 && (size_t)used < sizeof b->message)
            vsnprintf(b->message + used, sizeof b->message - (size_t)used, fmt, ap);
    }
    va_end(ap);
    for (;;)
        convnd_emu_fiber_yield(t->fiber); /* the scheduler abandons the block */
}

void convnd_emu_syncthreads(void) {
    convnd_emu_thread *t = convnd_emu_self;
    t->barriers++;
    t->state = CONVND_EMU_AT_BARRIER;
    convnd_emu_fiber_yield(t->fiber);
}

/* ---- thread order ------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The order of one phase. A shuffle depends only on (seed, block, phase), never on which host
 * thread runs the block, so a seed reproduces a run exactly. */
static void make_order(uint32_t *order, uint32_t n, convnd_emu_order kind, uint64_t seed,
                       uint64_t block, uint64_t phase) {
    for (uint32_t i = 0; i < n; ++i)
        order[i] = kind == CONVND_EMU_REVERSE ? n - 1 - i : i;
    if (kind != CONVND_EMU_SHUFFLE) return;
    uint64_t s = seed ^ (block * 0xD1B54A32D192ED03ull) ^ (phase * 0x8CB92BA72F3D8DD7ull);
    for (uint32_t i = n - 1; i > 0; --i) {
        const uint32_t j = (uint32_t)(splitmix64(&s) % (i + 1));
        const uint32_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

/* The warp order of one warp-ahead phase: a seeded permutation of the warps. */
static void make_warp_order(uint32_t *order, uint32_t warps, uint64_t seed, uint64_t block,
                            uint64_t phase) {
    make_order(order, warps, CONVND_EMU_SHUFFLE, seed, block, phase);
}

/* ---- error descriptions ------------------------------------------------------------------- */

typedef struct text {
    char *buf;
    size_t cap, len;
} text;

static void put(text *t, const char *fmt, ...) CONVND_EMU_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...) {
    if (t->len + 1 >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

/* "3-7, 9" for the threads of w that satisfy keep(thread, arg). */
static void put_threads(text *out, convnd_emu_worker *w, uint32_t n,
                        int (*keep)(const convnd_emu_thread *, uint64_t), uint64_t arg) {
    int first = 1;
    for (uint32_t i = 0; i < n;) {
        if (!keep(&w->threads[i], arg)) {
            ++i;
            continue;
        }
        uint32_t j = i;
        while (j + 1 < n && keep(&w->threads[j + 1], arg))
            ++j;
        if (j == i)
            put(out, "%s%u", first ? "" : ", ", i);
        else
            put(out, "%s%u-%u", first ? "" : ", ", i, j);
        first = 0;
        i = j + 1;
    }
}

static int is_exited(const convnd_emu_thread *t, uint64_t arg) {
    (void)arg;
    return t->state == CONVND_EMU_EXITED;
}
static int at_barrier(const convnd_emu_thread *t, uint64_t count) {
    return t->state == CONVND_EMU_AT_BARRIER && t->barriers == count;
}
static int at_warp_op_of(const convnd_emu_thread *t, uint64_t warp) {
    return t->state == CONVND_EMU_AT_WARP_OP && t->warp == warp;
}
static int waits_on(const convnd_emu_thread *t, uint64_t key) {
    return t->state == CONVND_EMU_AT_WAIT && (uintptr_t)t->wait_key == key;
}

/* Threads blocked in sm_90 waits (mbarrier, named barrier, warpgroup op), grouped by what they
 * wait for, with its state. 1 when there were any. */
static int describe_waits(convnd_emu_worker *w, uint32_t n, text *out) {
    const void *keys[8];
    int nkeys = 0;
    for (uint32_t i = 0; i < n && nkeys < 8; ++i) {
        const convnd_emu_thread *t = &w->threads[i];
        if (t->state != CONVND_EMU_AT_WAIT) continue;
        int seen = 0;
        for (int k = 0; k < nkeys; ++k)
            seen |= keys[k] == t->wait_key;
        if (!seen) keys[nkeys++] = t->wait_key;
    }
    if (!nkeys) return 0;
    put(out, "a wait that can never complete (no thread can run and no asynchronous copy is "
             "pending):");
    for (int k = 0; k < nkeys; ++k) {
        const convnd_emu_thread *t = &w->threads[0];
        for (uint32_t i = 0; i < n; ++i)
            if (waits_on(&w->threads[i], (uintptr_t)keys[k])) {
                t = &w->threads[i];
                break;
            }
        char state[256];
        convnd_emu_hopper_describe(&w->block, keys[k], state, sizeof state);
        put(out, " threads ");
        put_threads(out, w, n, waits_on, (uintptr_t)keys[k]);
        put(out, " wait at %s (%s);", t->wait_what, state);
    }
    return 1;
}

/* Every thread is blocked or exited, and the block cannot go on: say why. */
static void describe_deadlock(convnd_emu_worker *w, uint32_t n) {
    convnd_emu_block *b = &w->block;
    text out = {b->message, sizeof b->message, 0};
    const char *ids = (b->block_dim.y > 1 || b->block_dim.z > 1)
                          ? " (linear ids x + y*blockDim.x + z*blockDim.x*blockDim.y)"
                          : "";
    if (describe_waits(w, n, &out)) {
        put(&out, " threads ");
        put_threads(&out, w, n, is_exited, 0);
        put(&out, " exited");
        return;
    }
    for (uint32_t wi = 0; wi < b->num_warps; ++wi) {
        const convnd_emu_warp *wp = &b->warps[wi];
        if (!wp->arrived) continue;
        put(&out, "warp-collective %s (mask 0x%08x) in warp %u not reached by every lane: threads ",
            wp->name, wp->mask, wi);
        put_threads(&out, w, n, at_warp_op_of, wi);
        put(&out, " wait there; the others of the mask exited or wait at __syncthreads%s", ids);
        return;
    }
    put(&out, "__syncthreads() not reached by every live thread of the block%s:", ids);
    uint64_t counts[8];
    int ncounts = 0;
    for (uint32_t i = 0; i < n && ncounts < 8; ++i) {
        const convnd_emu_thread *t = &w->threads[i];
        if (t->state != CONVND_EMU_AT_BARRIER) continue;
        int seen = 0;
        for (int c = 0; c < ncounts; ++c)
            seen |= counts[c] == t->barriers;
        if (!seen) counts[ncounts++] = t->barriers;
    }
    for (int c = 0; c < ncounts; ++c) {
        put(&out, " threads ");
        put_threads(&out, w, n, at_barrier, counts[c]);
        put(&out, " wait at barrier #%llu;", (unsigned long long)counts[c]);
    }
    put(&out, " threads ");
    put_threads(&out, w, n, is_exited, 0);
    put(&out, " exited");
}

/* ---- one block ---------------------------------------------------------------------------- */

static void start_block(convnd_emu_worker *w, const convnd_emu_launch *launch, uint64_t id,
                        uint32_t n, const convnd_emu_settings *settings) {
    convnd_emu_block *b = &w->block;
    const uint64_t gx = launch->grid.x, gy = launch->grid.y;
    b->block_idx.x = (unsigned)(id % gx);
    b->block_idx.y = (unsigned)(id / gx % gy);
    b->block_idx.z = (unsigned)(id / (gx * gy));
    b->block_dim = launch->block;
    b->grid_dim = launch->grid;
    b->launch = launch;
    b->linear_id = id;
    b->smem = w->arena;
    b->dynamic_smem = launch->dynamic_smem;
    b->smem_used = (launch->dynamic_smem + 127) / 128 * 128;
    b->static_smem = 0;
    b->num_vars = 0;
    CONVND_EMU_POISON(w->arena, CONVND_EMU_MAX_SMEM);
    if (launch->dynamic_smem) {
        CONVND_EMU_UNPOISON(w->arena, launch->dynamic_smem);
        memset(w->arena, 0xFF, launch->dynamic_smem);
    }
    b->num_threads = n;
    b->num_warps = (n + CONVND_EMU_WARP - 1) / CONVND_EMU_WARP;
    b->warps = w->warps;
    for (uint32_t i = 0; i < b->num_warps; ++i) {
        const uint32_t lanes = n - i * CONVND_EMU_WARP;
        w->warps[i].lanes = lanes >= 32 ? 0xFFFFFFFFu : (1u << lanes) - 1u;
        w->warps[i].exited = w->warps[i].arrived = w->warps[i].mask = 0;
        w->warps[i].fn = NULL;
    }
    b->released = b->failed = 0;
    b->copies = (int32_t)settings->copies;
    b->copy_seed = settings->copy_seed;
    b->message[0] = '\0';
    convnd_emu_hopper_block_start(b);
    const uint32_t bx = launch->block.x, bxy = launch->block.x * launch->block.y;
    for (uint32_t i = 0; i < n; ++i) {
        convnd_emu_thread *t = &w->threads[i];
        t->thread_idx.x = i % bx;
        t->thread_idx.y = i % bxy / bx;
        t->thread_idx.z = i / bxy;
        t->linear = i;
        t->warp = i / CONVND_EMU_WARP;
        t->lane = i % CONVND_EMU_WARP;
        t->block = b;
        t->num_copies = 0;
        t->groups_committed = 0;
        t->copies_issued = 0;
        t->state = CONVND_EMU_READY;
        t->barriers = 0;
        t->wait_key = NULL;
        t->timed_out_bar = NULL;
    }
}

/* Runs the READY threads among order[0..count) until each blocks or exits; again while a warp
 * collective made waiting lanes runnable. -1 when the block failed. */
static int run_ready(convnd_emu_worker *w, const uint32_t *order, uint32_t count) {
    convnd_emu_block *b = &w->block;
    do {
        b->released = 0;
        for (uint32_t k = 0; k < count; ++k) {
            convnd_emu_thread *t = &w->threads[order[k]];
            if (t->state != CONVND_EMU_READY) continue;
            t->state = CONVND_EMU_RUNNING;
            convnd_emu_self = t;
            convnd_emu_fiber_resume(t->fiber);
            convnd_emu_self = NULL;
            if (b->failed) return -1;
        }
    } while (b->released);
    return 0;
}

static int any_ready(const convnd_emu_worker *w, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i)
        if (w->threads[i].state == CONVND_EMU_READY) return 1;
    return 0;
}

/* One phase (up to the next barrier) of every thread. Warp-ahead: one warp at a time, in a
 * seeded warp order, lanes in order, so the first warp reaches the barrier before any other
 * starts the phase. Else every thread in the phase's order; warp collectives then interleave
 * the warps. */
static int run_phase(convnd_emu_worker *w, uint32_t n, const convnd_emu_settings *settings,
                     uint64_t id, uint64_t phase) {
    if (settings->order != CONVND_EMU_WARP_AHEAD) {
        make_order(w->order, n, settings->order, settings->seed, id, phase);
        return run_ready(w, w->order, n);
    }
    uint32_t warps[CONVND_EMU_MAX_THREADS / CONVND_EMU_WARP], lanes[CONVND_EMU_WARP];
    const uint32_t num_warps = w->block.num_warps;
    make_warp_order(warps, num_warps, settings->seed, id, phase);
    for (uint32_t k = 0; k < num_warps; ++k) {
        const uint32_t first = warps[k] * CONVND_EMU_WARP;
        const uint32_t count = n - first < CONVND_EMU_WARP ? n - first : CONVND_EMU_WARP;
        for (uint32_t l = 0; l < count; ++l)
            lanes[l] = first + l;
        if (run_ready(w, lanes, count) != 0) return -1;
    }
    return 0;
}

int convnd_emu_run_block(convnd_emu_worker *w, const convnd_emu_launch *launch, uint64_t id,
                         const convnd_emu_settings *settings) {
    convnd_emu_block *b = &w->block;
    const uint32_t n = launch->block.x * launch->block.y * launch->block.z;
    if (convnd_emu_worker_prepare(w, n) != 0) {
        snprintf(b->message, sizeof b->message, "out of memory creating %u fiber stacks", n);
        return -1;
    }
    start_block(w, launch, id, n, settings);
    for (uint64_t phase = 0;; ++phase) {
        do {
            /* again while a thread became runnable outside its warp's turn (warp-ahead: an
             * mbarrier arrival by a later warp) */
            do {
                if (run_phase(w, n, settings, id, phase) != 0) goto fail;
            } while (any_ready(w, n));
            /* Nobody can run: the async proxy (TMA) makes its progress, which may complete
             * mbarrier phases that threads wait for. */
        } while (convnd_emu_hopper_progress(b));
        if (b->failed) goto fail;

        uint32_t exited = 0, waiting = 0;
        uint64_t count = 0;
        int same = 1;
        for (uint32_t i = 0; i < n; ++i) {
            const convnd_emu_thread *t = &w->threads[i];
            if (t->state == CONVND_EMU_EXITED) {
                ++exited;
            } else if (t->state == CONVND_EMU_AT_BARRIER) {
                if (waiting++ == 0) count = t->barriers;
                same &= t->barriers == count;
            }
        }
        if (exited == n) {
            if (convnd_emu_hopper_block_end(b) != 0) goto fail;
            return 0;
        }
        if (waiting == n && same) { /* everyone at the same barrier: next phase */
            for (uint32_t i = 0; i < n; ++i)
                w->threads[i].state = CONVND_EMU_READY;
            continue;
        }
        describe_deadlock(w, n);
        goto fail;
    }
fail:
    /* Threads stopped inside the kernel start afresh at the next block. */
    for (uint32_t i = 0; i < n; ++i) {
        convnd_emu_thread *t = &w->threads[i];
        if (t->in_kernel) {
            convnd_emu_fiber_restart(t->fiber);
            t->in_kernel = 0;
        }
    }
    return -1;
}
