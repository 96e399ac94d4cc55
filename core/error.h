/* Per-thread last-error message, set wherever a status other than CONVND_OK is returned. */
#ifndef CONVND_ERROR_H
#define CONVND_ERROR_H

#include "convnd.h"

#if defined(__GNUC__)
#define CONVND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CONVND_PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Records the message (printf-style) for this thread and returns s. */
convnd_status convnd_error(convnd_status s, const char *fmt, ...) CONVND_PRINTF(2, 3);
void convnd_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif
