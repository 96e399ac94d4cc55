/* Helpers shared by the front-end bindings (bind_*.c): argument checks with messages, list
 * broadcasting, and the common ending (validate, then publish the problem). */
#ifndef CONVND_BIND_COMMON_H
#define CONVND_BIND_COMMON_H

#include "convnd_bind.h"

/* Capacities of the argument structs. */
#define CONVND_INTS_CAPACITY ((int32_t)(sizeof(((convnd_ints *)0)->v) / sizeof(int64_t)))
#define CONVND_PADS_CAPACITY ((int32_t)(sizeof(((convnd_pads *)0)->v) / sizeof(int64_t)))

/* Room for a formatted shape or list in a message. */
#define CONVND_LIST_TEXT 160

/* A shape argument: not NULL, rank within 0..CONVND_MAX_RANK, no negative size. */
convnd_status convnd_bind_check_shape(const char *name, const convnd_shape *shape);

/* "[1, 2, 3]" for a shape or list (at most its capacity of entries). */
const char *convnd_bind_shape_text(char *buf, const convnd_shape *shape);
const char *convnd_bind_ints_text(char *buf, const convnd_ints *list);

/* Expands a per-spatial-dim list to `dims` values: NULL gives default_value everywhere; one
 * entry is broadcast when `broadcast` is set; otherwise the length must be dims. The error
 * message names the list and its values. */
convnd_status convnd_bind_expand(const char *name, const convnd_ints *list, int32_t dims,
                                 int64_t default_value, int broadcast, int64_t out[]);

/* Validates `bound` and copies it to *out (which stays untouched on error). */
convnd_status convnd_bind_finish(const convnd_problem *bound, convnd_problem *out);

/* SAME padding of one dim, T = max(0, (ceil(I/S) - 1)*S + E - I), split with the odd unit
 * after (upper) or before (lower); checked arithmetic. */
convnd_status convnd_bind_same_padding(int t, int64_t I, int64_t K, int64_t S, int64_t D, int upper,
                                       int64_t *P0, int64_t *P1);

/* Effective kernel D*(K-1)+1, checked (K >= 1, D >= 1 already checked by the caller). */
convnd_status convnd_bind_effective_kernel(int t, int64_t K, int64_t D, int64_t *E);

#endif
