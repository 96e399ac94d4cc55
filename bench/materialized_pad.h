/* The materialized zero-pad copy (families/im2col/pad_copy.cu) as the benchmark's peers use it: what a
 * framework does when its convolution cannot express the padding. */
#ifndef CONVND_BENCH_MATERIALIZED_PAD_H
#define CONVND_BENCH_MATERIALIZED_PAD_H

#include <stdint.h>
#include "convnd.h"

/* 1 when some spatial dim has a non-zero pad_before or pad_after. */
int32_t bench_has_padding(const convnd_problem *p);

/* The forward problem on the padded input: input + P0 + P1 per dim, zero padding, the same
 * output. */
void bench_padded_problem(const convnd_problem *p, convnd_problem *out);

/* xpad (device, bench_padded_problem(p)'s x, packed in x's layout) = x zero-padded (cropped
 * where the padding is negative), asynchronously on stream. Forward problems only. */
convnd_status bench_pad_copy(const convnd_problem *p, const void *x, void *xpad, void *stream);

#endif
