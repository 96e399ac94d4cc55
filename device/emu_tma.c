/* TMA (PTX ISA "cp.async.bulk.tensor"; tensor modes in 5.5 "Tensors": tiled
 * mode, im2col mode, swizzling modes) on the emulated device.
 *
 * A load's bytes may land any time between its issue and the mbarrier phase that counts them
 * completing; the emulator models both ends with the cp.async mode (CONVND_EMU_COPIES): late (the
 * default) queues it at issue and performs it when no thread can run any more
 * (convnd_emu_hopper_progress), as late as a GPU may, so a stage read before its mbarrier wait
 * holds old data or poison; early performs it at issue, so a refill of a stage that consumers
 * still read (released too early) overwrites it; mixed chooses per load (seeded). Performing a
 * load writes the box swizzled into shared memory, out-of-bounds elements zero-filled (or NaN
 * with oob_nan), then complete_tx with the full box bytes on the mbarrier. Stores (bulk async-group
 * of the issuing thread) read shared memory through the async proxy at issue (fence.proxy.async
 * check) and write the in-bounds elements to global memory at the cp.async.bulk.wait_group that
 * covers them. */
#include "emu_hopper_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void push(convnd_emu_tma_queue *q, const convnd_emu_tma_op *op) {
    if (q->num == q->cap) {
        const uint32_t cap = q->cap ? 2 * q->cap : 32;
        convnd_emu_tma_op *ops = realloc(q->ops, cap * sizeof *ops);
        if (!ops) convnd_emu_fail("out of memory queueing TMA operations");
        q->ops = ops;
        q->cap = cap;
    }
    q->ops[q->num++] = *op;
}

/* Elements of the box along each dimension (the traversal stride skips elements). */
static uint32_t box_count(const convnd_emu_tmap *m, uint32_t d) {
    return (m->box[d] + m->element_strides[d] - 1) / m->element_strides[d];
}

static uint32_t box_bytes(const convnd_emu_tmap *m) {
    if (m->im2col) return (uint32_t)m->box[0] * m->box[1] * m->elem_bytes;
    uint32_t n = m->elem_bytes;
    for (uint32_t d = 0; d < m->rank; ++d)
        n *= box_count(m, d);
    return n;
}

static void fill_value(const convnd_emu_tmap *m, unsigned char *out) {
    memset(out, 0, m->elem_bytes);
    if (!m->oob_nan) return;
    if (m->elem_bytes == 4) {
        const uint32_t nan = 0x7FFFFFFFu;
        memcpy(out, &nan, 4);
    } else {
        const uint16_t nan = 0x7FFF;
        memcpy(out, &nan, 2);
    }
}

/* Global address of the element at pos, or NULL when out of the tensor's bounds. */
static const unsigned char *element(const convnd_emu_tmap *m, const int64_t *pos) {
    uint64_t off = 0;
    for (uint32_t d = 0; d < m->rank; ++d) {
        if (pos[d] < 0 || (uint64_t)pos[d] >= m->dims[d]) return NULL;
        off += (uint64_t)pos[d] * (d == 0 ? m->elem_bytes : m->strides[d - 1]);
    }
    return (const unsigned char *)(uintptr_t)m->address + off;
}

/* Visits the box's elements in shared-memory order: fn(pos, box byte offset). */
typedef void (*visit_fn)(void *ctx, const int64_t *pos, uint32_t offset);

static void visit_tiled(const convnd_emu_tmap *m, const int32_t *coords, visit_fn fn, void *ctx) {
    uint32_t count[5] = {1, 1, 1, 1, 1}, idx[5] = {0, 0, 0, 0, 0};
    for (uint32_t d = 0; d < m->rank; ++d)
        count[d] = box_count(m, d);
    const uint32_t total = box_bytes(m) / m->elem_bytes;
    for (uint32_t e = 0; e < total; ++e) {
        int64_t pos[5];
        for (uint32_t d = 0; d < m->rank; ++d)
            pos[d] = (int64_t)coords[d] + (int64_t)idx[d] * m->element_strides[d];
        fn(ctx, pos, e * m->elem_bytes);
        for (uint32_t d = 0; d < m->rank && ++idx[d] == count[d]; ++d)
            idx[d] = 0;
    }
}

/* im2col mode: pixels_per_column pixels walk the bounding box of each spatial dimension,
 * [lower corner, size - 1 + upper corner], with the traversal strides (element_strides of the
 * spatial dims), the innermost spatial dim first, wrapping to the lower corner and then to the
 * next image; each pixel loads channels_per_pixel channels at its position plus the im2col
 * offsets (the filter tap). */
static void visit_im2col(const convnd_emu_tmap *m, const int32_t *coords, const uint16_t *offs,
                         visit_fn fn, void *ctx) {
    const uint32_t spatial = m->rank - 2u, cpp = m->box[0], ppc = m->box[1];
    int64_t base[5];
    for (uint32_t d = 0; d < m->rank; ++d)
        base[d] = coords[d];
    for (uint32_t p = 0; p < ppc; ++p) {
        int64_t pos[5];
        pos[m->rank - 1] = base[m->rank - 1];
        for (uint32_t s = 0; s < spatial; ++s)
            pos[1 + s] = base[1 + s] + offs[s];
        for (uint32_t c = 0; c < cpp; ++c) {
            pos[0] = base[0] + c;
            fn(ctx, pos, (p * cpp + c) * m->elem_bytes);
        }
        for (uint32_t s = 0;; ++s) { /* next pixel */
            if (s == spatial) {
                base[m->rank - 1] += 1;
                break;
            }
            base[1 + s] += m->element_strides[1 + s];
            if (base[1 + s] <= (int64_t)m->dims[1 + s] - 1 + m->upper[s]) break;
            base[1 + s] = m->lower[s];
        }
    }
}

static void visit(const convnd_emu_tmap *m, const convnd_emu_tma_op *op, visit_fn fn, void *ctx) {
    if (m->im2col)
        visit_im2col(m, op->coords, op->offsets, fn, ctx);
    else
        visit_tiled(m, op->coords, fn, ctx);
}

typedef struct copy_ctx {
    convnd_emu_hopper *h;
    const convnd_emu_tmap *m;
    uint32_t smem;
} copy_ctx;

static void load_one(void *ctx, const int64_t *pos, uint32_t offset) {
    const copy_ctx *c = ctx;
    unsigned char v[8];
    const unsigned char *g = element(c->m, pos);
    if (g)
        memcpy(v, g, c->m->elem_bytes);
    else
        fill_value(c->m, v);
    convnd_emu_proxy_write(c->h, convnd_emu_swizzle(c->smem + offset, c->m->swizzle), v,
                           c->m->elem_bytes);
}

static void store_one(void *ctx, const int64_t *pos, uint32_t offset) {
    const copy_ctx *c = ctx;
    unsigned char *g = (unsigned char *)(uintptr_t)element(c->m, pos);
    if (g) /* out-of-bounds elements of a store are not written */
        memcpy(g, c->h->block->smem + convnd_emu_swizzle(c->smem + offset, c->m->swizzle),
               c->m->elem_bytes);
}

static const convnd_emu_tmap *check_map(const convnd_tmap *map, uint32_t rank, uint32_t smem,
                                        const char *op) {
    const convnd_emu_tmap *m = convnd_emu_tmap_decode(map);
    if (!m) convnd_emu_fail("%s: the tensor map was not encoded (convnd_emu_tmap_encode_*)", op);
    if (m->rank != rank)
        convnd_emu_fail("%s.%ud with a rank-%u tensor map", op, rank, (unsigned)m->rank);
    if (smem % 128) convnd_emu_fail("%s: shared address 0x%x is not 128-byte aligned", op, smem);
    if (smem + box_bytes(m) > CONVND_EMU_MAX_SMEM)
        convnd_emu_fail("%s: the %u-byte box at shared address 0x%x passes the end of shared "
                        "memory",
                        op, box_bytes(m), smem);
    return m;
}

/* The load lands: the box into shared memory, then its bytes counted on the mbarrier. */
static void perform_load(convnd_emu_hopper *h, const convnd_emu_tma_op *o) {
    const convnd_emu_tmap *m = convnd_emu_tmap_decode(&o->map);
    copy_ctx c = {h, m, o->smem};
    visit(m, o, load_one, &c);
    convnd_emu_mbarrier_complete_tx_in(h->block, o->bar, box_bytes(m));
}

void convnd_emu_tma_load(void *smem_dst, const convnd_tmap *map, uint64_t *bar,
                         const int32_t *coords, uint32_t rank, const uint16_t *offsets,
                         uint32_t num_offsets) {
    const char *op = num_offsets ? "cp.async.bulk.tensor.im2col" : "cp.async.bulk.tensor.tile";
    const uint32_t smem = convnd_emu_smem_addr(smem_dst, op);
    const convnd_emu_tmap *m = check_map(map, rank, smem, op);
    if (m->im2col != (num_offsets != 0) || (num_offsets && num_offsets != rank - 2u))
        convnd_emu_fail("%s with %u im2col offsets on a %s tensor map of rank %u", op, num_offsets,
                        m->im2col ? "im2col" : "tiled", rank);
    const uint32_t baddr = convnd_emu_smem_addr(bar, "the TMA load's mbarrier");
    if (baddr % 8 || (*bar >> 62) != 1)
        convnd_emu_fail("%s: mbarrier at shared address 0x%x is misaligned or not initialized", op,
                        baddr);
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    convnd_emu_tma_op o;
    memset(&o, 0, sizeof o);
    o.map = *map;
    o.smem = smem;
    o.bar = bar;
    for (uint32_t d = 0; d < rank; ++d)
        o.coords[d] = coords[d];
    for (uint32_t i = 0; i < num_offsets; ++i)
        o.offsets[i] = offsets[i];
    const convnd_emu_block *b = h->block;
    if (b->copies == CONVND_EMU_COPIES_EARLY ||
        (b->copies == CONVND_EMU_COPIES_MIXED && convnd_emu_copy_lands_now(convnd_emu_self))) {
        perform_load(h, &o); /* lands at issue */
        return;
    }
    push(&h->loads, &o);
}

int convnd_emu_tma_progress(convnd_emu_hopper *h) {
    const uint32_t n = h->loads.num;
    for (uint32_t i = 0; i < n && !h->block->failed; ++i)
        perform_load(h, &h->loads.ops[i]);
    /* Completions may not queue loads (no thread runs), so the queue is exactly what we did. */
    h->loads.num = 0;
    return n != 0;
}

void convnd_emu_tma_store(const convnd_tmap *map, const void *smem_src, const int32_t *coords,
                          uint32_t rank) {
    const char *op = "cp.async.bulk.tensor.global.shared";
    const uint32_t smem = convnd_emu_smem_addr(smem_src, op);
    const convnd_emu_tmap *m = check_map(map, rank, smem, op);
    if (m->im2col) convnd_emu_fail("%s: stores take tiled tensor maps", op);
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    convnd_emu_proxy_check(h, smem, box_bytes(m), "a TMA store");
    convnd_emu_tma_queue *q = &h->stores[convnd_emu_self->linear];
    convnd_emu_tma_op o;
    memset(&o, 0, sizeof o);
    o.map = *map;
    o.smem = smem;
    o.group = q->committed;
    for (uint32_t d = 0; d < rank; ++d)
        o.coords[d] = coords[d];
    push(q, &o);
}

void convnd_emu_bulk_commit_group(void) {
    convnd_emu_hopper_get()->stores[convnd_emu_self->linear].committed++;
}

void convnd_emu_bulk_wait_group(uint32_t pending) {
    convnd_emu_hopper *h = convnd_emu_hopper_get();
    convnd_emu_tma_queue *q = &h->stores[convnd_emu_self->linear];
    const uint32_t limit = q->committed > pending ? q->committed - pending : 0;
    uint32_t done = 0;
    while (done < q->num && q->ops[done].group < limit) {
        const convnd_emu_tma_op *o = &q->ops[done++];
        const convnd_emu_tmap *m = convnd_emu_tmap_decode(&o->map);
        copy_ctx c = {h, m, o->smem};
        visit(m, o, store_one, &c);
    }
    /* an empty queue has no array yet: memmove from a null pointer is undefined */
    if (done) {
        memmove(q->ops, q->ops + done, (q->num - done) * sizeof *q->ops);
        q->num -= done;
    }
}

void convnd_emu_tma_reset(convnd_emu_hopper *h) {
    h->loads.num = 0;
    for (uint32_t i = 0; i < CONVND_EMU_MAX_THREADS; ++i) {
        h->stores[i].num = 0;
        h->stores[i].committed = 0;
    }
}

int convnd_emu_tma_end(convnd_emu_hopper *h, char *msg, size_t len) {
    for (uint32_t i = 0; i < CONVND_EMU_MAX_THREADS; ++i)
        if (h->stores[i].num) {
            snprintf(msg, len,
                     "thread %u exited with %u TMA stores not completed by "
                     "cp.async.bulk.wait_group (commit_group, then wait_group 0)",
                     i, h->stores[i].num);
            return -1;
        }
    return 0;
}
