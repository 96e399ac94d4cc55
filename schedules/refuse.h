/* supports()' "no, because ..." in one call: writes the printf-style reason (when the caller
 * gave a buffer) and returns 0. Shared by the depthwise, grouped and tiled_direct registries. */
#ifndef CONVND_REFUSE_H
#define CONVND_REFUSE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

static inline int32_t convnd_refuse(char *reason, size_t reason_len, const char *fmt, ...)
    CONVND_PRINTF(3, 4);
static inline int32_t convnd_refuse(char *reason, size_t reason_len, const char *fmt, ...) {
    if (reason && reason_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, reason_len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

#endif
