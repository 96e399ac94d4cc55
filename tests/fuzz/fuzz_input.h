/* The fuzz target's reader: turns libFuzzer's bytes into parameter values. Each value starts
 * with a tag byte that picks how it is encoded, so that a mutated byte jumps between small
 * sizes, the extreme values where overflow bugs live, and raw bit patterns. Past the end of the
 * input every value reads as 0 (and every flag as false), so any byte string is a valid input.
 *
 *   int64 tag t:  t < 0x80        small: t - 16 (-16..111: kernel sizes, strides, paddings)
 *                 0x80..0x9f      an extreme value from a table (INT64_MAX, 2^31 + 1, ...)
 *                 0xa0..0xdf      2^(t - 0xa0), or -2^62 for 0xdf (sizes whose products land
 *                                 exactly on a limit)
 *                 0xe0..0xef      16 bits that follow, unsigned (image sizes, channels)
 *                 0xf0..0xff      64 raw bits that follow
 *   int32 tag t:  t != 0x7f       (int8_t)t (enums, ranks, lengths: mostly near range)
 *                 0x7f            32 raw bits that follow
 *   float tag t:  t < 0xf0        a table (0, 1, -1, 0.5, NaN, inf, FLT_MAX, a subnormal, ...)
 *                 0xf0..0xff      32 raw bits that follow
 *
 * tests/fuzz/make_corpus.py writes seeds in this encoding; keep the two in sync. */
#ifndef CONVND_FUZZ_INPUT_H
#define CONVND_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
} fuzz_input;

uint8_t fuzz_byte(fuzz_input *in);
int fuzz_flag(fuzz_input *in);
int64_t fuzz_i64(fuzz_input *in);
int32_t fuzz_i32(fuzz_input *in);
float fuzz_f32(fuzz_input *in);
double fuzz_f64(fuzz_input *in);
/* A NUL-terminated string of up to cap-1 bytes: a length byte, then that many bytes. */
void fuzz_string(fuzz_input *in, char *buf, size_t cap);

#endif
