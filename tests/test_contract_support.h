/* Buffers for the contract tests (test_contract.c): a poisoned arena whose every byte must
 * survive a rejected call, device copies of a case's tensors placed off the allocator's
 * alignment, and the list of schedules that support a problem. */
#ifndef CONVND_TEST_CONTRACT_SUPPORT_H
#define CONVND_TEST_CONTRACT_SUPPORT_H

#include <stddef.h>
#include "test_conv_case.h"

/* A device region filled with a byte pattern. */
typedef struct test_arena {
    unsigned char *dev;
    size_t bytes;
} test_arena;

int test_arena_init(test_arena *a, size_t bytes);
/* 1 when every byte still holds the pattern. */
int test_arena_untouched(const test_arena *a);
void test_arena_free(test_arena *a);

/* The case's x, w, bias and z (and a poisoned y) in fresh device buffers, each starting
 * `elements` elements past the allocator's alignment (16 bytes or more). */
typedef struct test_offset_buffers {
    void *base[5];
    void *x, *w, *bias, *z, *y;
} test_offset_buffers;

int test_offset_buffers_init(test_offset_buffers *b, const test_conv_case *c, int64_t elements);
void test_offset_buffers_free(test_offset_buffers *b);

/* Every "schedule:config" that supports p, in registry order; returns how many (at most max). */
#define TEST_SPEC_LEN 128
int test_supporting_specs(const convnd_problem *p, char (*specs)[TEST_SPEC_LEN], int max);

#endif
