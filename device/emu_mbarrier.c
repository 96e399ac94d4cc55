/* mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions:
 * mbarrier"): the object's 64 bits in shared memory hold the current phase's parity, the pending
 * and expected arrival counts and the transaction count (tx-count). A phase completes when the
 * pending arrivals and the tx-count both reach zero; the barrier then flips its parity and
 * reloads the pending count. Layout here (the ISA leaves it opaque):
 *   bits  0-19 pending arrivals, 20-39 expected arrivals, 40-60 tx-count (21-bit two's
 *   complement), 61 phase parity, 62-63 = 01 (initialized; the 0xFF poison reads as 11). */
#include "emu_hopper_internal.h"

#include <stdarg.h>
#include <stdio.h>

#define MB_MAX_COUNT ((1u << 20) - 1u) /* arrival counts and tx-count are 20-bit */
#define MB_TAG (1ull << 62)

typedef struct mb_state {
    uint32_t pending, expected, parity;
    int32_t tx;
} mb_state;

static uint64_t *check_bar(uint64_t *bar, const char *op) {
    const uint32_t addr = convnd_emu_smem_addr(bar, op);
    if (addr % 8)
        convnd_emu_fail("%s: mbarrier at shared address 0x%x is not 8-byte aligned", op, addr);
    return bar;
}

static mb_state load(uint64_t *bar, const char *op) {
    check_bar(bar, op);
    const uint64_t v = *bar;
    if ((v >> 62) != 1)
        convnd_emu_fail("%s on mbarrier at shared address 0x%x, which was never initialized "
                        "(mbarrier.init)",
                        op, convnd_emu_smem_addr(bar, op));
    mb_state s;
    s.pending = (uint32_t)(v & MB_MAX_COUNT);
    s.expected = (uint32_t)((v >> 20) & MB_MAX_COUNT);
    uint32_t tx = (uint32_t)((v >> 40) & 0x1FFFFF);
    s.tx = (tx & 0x100000) ? (int32_t)tx - (1 << 21) : (int32_t)tx;
    s.parity = (uint32_t)((v >> 61) & 1);
    return s;
}

static void store(uint64_t *bar, mb_state s) {
    *bar = MB_TAG | ((uint64_t)s.parity << 61) | ((uint64_t)((uint32_t)s.tx & 0x1FFFFF) << 40) |
           ((uint64_t)s.expected << 20) | s.pending;
}

/* An error from a thread fails it; from the async proxy (no thread runs: TMA completions) it
 * is recorded in the block, which the scheduler then abandons. Returns -1. */
static int mb_error(convnd_emu_block *b, const char *fmt, ...) CONVND_EMU_PRINTF(2, 3);
static int mb_error(convnd_emu_block *b, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (convnd_emu_self) convnd_emu_fail("%s", msg);
    if (!b->failed) {
        b->failed = 1;
        snprintf(b->message, sizeof b->message, "%s", msg);
    }
    return -1;
}

static uint32_t addr_of(const convnd_emu_block *b, const uint64_t *bar) {
    return (uint32_t)((const unsigned char *)bar - b->smem);
}

/* Phase completion check after an update; releases the waiters. */
static int settle(convnd_emu_block *b, uint64_t *bar, mb_state s, const char *op) {
    if (s.pending == 0 && s.tx < 0)
        return mb_error(b,
                        "%s: mbarrier at shared address 0x%x: transaction count underflow "
                        "(tx-count %d with every arrival done): more bytes completed than the "
                        "phase's expect_tx announced",
                        op, addr_of(b, bar), s.tx);
    if (s.pending == 0 && s.tx == 0) {
        s.parity ^= 1u;
        s.pending = s.expected;
        store(bar, s);
        convnd_emu_hopper_release(b, bar);
        return 0;
    }
    store(bar, s);
    return 0;
}

void convnd_emu_mbarrier_init(uint64_t *bar, uint32_t count) {
    check_bar(bar, "mbarrier.init");
    if (count < 1 || count > MB_MAX_COUNT)
        convnd_emu_fail("mbarrier.init count=%u must be in 1..%u", count, MB_MAX_COUNT);
    convnd_emu_hopper_get();
    mb_state s = {count, count, 0, 0};
    store(bar, s);
}

static int add_tx(convnd_emu_block *b, uint64_t *bar, mb_state *s, int64_t delta, const char *op) {
    const int64_t tx = (int64_t)s->tx + delta;
    if (tx > (int64_t)MB_MAX_COUNT || tx < -(int64_t)MB_MAX_COUNT)
        return mb_error(b,
                        "%s: mbarrier at shared address 0x%x: tx-count %lld out of range "
                        "[-(2^20-1), 2^20-1]",
                        op, addr_of(b, bar), (long long)tx);
    s->tx = (int32_t)tx;
    return 0;
}

uint64_t convnd_emu_mbarrier_arrive(uint64_t *bar, uint32_t count, uint32_t tx) {
    const char *op = tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive";
    mb_state s = load(bar, op);
    if (count < 1 || count > s.pending)
        convnd_emu_fail("%s: over-arrival on mbarrier at shared address 0x%x: arrive count %u "
                        "with %u of %u arrivals pending in phase parity %u",
                        op, convnd_emu_smem_addr(bar, op), count, s.pending, s.expected, s.parity);
    convnd_emu_block *b = convnd_emu_self->block;
    add_tx(b, bar, &s, tx, op); /* expect-tx happens before the arrive-on */
    const uint64_t state = MB_TAG | s.parity;
    s.pending -= count;
    settle(b, bar, s, op);
    return state;
}

void convnd_emu_mbarrier_expect_tx(uint64_t *bar, uint32_t tx) {
    mb_state s = load(bar, "mbarrier.expect_tx");
    add_tx(convnd_emu_self->block, bar, &s, tx, "mbarrier.expect_tx");
    store(bar, s);
}

void convnd_emu_mbarrier_complete_tx(uint64_t *bar, uint32_t tx) {
    load(bar, "mbarrier.complete_tx");
    convnd_emu_mbarrier_complete_tx_in(convnd_emu_self->block, bar, tx);
}

int convnd_emu_mbarrier_complete_tx_in(convnd_emu_block *b, uint64_t *bar, uint32_t tx) {
    const uint64_t v = *bar;
    if ((v >> 62) != 1)
        return mb_error(b,
                        "complete_tx on mbarrier at shared address 0x%x, which is not "
                        "initialized (any more)",
                        addr_of(b, bar));
    mb_state s;
    s.pending = (uint32_t)(v & MB_MAX_COUNT);
    s.expected = (uint32_t)((v >> 20) & MB_MAX_COUNT);
    uint32_t t = (uint32_t)((v >> 40) & 0x1FFFFF);
    s.tx = (t & 0x100000) ? (int32_t)t - (1 << 21) : (int32_t)t;
    s.parity = (uint32_t)((v >> 61) & 1);
    if (add_tx(b, bar, &s, -(int64_t)tx, "complete_tx") != 0) return -1;
    return settle(b, bar, s, "complete_tx");
}

int convnd_emu_mbarrier_test_wait_parity(uint64_t *bar, uint32_t parity) {
    return load(bar, "mbarrier.test_wait.parity").parity != (parity & 1u);
}

/* try_wait "is a potentially blocking instruction": a thread suspended on an incomplete phase
 * resumes when it completes, or before, at a system-dependent time limit, with the predicate
 * false (PTX ISA, mbarrier.test_wait/try_wait). The emulator takes that freedom at once: the
 * first try_wait that finds the phase incomplete returns 0 without waiting, so a kernel that
 * does not loop on the result (convnd_mbarrier_wait_parity does) runs ahead of the phase and
 * reads what is not there yet. The thread's next try_wait on the same phase blocks until it
 * completes, so a wait that can never complete is still reported, never spun on. */
int convnd_emu_mbarrier_try_wait_parity(uint64_t *bar, uint32_t parity) {
    convnd_emu_thread *t = convnd_emu_self;
    parity &= 1u;
    if (load(bar, "mbarrier.try_wait.parity").parity == parity) {
        if (t->timed_out_bar != bar || t->timed_out_parity != parity) {
            t->timed_out_bar = bar;
            t->timed_out_parity = parity;
            return 0;
        }
        while (load(bar, "mbarrier.try_wait.parity").parity == parity)
            convnd_emu_hopper_wait(bar, "mbarrier.try_wait.parity");
    }
    t->timed_out_bar = NULL;
    return 1;
}

int convnd_emu_mbarrier_try_wait(uint64_t *bar, uint64_t state) {
    if ((state >> 62) != 1)
        convnd_emu_fail("mbarrier.try_wait: state 0x%llx was not returned by "
                        "mbarrier.arrive",
                        (unsigned long long)state);
    return convnd_emu_mbarrier_try_wait_parity(bar, (uint32_t)(state & 1u));
}

void convnd_emu_mbarrier_describe(const uint64_t *bar, char *buf, size_t len) {
    const uint64_t v = *bar;
    if ((v >> 62) != 1) {
        snprintf(buf, len, "mbarrier never initialized");
        return;
    }
    uint32_t tx = (uint32_t)((v >> 40) & 0x1FFFFF);
    const int32_t stx = (tx & 0x100000) ? (int32_t)tx - (1 << 21) : (int32_t)tx;
    snprintf(buf, len,
             "mbarrier in phase parity %u: %u of %u arrivals pending, tx-count %d bytes "
             "(an expect_tx of more bytes than arrived, or a missing arrive)",
             (unsigned)((v >> 61) & 1), (unsigned)(v & MB_MAX_COUNT),
             (unsigned)((v >> 20) & MB_MAX_COUNT), stx);
}
