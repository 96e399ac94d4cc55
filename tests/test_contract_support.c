#include "test_contract_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "test_schedule_runs.h"

static const unsigned char arena_pattern = 0xa5;

int test_arena_init(test_arena *a, size_t bytes) {
    a->bytes = bytes;
    a->dev = NULL;
    if (convnd_malloc((void **)&a->dev, bytes) != CONVND_OK) return 0;
    return convnd_memset(a->dev, arena_pattern, bytes) == CONVND_OK;
}

int test_arena_untouched(const test_arena *a) {
    unsigned char *h = malloc(a->bytes);
    if (!h || convnd_memcpy_d2h(h, a->dev, a->bytes) != CONVND_OK) {
        free(h);
        return 0;
    }
    size_t changed = 0;
    for (size_t i = 0; i < a->bytes; ++i)
        changed += h[i] != arena_pattern;
    free(h);
    return changed == 0;
}

void test_arena_free(test_arena *a) {
    if (a->dev) convnd_free(a->dev);
    a->dev = NULL;
}

/* A device copy of n elements of host (NULL: poison) starting `offset` bytes into a fresh
 * allocation (malloc's 16 bytes on the emulated device, cudaMalloc's 256 on the GPU). */
static void *upload_at(const test_conv_case *c, const void *host, int64_t n, size_t offset,
                       void **base) {
    const size_t bytes = c->esize * (size_t)(n > 0 ? n : 1);
    *base = NULL;
    if (convnd_malloc(base, bytes + offset) != CONVND_OK) return NULL;
    void *at = (char *)*base + offset;
    void *poison = NULL;
    if (!host) {
        poison = malloc(bytes);
        if (!poison) return NULL;
        test_poison_fill(c->p.dtype, poison, n > 0 ? n : 1);
        host = poison;
    }
    const convnd_status st = convnd_memcpy_h2d(at, host, bytes);
    free(poison);
    return st == CONVND_OK ? at : NULL;
}

int test_offset_buffers_init(test_offset_buffers *b, const test_conv_case *c, int64_t elements) {
    memset(b, 0, sizeof *b);
    const size_t off = c->esize * (size_t)elements;
    b->x = upload_at(c, c->hx, c->xd.numel, off, &b->base[0]);
    b->w = upload_at(c, c->hw, c->wd.numel, off, &b->base[1]);
    b->bias = upload_at(c, c->hb, c->bias_n, off, &b->base[2]);
    b->z = upload_at(c, c->hz, c->yd.numel, off, &b->base[3]);
    b->y = upload_at(c, NULL, c->yd.numel, off, &b->base[4]);
    return b->x && b->w && b->bias && b->z && b->y;
}

void test_offset_buffers_free(test_offset_buffers *b) {
    for (int i = 0; i < 5; ++i)
        if (b->base[i]) convnd_free(b->base[i]);
    memset(b, 0, sizeof *b);
}

int test_supporting_specs(const convnd_problem *p, char (*specs)[TEST_SPEC_LEN], int max) {
    int n = 0;
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        for (int32_t c = 0; c < s->num_configs && n < max; ++c) {
            snprintf(specs[n], TEST_SPEC_LEN, "%s:%s", s->name, s->config_names[c]);
            if (!test_config_skipped(specs[n]) && convnd_schedule_supports(specs[n], p, NULL, 0))
                ++n;
        }
    }
    return n;
}
