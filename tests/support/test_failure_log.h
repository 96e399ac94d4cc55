/* The failures of one test thread, kept for the thread that joins it to report: Criterion's
 * assertions are not meant for secondary threads, and a plain program reports the same way. */
#ifndef CONVND_TEST_FAILURE_LOG_H
#define CONVND_TEST_FAILURE_LOG_H

typedef struct test_failure_log {
    int count;
    char first[768]; /* the first failure's message */
} test_failure_log;

/* Counts a failure; the first one's message is kept. */
void test_failure(test_failure_log *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
