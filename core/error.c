/* Per-thread last-error message and status names. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a message that lists a few shapes; longer ones are truncated. */
#define CONVND_ERROR_CAPACITY 1024

static _Thread_local char last_error[CONVND_ERROR_CAPACITY];

convnd_status convnd_error(convnd_status s, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return s;
}

void convnd_clear_error(void) {
    last_error[0] = '\0';
}

const char *convnd_last_error(void) {
    return last_error;
}

const char *convnd_status_string(convnd_status s) {
    switch (s) {
    case CONVND_OK:
        return "ok";
    case CONVND_ERR_INVALID_ARGUMENT:
        return "invalid argument";
    case CONVND_ERR_NULL_POINTER:
        return "null pointer";
    case CONVND_ERR_ALIASING:
        return "forbidden aliasing";
    case CONVND_ERR_UNSUPPORTED:
        return "unsupported";
    case CONVND_ERR_NO_SCHEDULE:
        return "no schedule supports the problem";
    case CONVND_ERR_WORKSPACE:
        return "workspace too small";
    case CONVND_ERR_OVERFLOW:
        return "size overflow";
    case CONVND_ERR_DEVICE:
        return "device error";
    case CONVND_ERR_OUT_OF_MEMORY:
        return "out of memory";
    case CONVND_ERR_INTERNAL:
        return "internal error";
    }
    return "unknown status";
}
