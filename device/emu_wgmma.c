/* wgmma (PTX ISA 9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
 * wgmma.mma_async m64nNk16 (f16, bf16) and m64nNk8 (tf32) with f32 accumulators, both operands in
 * shared memory through 64-bit matrix descriptors ("Matrix Descriptor": start address,
 * leading / stride dimension byte offsets, base offset, swizzle mode) in the canonical K-major
 * and MN-major layouts of 8 x 16-byte core matrices (9.7.15.5.1.2 "Shared Memory Matrix Layout"),
 * and the accumulator register fragment layout ( thread t of the
 * warpgroup holds row 16*(t/32) + (t%32)/4 + 8*((i/2)%2), column 8*(i/4) + 2*(t%4) + i%2 in d[i]).
 *
 * Completion is deferred as on the GPU: the operands are read at issue (through the async
 * proxy: bytes written by ordinary stores without fence.proxy.async are an error), the
 * accumulators read NaN from issue until the covering wgmma.wait_group, which performs the MMA
 * (fmaf chains in increasing k, from the accumulator's value at issue). The hardware may read
 * the operands any time up to that wait, so the wait checks that their shared memory still
 * holds the bits read at issue: a stage released or refilled while its MMA is in flight is an
 * error naming the operand, not a result that depends on timing. */
#include "emu_hopper_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(convnd_emu_wgmma_type t) {
    return t == CONVND_EMU_WGMMA_F16 ? "f16" : t == CONVND_EMU_WGMMA_BF16 ? "bf16" : "tf32";
}

/* Shared-window address of element (r, k) of an operand: r along M (A) or N (B), k along K. */
static uint32_t operand_addr(uint64_t desc, uint32_t esize, int mn_major, uint32_t r, uint32_t k) {
    const uint32_t start = (uint32_t)(desc & 0x3FFF) << 4;
    const uint32_t lbo = (uint32_t)((desc >> 16) & 0x3FFF) << 4;
    const uint32_t sbo = (uint32_t)((desc >> 32) & 0x3FFF) << 4;
    const uint32_t mode = (uint32_t)(desc >> 62); /* 0 none, 1 128B, 2 64B, 3 32B */
    const uint32_t span = mode == 0 ? 16 : mode == 1 ? 128 : mode == 2 ? 64 : 32;
    const uint32_t t = 16 / esize; /* elements in 16 bytes */
    uint32_t off;
    if (!mn_major) {
        /* K-major: 8 rows of one core matrix are 16 bytes (none) or the swizzle span apart;
         * SBO steps 8 rows; LBO steps 16 bytes of K (unused when swizzled: K stays in a row). */
        off = (r % 8) * span + (r / 8) * sbo +
              (mode == 0 ? (k % t) * esize + (k / t) * lbo : k * esize);
    } else {
        /* MN-major: rows are K, each holding span / esize consecutive MN elements. None: 16-byte
         * rows, SBO steps the MN core matrices, LBO steps 8 K. Swizzled: LBO steps the MN atoms
         * (span bytes of MN), SBO steps 8 K. */
        const uint32_t per_row = span / esize;
        if (mode == 0)
            off = (r % t) * esize + (r / t) * sbo + (k % 8) * 16 + (k / 8) * lbo;
        else
            off = (r % per_row) * esize + (r / per_row) * lbo + (k % 8) * span + (k / 8) * sbo;
    }
    const uint32_t swz = mode == 0 ? 0 : mode == 1 ? 3 : mode == 2 ? 2 : 1;
    return convnd_emu_swizzle(start + off, swz);
}

static float load_elem(const unsigned char *smem, uint32_t addr, convnd_emu_wgmma_type type) {
    if (type == CONVND_EMU_WGMMA_TF32) { /* the tensor core reads the top 19 bits */
        uint32_t u;
        memcpy(&u, smem + addr, 4);
        u &= 0xFFFFE000u;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, smem + addr, 2);
    return type == CONVND_EMU_WGMMA_F16 ? convnd_emu_half_to_f32(h) : convnd_emu_bf16_to_f32(h);
}

static void check_desc(uint64_t desc, const char *which) {
    if ((desc >> 49) & 7)
        convnd_emu_fail("wgmma descriptor %s=0x%016llx: matrix base offset %u is not supported "
                        "by the emulator (start the operand on its swizzle pattern's boundary)",
                        which, (unsigned long long)desc, (unsigned)((desc >> 49) & 7));
}

float convnd_emu_wgmma_operand(const convnd_emu_block *b, uint64_t desc, convnd_emu_wgmma_type type,
                               int mn_major, uint32_t r, uint32_t k) {
    const uint32_t esize = type == CONVND_EMU_WGMMA_TF32 ? 4 : 2;
    const uint32_t addr = operand_addr(desc, esize, mn_major, r, k);
    return load_elem(b->smem, addr, type);
}

static uint32_t load_raw(const unsigned char *smem, uint32_t addr, uint32_t esize) {
    uint32_t u = 0;
    if (esize == 4) {
        memcpy(&u, smem + addr, 4);
    } else {
        uint16_t h;
        memcpy(&h, smem + addr, 2);
        u = h;
    }
    return u;
}

/* Reads a rows x K operand into out[r][k] (and its bits into raw[r][k]), checking bounds and
 * the async proxy's view. */
static void read_operand(convnd_emu_hopper *h, uint64_t desc, convnd_emu_wgmma_type type,
                         int mn_major, uint32_t rows, uint32_t kdim, float *out, uint32_t *raw,
                         const char *which) {
    check_desc(desc, which);
    const uint32_t esize = type == CONVND_EMU_WGMMA_TF32 ? 4 : 2;
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < kdim; ++k) {
            const uint32_t addr = operand_addr(desc, esize, mn_major, r, k);
            if (addr + esize > CONVND_EMU_MAX_SMEM || addr % esize)
                convnd_emu_fail("wgmma operand %s (descriptor 0x%016llx): element (%u, %u) at "
                                "shared address 0x%x is outside shared memory or misaligned",
                                which, (unsigned long long)desc, r, k, addr);
            convnd_emu_proxy_check(h, addr, esize, "wgmma.mma_async");
            out[r * kdim + k] = load_elem(h->block->smem, addr, type);
            raw[r * kdim + k] = load_raw(h->block->smem, addr, esize);
        }
}

/* At the covering wait: fails if an operand's shared memory changed since issue. */
static void check_unchanged(const convnd_emu_hopper *h, const convnd_emu_wgmma_op *op, uint32_t wg,
                            int is_b) {
    const uint64_t desc = is_b ? op->desc_b : op->desc_a;
    const uint32_t rows = is_b ? op->n : 64, esize = op->type == CONVND_EMU_WGMMA_TF32 ? 4 : 2;
    const uint32_t *raw = is_b ? op->raw_b : op->raw_a;
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < op->k; ++k) {
            const uint32_t addr = operand_addr(desc, esize, is_b ? op->trans_b : op->trans_a, r, k);
            const uint32_t now = load_raw(h->block->smem, addr, esize);
            if (now != raw[r * op->k + k])
                convnd_emu_fail("wgmma.mma_async of warpgroup %u: operand %c (descriptor "
                                "0x%016llx) element (%u, %u) at shared address 0x%x changed from "
                                "0x%x to 0x%x before the wgmma.wait_group that completes it: its "
                                "stage was released or overwritten while the MMA was in flight",
                                wg, is_b ? 'B' : 'A', (unsigned long long)desc, r, k, addr,
                                raw[r * op->k + k], now);
        }
}

typedef struct mma_arg {
    float *d;
    uint32_t n;
    convnd_emu_wgmma_type type;
    uint64_t desc_a, desc_b;
    int32_t scale_d, trans_a, trans_b;
} mma_arg;

static convnd_emu_wgmma_op *new_op(convnd_emu_wgmma_queue *q) {
    if (q->num == q->cap) {
        const uint32_t cap = q->cap ? 2 * q->cap : 16;
        convnd_emu_wgmma_op **ops = realloc(q->ops, cap * sizeof *ops);
        if (!ops) convnd_emu_fail("out of memory queueing wgmma");
        q->ops = ops;
        q->cap = cap;
    }
    convnd_emu_wgmma_op *op = calloc(1, sizeof *op);
    if (!op) convnd_emu_fail("out of memory queueing wgmma");
    q->ops[q->num++] = op;
    return op;
}

static void mma_fn(convnd_emu_hopper *h, uint32_t wg, void *const *args) {
    const mma_arg *a0 = args[0];
    const uint32_t first = wg * CONVND_EMU_WARPGROUP;
    for (uint32_t i = 0; i < CONVND_EMU_WARPGROUP; ++i) {
        const mma_arg *a = args[i];
        if (a->n != a0->n || a->type != a0->type || a->desc_a != a0->desc_a ||
            a->desc_b != a0->desc_b || a->scale_d != a0->scale_d || a->trans_a != a0->trans_a ||
            a->trans_b != a0->trans_b)
            convnd_emu_fail("wgmma.mma_async: thread %u's operands (n=%u, descriptors 0x%llx, "
                            "0x%llx) differ from thread %u's (n=%u, 0x%llx, 0x%llx): they must "
                            "be uniform over the warpgroup",
                            first + i, a->n, (unsigned long long)a->desc_a,
                            (unsigned long long)a->desc_b, first, a0->n,
                            (unsigned long long)a0->desc_a, (unsigned long long)a0->desc_b);
        if (!h->wgmma_fenced[first + i])
            convnd_emu_fail("wgmma.mma_async by thread %u without a wgmma.fence since its last "
                            "wgmma.wait_group (the accumulators may still be in use)",
                            first + i);
    }
    const uint32_t n = a0->n, k = a0->type == CONVND_EMU_WGMMA_TF32 ? 8 : 16;
    if (n < 8 || n > 256 || n % 8)
        convnd_emu_fail("wgmma.mma_async m64n%uk%u: N must be a multiple of 8 in 8..256", n, k);
    if (a0->type == CONVND_EMU_WGMMA_TF32 && (a0->trans_a || a0->trans_b))
        convnd_emu_fail("wgmma.mma_async .tf32: operands must be K-major (imm-trans 0)");
    convnd_emu_wgmma_queue *q = &h->wgmma[wg];
    /* Chained: an op still pending writes these accumulators; its result is this one's input. */
    int chained = 0;
    for (uint32_t i = 0; i < q->num; ++i)
        chained |= q->ops[i]->d[0] == a0->d;
    convnd_emu_wgmma_op *op = new_op(q);
    op->group = q->committed;
    op->n = n;
    op->k = k;
    op->chained = chained;
    op->scale_d = a0->scale_d;
    op->desc_a = a0->desc_a;
    op->desc_b = a0->desc_b;
    op->type = (int32_t)a0->type;
    op->trans_a = a0->trans_a;
    op->trans_b = a0->trans_b;
    op->a = malloc(64 * k * sizeof(float));
    op->b = malloc(n * k * sizeof(float));
    op->raw_a = malloc(64 * k * sizeof(uint32_t));
    op->raw_b = malloc(n * k * sizeof(uint32_t));
    if (!op->a || !op->b || !op->raw_a || !op->raw_b)
        convnd_emu_fail("out of memory queueing wgmma");
    read_operand(h, a0->desc_a, a0->type, a0->trans_a, 64, k, op->a, op->raw_a, "A");
    read_operand(h, a0->desc_b, a0->type, a0->trans_b, n, k, op->b, op->raw_b, "B");
    if (!chained && op->scale_d) {
        op->c = malloc((size_t)CONVND_EMU_WARPGROUP * (n / 2) * sizeof(float));
        if (!op->c) convnd_emu_fail("out of memory queueing wgmma");
    }
    for (uint32_t i = 0; i < CONVND_EMU_WARPGROUP; ++i) {
        float *d = ((const mma_arg *)args[i])->d;
        op->d[i] = d;
        if (op->c) memcpy(op->c + i * (n / 2), d, (n / 2) * sizeof(float));
        for (uint32_t j = 0; j < n / 2; ++j)
            d[j] = NAN; /* in flight: reads before the covering wait see poison */
    }
}

void convnd_emu_wgmma_mma_async(float *d, uint32_t n, convnd_emu_wgmma_type type, uint64_t desc_a,
                                uint64_t desc_b, int scale_d, int trans_a, int trans_b) {
    (void)type_name;
    mma_arg a = {d, n, type, desc_a, desc_b, scale_d != 0, trans_a != 0, trans_b != 0};
    convnd_emu_wg_collective("wgmma.mma_async", &a, mma_fn);
}

static void fence_fn(convnd_emu_hopper *h, uint32_t wg, void *const *args) {
    (void)args;
    for (uint32_t i = 0; i < CONVND_EMU_WARPGROUP; ++i)
        h->wgmma_fenced[wg * CONVND_EMU_WARPGROUP + i] = 1;
}

void convnd_emu_wgmma_fence(void) {
    convnd_emu_wg_collective("wgmma.fence", NULL, fence_fn);
}

static void commit_fn(convnd_emu_hopper *h, uint32_t wg, void *const *args) {
    (void)args;
    h->wgmma[wg].committed++;
}

void convnd_emu_wgmma_commit_group(void) {
    convnd_emu_wg_collective("wgmma.commit_group", NULL, commit_fn);
}

/* A chained op's input is its predecessor's result, kept in q->carry: the registers themselves
 * were poisoned again when later ops were issued. */
static void perform(convnd_emu_wgmma_queue *q, convnd_emu_wgmma_op *op) {
    const uint32_t half = op->n / 2;
    if (op->chained && q->carry_d != op->d[0])
        convnd_emu_fail("internal: chained wgmma without its predecessor's result");
    for (uint32_t t = 0; t < CONVND_EMU_WARPGROUP; ++t) {
        const uint32_t warp = t / 32, lane = t % 32;
        float *d = op->d[t], *carry = q->carry + t * (CONVND_EMU_WGMMA_MAX_N / 2);
        for (uint32_t i = 0; i < half; ++i) {
            const uint32_t row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
            const uint32_t col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
            float acc = op->chained ? carry[i] : op->scale_d ? op->c[t * half + i] : 0.0f;
            for (uint32_t k = 0; k < op->k; ++k)
                acc = fmaf(op->a[row * op->k + k], op->b[col * op->k + k], acc);
            carry[i] = acc;
            d[i] = acc;
        }
    }
    q->carry_d = op->d[0];
}

static void free_op(convnd_emu_wgmma_op *op) {
    free(op->a);
    free(op->b);
    free(op->raw_a);
    free(op->raw_b);
    free(op->c);
    free(op);
}

static void wait_fn(convnd_emu_hopper *h, uint32_t wg, void *const *args) {
    const uint32_t pending = *(const uint32_t *)args[0];
    for (uint32_t i = 1; i < CONVND_EMU_WARPGROUP; ++i)
        if (*(const uint32_t *)args[i] != pending)
            convnd_emu_fail("wgmma.wait_group %u by thread %u but %u by thread %u: the count must "
                            "be uniform over the warpgroup",
                            pending, wg * CONVND_EMU_WARPGROUP, *(const uint32_t *)args[i],
                            wg * CONVND_EMU_WARPGROUP + i);
    convnd_emu_wgmma_queue *q = &h->wgmma[wg];
    const uint32_t limit = q->committed > pending ? q->committed - pending : 0;
    uint32_t done = 0;
    if (!q->carry) {
        q->carry = malloc(sizeof(float) * CONVND_EMU_WARPGROUP * (CONVND_EMU_WGMMA_MAX_N / 2));
        if (!q->carry) convnd_emu_fail("out of memory performing wgmma");
    }
    /* checked before any is performed and freed: a failure leaves the queue whole */
    for (uint32_t i = 0; i < q->num && q->ops[i]->group < limit; ++i) {
        check_unchanged(h, q->ops[i], wg, 0);
        check_unchanged(h, q->ops[i], wg, 1);
    }
    while (done < q->num && q->ops[done]->group < limit) {
        perform(q, q->ops[done]);
        free_op(q->ops[done++]);
    }
    /* an empty queue has no array yet: memmove from a null pointer is undefined */
    if (done) {
        memmove(q->ops, q->ops + done, (q->num - done) * sizeof *q->ops);
        q->num -= done;
    }
    for (uint32_t i = 0; i < CONVND_EMU_WARPGROUP; ++i)
        h->wgmma_fenced[wg * CONVND_EMU_WARPGROUP + i] = 0;
}

void convnd_emu_wgmma_wait_group(uint32_t pending) {
    convnd_emu_wg_collective("wgmma.wait_group", &pending, wait_fn);
}

void convnd_emu_wgmma_reset(convnd_emu_hopper *h) {
    for (uint32_t w = 0; w < CONVND_EMU_MAX_WARPGROUPS; ++w) {
        convnd_emu_wgmma_queue *q = &h->wgmma[w];
        for (uint32_t i = 0; i < q->num; ++i)
            free_op(q->ops[i]);
        q->num = 0;
        q->committed = 0;
        q->carry_d = NULL;
    }
}

int convnd_emu_wgmma_end(convnd_emu_hopper *h, char *msg, size_t len) {
    for (uint32_t w = 0; w < CONVND_EMU_MAX_WARPGROUPS; ++w)
        if (h->wgmma[w].num) {
            snprintf(msg, len,
                     "warpgroup %u exited with %u wgmma.mma_async never completed by a "
                     "wgmma.wait_group (their accumulators were never valid)",
                     w, h->wgmma[w].num);
            return -1;
        }
    return 0;
}
