/* Errata: configurations the planner never routes to on a device (docs/errata.md). A line-based,
 * human-editable file (convnd-selftest writes its failures there; a user or maintainer may add
 * lines by hand) read at plan time: CONVND_ERRATA=path, CONVND_ERRATA=off, else the default
 * $XDG_CACHE_HOME/convnd/errata (~/.cache/convnd/errata), beside where docs/api.md suggests the
 * autotune cache. */
#ifndef CONVND_ERRATA_H
#define CONVND_ERRATA_H

#include <stddef.h>
#include <stdint.h>

#include "convnd.h"
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the errata file in effect when it changed since the last call (path, inode, size or
 * modification time); CONVND_ERR_INVALID_ARGUMENT naming the file and line when it is malformed
 * (every call, until it is mended). A missing file is an empty one. The planner calls it once per
 * choice, before it asks any schedule. */
convnd_status convnd_errata_refresh(void);

/* 1 when the errata read last exclude schedule s with config on the active device for p (its
 * dtype, x layout, mode); reason then says "excluded by errata (FILE:LINE)" and the line's
 * comment. */
int32_t convnd_errata_excludes(const convnd_schedule *s, int32_t config, const convnd_problem *p,
                               char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif
