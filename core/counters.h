/* Process-wide counts of the library's host work (convnd_get_counters): problem validations and
 * planner runs, so that a test can assert that a cached plan is executed without either. */
#ifndef CONVND_COUNTERS_H
#define CONVND_COUNTERS_H

#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

void convnd_count_validation(void);
void convnd_count_plan(void);

#ifdef __cplusplus
}
#endif

#endif
