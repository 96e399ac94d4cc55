/* docs/SPEC.md is the repository's copy of the project's canonical semantics, shared/SPEC.md
 * (beside the repository: <source dir>/../shared/SPEC.md). The code cites "SPEC §N" from it, so
 * the two must stay byte for byte identical: a difference names its first differing line. A
 * clone without shared/ has nothing to compare against: the test says so and is skipped. Both
 * paths go through CONVND_TESTS_DIR (the tests folder as the binary sees it at run time), so a
 * binary built elsewhere (bench/pack-device-build.sh) looks in the checkout it runs in. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOCS_SPEC_PATH CONVND_TESTS_DIR "/../docs/SPEC.md"
#define SHARED_SPEC_PATH CONVND_TESTS_DIR "/../../shared/SPEC.md"

TestSuite(docs_spec, .timeout = 30);

/* The whole file in a malloc'd buffer (*len bytes), or NULL with errno set. */
static char *read_whole_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (buf && failed) {
        free(buf);
        buf = NULL;
        errno = EIO;
    }
    *len = n;
    return buf;
}

/* 1-based line of byte offset `at` in `text`. */
static size_t line_of(const char *text, size_t at) {
    size_t line = 1;
    for (size_t i = 0; i < at; i++)
        line += text[i] == '\n';
    return line;
}

Test(docs_spec, docs_copy_is_identical_to_the_shared_spec) {
    FILE *shared_file = fopen(SHARED_SPEC_PATH, "rb");
    if (!shared_file)
        cr_skip_test("no shared copy of the SPEC to compare docs/SPEC.md with (%s: %s): a checkout "
                     "without shared/ beside it",
                     SHARED_SPEC_PATH, strerror(errno));
    fclose(shared_file);

    size_t docs_len = 0, shared_len = 0;
    char *docs = read_whole_file(DOCS_SPEC_PATH, &docs_len);
    cr_assert(docs, "cannot read %s: %s", DOCS_SPEC_PATH, strerror(errno));
    char *shared = read_whole_file(SHARED_SPEC_PATH, &shared_len);
    cr_assert(shared, "cannot read %s: %s", SHARED_SPEC_PATH, strerror(errno));

    size_t common = docs_len < shared_len ? docs_len : shared_len, at = 0;
    while (at < common && docs[at] == shared[at])
        at++;
    int same = at == common && docs_len == shared_len;
    size_t line = line_of(docs, at);
    free(docs);
    free(shared);
    cr_assert(
        same,
        "docs/SPEC.md differs from the shared SPEC (%s) from line %zu on (byte %zu; %zu bytes "
        "against %zu): copy the shared file over it",
        SHARED_SPEC_PATH, line, at + 1, docs_len, shared_len);
}
