/* The sm_90 block state of the emulated device and the primitives without a file of their own:
 * waiting and release, warpgroup rendezvous, named barriers (bar.sync / bar.arrive), elect.sync,
 * setmaxnreg and fence.proxy.async. */
#include "emu_hopper_internal.h"
#include "emu_fiber.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- block state ---------------------------------------------------------------------------- */

convnd_emu_hopper *convnd_emu_hopper_get(void) {
    convnd_emu_block *b = convnd_emu_self->block;
    convnd_emu_hopper *h = b->hopper;
    if (!h) {
        h = calloc(1, sizeof *h);
        if (h) h->shadow = malloc(CONVND_EMU_MAX_SMEM);
        if (!h || !h->shadow) {
            if (h) free(h);
            convnd_emu_fail("out of memory for the sm_90 block state");
        }
        memset(h->shadow, 0xFF, CONVND_EMU_MAX_SMEM); /* the poison every block starts with */
        h->block = b;
        b->hopper = h;
    }
    h->used = 1;
    return h;
}

void convnd_emu_hopper_block_start(convnd_emu_block *b) {
    convnd_emu_hopper *h = b->hopper;
    if (!h || !h->used) return;
    memset(h->shadow, 0xFF, CONVND_EMU_MAX_SMEM);
    memset(h->named, 0, sizeof h->named);
    for (uint32_t i = 0; i < CONVND_EMU_MAX_WARPGROUPS; ++i)
        h->wg[i].arrived = 0;
    memset(h->wgmma_fenced, 0, sizeof h->wgmma_fenced);
    convnd_emu_wgmma_reset(h);
    convnd_emu_tma_reset(h);
    h->used = 0;
}

int convnd_emu_hopper_progress(convnd_emu_block *b) {
    if (!b->hopper) return 0;
    b->released = 0;
    convnd_emu_tma_progress(b->hopper);
    return b->released;
}

int convnd_emu_hopper_block_end(convnd_emu_block *b) {
    convnd_emu_hopper *h = b->hopper;
    if (!h || !h->used) return 0;
    if (convnd_emu_wgmma_end(h, b->message, sizeof b->message) != 0) return -1;
    return convnd_emu_tma_end(h, b->message, sizeof b->message);
}

void convnd_emu_hopper_free(convnd_emu_hopper *h) {
    if (!h) return;
    convnd_emu_wgmma_reset(h);
    for (uint32_t i = 0; i < CONVND_EMU_MAX_WARPGROUPS; ++i) {
        free(h->wgmma[i].ops);
        free(h->wgmma[i].carry);
    }
    free(h->loads.ops);
    for (uint32_t i = 0; i < CONVND_EMU_MAX_THREADS; ++i)
        free(h->stores[i].ops);
    free(h->shadow);
    free(h);
}

void convnd_emu_hopper_describe(const convnd_emu_block *b, const void *key, char *buf, size_t len) {
    buf[0] = '\0';
    const convnd_emu_hopper *h = b->hopper;
    if (!h) return;
    const uintptr_t k = (uintptr_t)key, s = (uintptr_t)b->smem;
    if (k >= s && k < s + CONVND_EMU_MAX_SMEM) {
        convnd_emu_mbarrier_describe(key, buf, len);
        return;
    }
    for (uint32_t i = 0; i < 16; ++i)
        if (key == (const void *)&h->named[i]) {
            snprintf(buf, len, "named barrier %u: %u of %u threads arrived", i, h->named[i].arrived,
                     h->named[i].count);
            return;
        }
    for (uint32_t i = 0; i < CONVND_EMU_MAX_WARPGROUPS; ++i)
        if (key == (const void *)&h->wg[i]) {
            snprintf(buf, len, "warpgroup %u: %u of %u threads arrived", i, h->wg[i].arrived,
                     CONVND_EMU_WARPGROUP);
            return;
        }
}

/* ---- waiting ----------------------------------------------------------------------------------
 */

void convnd_emu_hopper_wait(const void *key, const char *what) {
    convnd_emu_thread *t = convnd_emu_self;
    t->wait_key = key;
    t->wait_what = what;
    t->state = CONVND_EMU_AT_WAIT;
    convnd_emu_fiber_yield(t->fiber);
}

void convnd_emu_hopper_release(convnd_emu_block *b, const void *key) {
    /* The block is its worker's; the worker's threads run it. */
    convnd_emu_worker *w =
        (convnd_emu_worker *)(void *)((char *)b - offsetof(convnd_emu_worker, block));
    convnd_emu_thread *t0 = w->threads;
    for (uint32_t i = 0; i < b->num_threads; ++i)
        if (t0[i].state == CONVND_EMU_AT_WAIT && t0[i].wait_key == key) {
            t0[i].state = CONVND_EMU_READY;
            b->released = 1;
        }
}

uint32_t convnd_emu_smem_addr(const void *p, const char *what) {
    const convnd_emu_block *b = convnd_emu_self->block;
    const uintptr_t a = (uintptr_t)p, s = (uintptr_t)b->smem;
    if (a < s || a >= s + CONVND_EMU_MAX_SMEM)
        convnd_emu_fail("%s %p is not shared memory", what, p);
    return (uint32_t)(a - s);
}

/* ---- warpgroup rendezvous ------------------------------------------------------------------ */

void convnd_emu_wg_collective(const char *name, void *arg, convnd_emu_wg_fn fn) {
    convnd_emu_thread *t = convnd_emu_self;
    convnd_emu_block *b = t->block;
    const uint32_t wg = t->linear / CONVND_EMU_WARPGROUP, first = wg * CONVND_EMU_WARPGROUP;
    if (first + CONVND_EMU_WARPGROUP > b->num_threads)
        convnd_emu_fail("%s needs a whole warpgroup, but warpgroup %u has only threads %u-%u "
                        "(block of %u threads)",
                        name, wg, first, b->num_threads - 1, b->num_threads);
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    convnd_emu_wg_rendezvous *r = &h->wg[wg];
    if (r->arrived && (r->fn != fn || strcmp(r->name, name) != 0))
        convnd_emu_fail("warpgroup divergence: this thread reached %s while %u threads of "
                        "warpgroup %u wait at %s",
                        name, r->arrived, wg, r->name);
    r->fn = fn;
    r->name = name;
    r->args[t->linear - first] = arg;
    if (++r->arrived < CONVND_EMU_WARPGROUP) {
        convnd_emu_hopper_wait(r, name);
        return;
    }
    r->arrived = 0;
    fn(h, wg, r->args);
    convnd_emu_hopper_release(b, r);
}

/* ---- named barriers: bar.sync / bar.arrive a, b (PTX ISA "bar, barrier") ------------------------
 */

void convnd_emu_named_barrier(uint32_t id, uint32_t count, int wait) {
    const char *what = wait ? "bar.sync" : "bar.arrive";
    convnd_emu_block *b = convnd_emu_self->block;
    if (id == 0 || id > 15)
        convnd_emu_fail("%s %u: named barriers are 1..15 (0 is __syncthreads')", what, id);
    if (count == 0 || count % CONVND_EMU_WARP || count > b->num_threads)
        convnd_emu_fail("%s %u, %u: the thread count must be a non-zero multiple of %d, at most "
                        "the block's %u threads",
                        what, id, count, CONVND_EMU_WARP, b->num_threads);
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    if (h->named[id].arrived && h->named[id].count != count)
        convnd_emu_fail("%s %u, %u while %u threads arrived there with count %u", what, id, count,
                        h->named[id].arrived, h->named[id].count);
    h->named[id].count = count;
    if (++h->named[id].arrived == count) {
        h->named[id].arrived = 0;
        convnd_emu_hopper_release(b, &h->named[id]);
        return;
    }
    if (wait) convnd_emu_hopper_wait(&h->named[id], what);
}

/* ---- elect.sync (PTX ISA "elect.sync"): one leader of the mask, the lowest lane ----------------
 */

typedef struct elect_arg {
    uint32_t lane;
    int32_t elected;
} elect_arg;

static void elect_fn(void *const *args, uint32_t lanes) {
    int first = 1;
    for (uint32_t l = 0; l < CONVND_EMU_WARP; ++l)
        if (lanes & (1u << l)) {
            ((elect_arg *)args[l])->elected = first;
            first = 0;
        }
}

int convnd_emu_elect_sync(uint32_t mask) {
    elect_arg a = {convnd_emu_self->lane, 0};
    convnd_emu_warp_collective("elect.sync", mask, &a, elect_fn);
    return a.elected;
}

/* ---- setmaxnreg (PTX ISA "setmaxnreg"): a no-op here, but warpgroup-uniform -------------------
 */

typedef struct setmaxnreg_arg {
    int32_t increase;
    uint32_t regs;
} setmaxnreg_arg;

static void setmaxnreg_fn(convnd_emu_hopper *h, uint32_t wg, void *const *args) {
    (void)h;
    const setmaxnreg_arg *a0 = args[0];
    for (uint32_t i = 1; i < CONVND_EMU_WARPGROUP; ++i) {
        const setmaxnreg_arg *a = args[i];
        if (a->increase != a0->increase || a->regs != a0->regs)
            convnd_emu_fail("setmaxnreg is not uniform in warpgroup %u: thread %u asks %s %u, "
                            "thread %u %s %u",
                            wg, wg * CONVND_EMU_WARPGROUP, a0->increase ? "inc" : "dec", a0->regs,
                            wg * CONVND_EMU_WARPGROUP + i, a->increase ? "inc" : "dec", a->regs);
    }
}

void convnd_emu_setmaxnreg(int increase, uint32_t regs) {
    if (regs < 24 || regs > 256 || regs % 8)
        convnd_emu_fail("setmaxnreg.%s %u: the count must be a multiple of 8 in 24..256",
                        increase ? "inc" : "dec", regs);
    setmaxnreg_arg a = {increase != 0, regs};
    convnd_emu_wg_collective("setmaxnreg", &a, setmaxnreg_fn);
}

/* ---- fence.proxy.async and the async proxy's view of shared memory --------------------------- */

/* Copies the block's whole shared memory, the gaps between variables included, which
 * AddressSanitizer keeps poisoned (device/README.md): so no memcpy (intercepted and checked) and
 * no instrumentation; volatile loads keep the compiler from turning the loop into a memcpy. */
#if defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static void
copy_smem_unchecked(unsigned char *dst, const unsigned char *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = *(const volatile uint64_t *)(const void *)(src + i);
        memcpy(dst + i, &v, 8);
    }
    for (; i < n; ++i)
        dst[i] = *(const volatile unsigned char *)(src + i);
}

void convnd_emu_fence_proxy_async(void) {
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    const convnd_emu_block *b = h->block;
    copy_smem_unchecked(h->shadow, (const unsigned char *)b->smem,
                        b->smem_used < CONVND_EMU_MAX_SMEM ? b->smem_used : CONVND_EMU_MAX_SMEM);
}

void convnd_emu_proxy_check(convnd_emu_hopper *h, uint32_t addr, uint32_t bytes,
                            const char *reader) {
    const unsigned char *s = h->block->smem;
    if (memcmp(s + addr, h->shadow + addr, bytes) == 0) return;
    uint32_t i = 0;
    while (s[addr + i] == h->shadow[addr + i])
        ++i;
    convnd_emu_fail("%s reads shared memory byte 0x%x, written by an ordinary store after the "
                    "last fence.proxy.async: the async proxy may not see it",
                    reader, addr + i);
}

void convnd_emu_proxy_write(convnd_emu_hopper *h, uint32_t addr, const void *src, uint32_t bytes) {
    memcpy(h->block->smem + addr, src, bytes);
    memcpy(h->shadow + addr, src, bytes);
}

/* ---- 16-bit floats ------------------------------------------------------------------------ */

float convnd_emu_bf16_to_f32(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float convnd_emu_half_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    uint32_t u;
    if (exp == 0x1F) {
        u = sign | 0x7F800000u | (man << 13);
    } else if (exp) {
        u = sign | ((exp + 112) << 23) | (man << 13);
    } else if (!man) {
        u = sign;
    } else { /* subnormal: normalize */
        uint32_t e = 113, m = man;
        while (!(m & 0x400)) {
            m <<= 1;
            --e;
        }
        u = sign | (e << 23) | ((m & 0x3FF) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}
