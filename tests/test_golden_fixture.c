/* Reader of the golden fixtures (see golden/golden_fixture.h). Not a test itself: named test_*
 * so that the test binary's source glob picks it up next to test_golden.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convnd_ref.h"
#include "golden/golden_fixture.h"

/* The whole file in a NUL-terminated buffer; *bytes gets its size. */
static char *read_file(const char *dir, const char *name, size_t *bytes, char *err,
                       size_t err_len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)size + 1);
    if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf) {
        snprintf(err, err_len, "cannot read %s", path);
        return NULL;
    }
    buf[size] = '\0';
    *bytes = (size_t)size;
    return buf;
}

/* Next token of *cursor delimited by any of delims (ended in place with a NUL), or NULL. A
 * C11 stand-in for POSIX strtok_r. */
static char *next_token(char **cursor, const char *delims) {
    char *p = *cursor + strspn(*cursor, delims);
    if (!*p) return NULL;
    char *end = p + strcspn(p, delims);
    *cursor = *end ? end + 1 : end;
    *end = '\0';
    return p;
}

/* Splits one line into the case's name and key=value fields (in place). */
static int parse_line(char *line, golden_case *c, char *err, size_t err_len) {
    memset(c, 0, sizeof *c);
    char *cursor = line;
    for (char *tok; (tok = next_token(&cursor, " \t\r")) != NULL;) {
        if (!c->name) {
            c->name = tok;
            continue;
        }
        char *eq = strchr(tok, '=');
        if (!eq || c->n_fields == GOLDEN_MAX_FIELDS) {
            snprintf(err, err_len, "case %s: bad field '%s'", c->name, tok);
            return 0;
        }
        *eq = '\0';
        c->key[c->n_fields] = tok;
        c->value[c->n_fields] = eq + 1;
        c->n_fields++;
    }
    return c->name != NULL;
}

int golden_load(const char *dir, golden_set *set, char *err, size_t err_len) {
    memset(set, 0, sizeof *set);
    size_t text_bytes, in_bytes, ex_bytes;
    set->text = read_file(dir, "cases.txt", &text_bytes, err, err_len);
    char *inputs = set->text ? read_file(dir, "inputs.f32", &in_bytes, err, err_len) : NULL;
    char *expected = inputs ? read_file(dir, "expected.f64", &ex_bytes, err, err_len) : NULL;
    set->inputs = (float *)inputs;
    set->expected = (double *)expected;
    if (!expected) {
        golden_free(set);
        return 0;
    }
    /* the generator writes little-endian; so does every machine this project targets */
    set->n_inputs = (int64_t)(in_bytes / sizeof(float));
    set->n_expected = (int64_t)(ex_bytes / sizeof(double));

    int32_t lines = 1;
    for (const char *p = set->text; *p; p++)
        lines += *p == '\n';
    set->cases = calloc((size_t)lines, sizeof(golden_case));
    if (!set->cases) {
        snprintf(err, err_len, "out of memory");
        golden_free(set);
        return 0;
    }
    char *cursor = set->text;
    for (char *line; (line = next_token(&cursor, "\n")) != NULL;) {
        if (line[0] == '#') continue;
        if (!parse_line(line, &set->cases[set->count], err, err_len)) {
            golden_free(set);
            return 0;
        }
        set->count++;
    }
    return 1;
}

void golden_free(golden_set *set) {
    free(set->cases);
    free(set->inputs);
    free(set->expected);
    free(set->text);
    memset(set, 0, sizeof *set);
}

const char *golden_get(const golden_case *c, const char *key) {
    for (int32_t i = 0; i < c->n_fields; i++)
        if (strcmp(c->key[i], key) == 0) return c->value[i];
    return NULL;
}

int golden_ints(const golden_case *c, const char *key, int64_t *out, int max) {
    const char *v = golden_get(c, key);
    if (!v || strcmp(v, "-") == 0) return -1;
    int n = 0;
    while (*v) {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || errno || n == max || (*end != ',' && *end != '\0')) return -2;
        out[n++] = x;
        v = *end ? end + 1 : end;
    }
    return n;
}

int golden_int(const golden_case *c, const char *key, int64_t *out) {
    int64_t v[1];
    if (golden_ints(c, key, v, 1) != 1) return 0;
    *out = v[0];
    return 1;
}

int golden_real(const golden_case *c, const char *key, double *out) {
    const char *v = golden_get(c, key);
    if (!v) return 0;
    char *end;
    *out = strtod(v, &end);
    return end != v && *end == '\0';
}

int golden_tensor(const golden_set *set, const golden_case *c, const char *key, int64_t n,
                  int32_t dtype, void **out, char *err, size_t err_len) {
    *out = NULL;
    int64_t off = -1;
    if (!golden_int(c, key, &off) || off < -1) {
        snprintf(err, err_len, "%s: no offset %s", c->name, key);
        return 0;
    }
    if (off < 0) return 1;
    if (n < 0 || off + n > set->n_inputs) {
        snprintf(err, err_len, "%s: %s=%lld + %lld values past inputs.f32 (%lld)", c->name, key,
                 (long long)off, (long long)n, (long long)set->n_inputs);
        return 0;
    }
    const convnd_dtype dt = (convnd_dtype)dtype;
    void *t = malloc(convnd_ref_dtype_size(dt) * (size_t)(n > 0 ? n : 1));
    if (!t) {
        snprintf(err, err_len, "%s: no memory for %s", c->name, key);
        return 0;
    }
    for (int64_t i = 0; i < n; ++i) {
        const double v = set->inputs[off + i];
        convnd_ref_store(dt, t, i, v);
        if (convnd_ref_load(dt, t, i) != v) {
            snprintf(err, err_len, "%s: %s[%lld] = %.9g is not exact in the dtype", c->name, key,
                     (long long)i, v);
            free(t);
            return 0;
        }
    }
    *out = t;
    return 1;
}
