#include "test_failure_log.h"

#include <stdarg.h>
#include <stdio.h>

void test_failure(test_failure_log *log, const char *fmt, ...) {
    if (log->count++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(log->first, sizeof log->first, fmt, ap);
        va_end(ap);
    }
}
