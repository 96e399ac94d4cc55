/* The feature table: a named problem per SPEC feature (1-3 D, both modes, padding forms, groups,
 * depthwise, layouts, dtypes, epilogue), in tests/support/test_problem_text.h syntax. */
#ifndef CONVND_TEST_FEATURE_TABLE_H
#define CONVND_TEST_FEATURE_TABLE_H

#include <stddef.h>

/* A named case of a table: a problem in tests/support/test_problem_text.h syntax. */
typedef struct test_case_text {
    const char *id;
    const char *problem;
    int z_in_place; /* z == y */
} test_case_text;

extern const test_case_text test_feature_table[];
extern const size_t test_feature_table_count;

#endif
