/* An independent model of what convnd_validate must decide, in 128-bit arithmetic: SPEC
 * sections 2, 3 and 8 written out again without the library's checked-int64 helpers, so the
 * fuzz target can tell a correct rejection from a wrong acceptance.
 *
 * The verdict is a set of acceptable statuses, not one status: when a problem breaks a rule
 * and also has a size past int64, the library may report either; and when a partial sum of a
 * size formula, evaluated left to right as the SPEC writes it, leaves int64, reporting
 * CONVND_ERR_OVERFLOW is acceptable even if the final size would fit. */
#ifndef CONVND_FUZZ_SIZE_MODEL_H
#define CONVND_FUZZ_SIZE_MODEL_H

#include <stdint.h>
#include "convnd.h"

typedef struct size_model {
    int valid;        /* every rule holds and every count fits: convnd_validate must say OK */
    int rule_broken;  /* a SPEC rule is broken: INVALID_ARGUMENT or UNSUPPORTED is acceptable */
    int may_overflow; /* some size or partial sum leaves int64: OVERFLOW is acceptable */
    /* the rest only when valid */
    int64_t out[CONVND_MAX_DIMS];
    int64_t elem_bytes;
    convnd_layout y_layout;
    /* per tensor (convnd_tensor order: x, w, bias, y, z): shape, exact element count, and the
     * extent with size-0 dims counted as 1 (what strides span) */
    int32_t rank[5];
    int64_t shape[5][CONVND_MAX_RANK];
    int64_t strides[5][CONVND_MAX_RANK];
    int64_t numel[5];
    int64_t extent[5];
} size_model;

void size_model_eval(const convnd_problem *p, size_model *m);

/* 1 when s is an acceptable answer of convnd_validate for the model's verdict. */
int size_model_accepts(const size_model *m, convnd_status s);

#endif
