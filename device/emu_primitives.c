/* Device primitives of the emulated device that need the core: static shared memory, warp
 * collectives (shuffles, votes, __syncwarp, and the rendezvous mma.sync and ldmatrix use) and the
 * deferred cp.async copies. */
#include "emu_internal.h"
#include "emu_fiber.h"

#include <stdlib.h>
#include <string.h>

/* ---- shared memory ------------------------------------------------------------------------ */

void *convnd_emu_static_shared(const void *key, size_t bytes, size_t align) {
    convnd_emu_block *b = convnd_emu_self->block;
    for (int32_t i = 0; i < b->num_vars; ++i)
        if (b->vars[i].key == key) return b->smem + b->vars[i].offset;
    /* First thread of the block to reach the declaration: place and poison it. */
    if (b->num_vars == CONVND_EMU_MAX_SHARED_VARS)
        convnd_emu_fail("more than %d CONVND_SHARED declarations in one kernel",
                        CONVND_EMU_MAX_SHARED_VARS);
    if (align < 128) align = 128;
    const size_t offset = (b->smem_used + align - 1) / align * align;
    if (b->static_smem + bytes > CONVND_EMU_MAX_STATIC_SMEM)
        convnd_emu_fail("static shared memory of %zu bytes exceeds the 48 KiB limit",
                        b->static_smem + bytes);
    if (offset + bytes > CONVND_EMU_MAX_SMEM)
        convnd_emu_fail("shared memory: %zu bytes dynamic plus %zu static exceed the %u bytes "
                        "of a block",
                        b->dynamic_smem, b->static_smem + bytes, CONVND_EMU_MAX_SMEM);
    CONVND_EMU_UNPOISON(b->smem + offset, bytes);
    memset(b->smem + offset, 0xFF, bytes);
    convnd_emu_shared_var *v = &b->vars[b->num_vars++];
    v->key = key;
    v->offset = offset;
    v->bytes = bytes;
    b->smem_used = offset + bytes;
    b->static_smem += bytes;
    return b->smem + offset;
}

/* ---- vector store counter ------------------------------------------------------------------ */

static uint64_t global_vector_stores16;

void convnd_emu_count_vector_store16(const void *p) {
    const convnd_emu_block *b = convnd_emu_self ? convnd_emu_self->block : NULL;
    const unsigned char *c = (const unsigned char *)p;
    if (b && c >= b->smem && c < b->smem + b->smem_used) return; /* shared memory */
    __atomic_add_fetch(&global_vector_stores16, 1, __ATOMIC_RELAXED);
}

uint64_t convnd_emu_global_vector_stores16(void) {
    return __atomic_load_n(&global_vector_stores16, __ATOMIC_RELAXED);
}

/* ---- warp collectives --------------------------------------------------------------------- */

void convnd_emu_warp_collective(const char *name, uint32_t mask, void *arg, convnd_emu_warp_fn fn) {
    convnd_emu_thread *t = convnd_emu_self;
    convnd_emu_block *b = t->block;
    convnd_emu_warp *w = &b->warps[t->warp];
    const uint32_t bit = 1u << t->lane;
    if (!(mask & bit))
        convnd_emu_fail("%s called with mask 0x%08x, which excludes the calling lane", name, mask);
    if (w->arrived) {
        if (w->fn != fn || w->mask != mask)
            convnd_emu_fail("warp divergence: this lane reached %s (mask 0x%08x) while lanes "
                            "0x%08x of its warp wait at %s (mask 0x%08x)",
                            name, mask, w->arrived, w->name, w->mask);
    } else {
        w->fn = fn;
        w->name = name;
        w->mask = mask;
    }
    const uint32_t expected = mask & w->lanes;
    if (expected & w->exited)
        convnd_emu_fail("%s (mask 0x%08x) can never complete: lanes 0x%08x of the warp exited",
                        name, mask, expected & w->exited);
    w->args[t->lane] = arg;
    w->arrived |= bit;
    if (w->arrived != expected) {
        t->state = CONVND_EMU_AT_WARP_OP;
        convnd_emu_fiber_yield(t->fiber);
        return; /* the last lane did the work */
    }
    /* Last lane: do the whole warp's work while the others wait, then release them. */
    w->arrived = 0;
    fn(w->args, expected);
    convnd_emu_thread *lane0 = t - t->lane;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        if ((expected & (1u << l)) && l != t->lane) lane0[l].state = CONVND_EMU_READY;
    b->released = 1;
}

typedef struct shfl_arg {
    uint64_t value, result;
    int32_t lane_arg, width;
} shfl_arg;

/* Source lane of a shuffle as CUDA defines it (lane itself when out of its segment). */
static uint32_t shfl_source(int kind, uint32_t lane, int32_t arg, int32_t width) {
    const uint32_t w = (uint32_t)width, base = lane & ~(w - 1), pos = lane - base;
    switch (kind) {
    case 0: /* idx */
        return base + ((uint32_t)arg & (w - 1));
    case 1: /* up */
        return pos >= (uint32_t)arg ? lane - (uint32_t)arg : lane;
    case 2: /* down */
        return pos + (uint32_t)arg < w ? lane + (uint32_t)arg : lane;
    default: { /* xor: later segments are out of reach */
        const uint32_t src = lane ^ (uint32_t)arg;
        return src < base + w ? src : lane;
    }
    }
}

static void shfl_all(int kind, void *const *args, uint32_t lanes) {
    int32_t width = -1;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        if (!(lanes & (1u << l))) continue;
        const shfl_arg *a = args[l];
        if (width < 0) width = a->width;
        if (a->width != width || width < 1 || width > 32 || (width & (width - 1)))
            convnd_emu_fail("shuffle width %d (lane %u) is not one power of two <= 32 for the "
                            "whole warp",
                            a->width, l);
    }
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l) {
        if (!(lanes & (1u << l))) continue;
        shfl_arg *a = args[l];
        const uint32_t src = shfl_source(kind, l, a->lane_arg, width);
        /* Reading a lane that does not take part is undefined on a GPU: poison. */
        a->result = (lanes & (1u << src)) ? ((shfl_arg *)args[src])->value : ~(uint64_t)0;
    }
}
static void shfl_idx(void *const *args, uint32_t lanes) {
    shfl_all(0, args, lanes);
}
static void shfl_up(void *const *args, uint32_t lanes) {
    shfl_all(1, args, lanes);
}
static void shfl_down(void *const *args, uint32_t lanes) {
    shfl_all(2, args, lanes);
}
static void shfl_xor(void *const *args, uint32_t lanes) {
    shfl_all(3, args, lanes);
}

uint64_t convnd_emu_shfl(int kind, uint32_t mask, uint64_t value, int lane_arg, int width) {
    static const convnd_emu_warp_fn fns[4] = {shfl_idx, shfl_up, shfl_down, shfl_xor};
    static const char *const names[4] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                         "__shfl_xor_sync"};
    shfl_arg a = {value, 0, lane_arg, width};
    convnd_emu_warp_collective(names[kind & 3], mask, &a, fns[kind & 3]);
    return a.result;
}

typedef struct vote_arg {
    int32_t predicate;
    uint32_t result;
} vote_arg;

static void vote_all(int kind, void *const *args, uint32_t lanes) {
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        if ((lanes & (1u << l)) && ((vote_arg *)args[l])->predicate) ballot |= 1u << l;
    const uint32_t r = kind == 0 ? ballot : kind == 1 ? ballot != 0 : ballot == lanes;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        if (lanes & (1u << l)) ((vote_arg *)args[l])->result = r;
}
static void vote_ballot(void *const *args, uint32_t lanes) {
    vote_all(0, args, lanes);
}
static void vote_any(void *const *args, uint32_t lanes) {
    vote_all(1, args, lanes);
}
static void vote_all_(void *const *args, uint32_t lanes) {
    vote_all(2, args, lanes);
}

uint32_t convnd_emu_vote(int kind, uint32_t mask, int predicate) {
    static const convnd_emu_warp_fn fns[3] = {vote_ballot, vote_any, vote_all_};
    static const char *const names[3] = {"__ballot_sync", "__any_sync", "__all_sync"};
    vote_arg a = {predicate != 0, 0};
    const int k = kind < 0 || kind > 2 ? 0 : kind;
    convnd_emu_warp_collective(names[k], mask, &a, fns[k]);
    return a.result;
}

static void syncwarp_fn(void *const *args, uint32_t lanes) {
    (void)args;
    (void)lanes;
}

void convnd_emu_syncwarp(uint32_t mask) {
    convnd_emu_warp_collective("__syncwarp", mask, NULL, syncwarp_fn);
}

/* ---- cp.async ----------------------------------------------------------------------------- */

int convnd_emu_copy_lands_now(convnd_emu_thread *t) {
    /* A hash of (seed, block, thread, copy): reproducible whatever host thread runs the block. */
    uint64_t z = t->block->copy_seed ^ (t->block->linear_id * 0xD1B54A32D192ED03ull) ^
                 ((uint64_t)t->linear << 32) ^ t->copies_issued++;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (int)((z ^ (z >> 31)) & 1);
}

void convnd_emu_cp_async_grow(convnd_emu_thread *t) {
    const uint32_t cap = t->copies_cap ? 2 * t->copies_cap : 64;
    convnd_emu_copy *c = realloc(t->copies, cap * sizeof *c);
    if (!c) convnd_emu_fail("out of memory queueing cp.async copies");
    t->copies = c;
    t->copies_cap = cap;
}

void convnd_emu_cp_async_wait(uint32_t pending) {
    convnd_emu_thread *t = convnd_emu_self;
    const uint32_t limit = t->groups_committed > pending ? t->groups_committed - pending : 0;
    uint32_t done = 0;
    while (done < t->num_copies && t->copies[done].group < limit) {
        const convnd_emu_copy *c = &t->copies[done++];
        if (c->src)
            memcpy(c->dst, c->src, c->bytes);
        else
            memset(c->dst, 0, c->bytes);
    }
    if (done) {
        memmove(t->copies, t->copies + done, (t->num_copies - done) * sizeof *t->copies);
        t->num_copies -= done;
    }
}
