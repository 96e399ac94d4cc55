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

#include "registry.h"

#define DOCS_SPEC_PATH CONVND_TESTS_DIR "/../docs/SPEC.md"
#define README_PATH CONVND_TESTS_DIR "/../README.md"
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

/* README.md's schedule table is the registry's (name, sources, summary of every schedule, in
 * planner order: convnd_schedule_table_markdown), between its two markers; and every source it
 * names exists (a "*" pattern: its folder). A schedule added, renamed or moved updates the
 * README by `convnd-bench --list-markdown`. */
Test(docs_spec, readme_schedule_table_is_the_registry) {
    size_t len = 0;
    char *readme = read_whole_file(README_PATH, &len);
    cr_assert(readme, "%s: %s", README_PATH, strerror(errno));
    char *text = malloc(len + 1);
    cr_assert(text);
    memcpy(text, readme, len);
    text[len] = '\0';
    const char *begin_mark = "<!-- schedule table: convnd-bench --list-markdown -->\n";
    const char *end_mark = "<!-- end of the schedule table -->";
    char *begin = strstr(text, begin_mark), *end = begin ? strstr(begin, end_mark) : NULL;
    cr_assert(begin && end, "README.md has no '%s' ... '%s' section", begin_mark, end_mark);
    begin += strlen(begin_mark);
    const size_t n = convnd_schedule_table_markdown(NULL, 0);
    char *want = malloc(n + 1);
    cr_assert(want);
    convnd_schedule_table_markdown(want, n + 1);
    const size_t have = (size_t)(end - begin);
    size_t at = 0;
    while (at < have && at < n && begin[at] == want[at])
        at++;
    cr_expect(have == n && at == n,
              "README.md's schedule table differs from the registry's at its line %zu: run "
              "convnd-bench --list-markdown and paste it between the markers",
              line_of(want, at));
    for (int32_t i = 0; i < convnd_schedule_table_size; ++i) {
        const convnd_schedule *s = convnd_schedule_table[i];
        cr_expect(s->summary && s->summary[0] && s->sources && s->sources[0],
                  "schedule %s has no summary or sources", s->name);
        for (const char *at2 = s->sources; at2 && *at2;) {
            const char *comma = strstr(at2, ", ");
            const size_t item = comma ? (size_t)(comma - at2) : strlen(at2);
            char path[512];
            snprintf(path, sizeof path, "%s/../%.*s", CONVND_TESTS_DIR, (int)item, at2);
            char *star = strchr(path, '*');
            if (star) { /* a pattern: its folder */
                while (star > path && star[-1] != '/')
                    star--;
                *star = '\0';
            }
            FILE *f = fopen(path, "rb");
            cr_expect(f != NULL, "schedule %s names source %.*s, which does not exist (%s)",
                      s->name, (int)item, at2, path);
            if (f) fclose(f);
            at2 += item + (comma ? 2 : 0);
        }
    }
    free(want);
    free(text);
    free(readme);
}
