/* Reader of the golden PyTorch fixtures written by gen_golden.py: cases.txt (one case per line,
 * `name key=value ...`), inputs.f32 and expected.f64 (little-endian arrays the cases index).
 * The format is described in gen_golden.py's docstring. */
#ifndef CONVND_GOLDEN_FIXTURE_H
#define CONVND_GOLDEN_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define GOLDEN_MAX_FIELDS 48

typedef struct golden_case {
    const char *name;
    int32_t n_fields;
    const char *key[GOLDEN_MAX_FIELDS];
    const char *value[GOLDEN_MAX_FIELDS];
} golden_case;

typedef struct golden_set {
    golden_case *cases;
    int32_t count;
    float *inputs;
    int64_t n_inputs;
    double *expected;
    int64_t n_expected;
    char *text; /* cases.txt, tokenized in place */
} golden_set;

/* Loads the fixtures from dir (CONVND_TESTS_DIR "/golden"). Returns 1, or 0 with a reason. */
int golden_load(const char *dir, golden_set *set, char *err, size_t err_len);
void golden_free(golden_set *set);

/* The value of key, or NULL when the case has no such field. */
const char *golden_get(const golden_case *c, const char *key);

/* A comma-separated integer list: returns its length (at most max), -1 for "-" (argument not
 * given) or a missing key, -2 when it is not a list of integers or longer than max. */
int golden_ints(const golden_case *c, const char *key, int64_t *out, int max);

/* A single integer or real; returns 1, or 0 when missing or malformed. */
int golden_int(const golden_case *c, const char *key, int64_t *out);
int golden_real(const golden_case *c, const char *key, double *out);

/* The n values of set->inputs at the offset named by key, stored in dtype (a convnd_dtype):
 * exactly, since the generator rounded them to it. Returns 1 with *out (malloc'd; NULL when the
 * offset is -1: the tensor is absent), or 0 with a reason (no such key, the values run past
 * inputs.f32, a value not exact in the dtype, no memory). */
int golden_tensor(const golden_set *set, const golden_case *c, const char *key, int64_t n,
                  int32_t dtype, void **out, char *err, size_t err_len);

#endif
