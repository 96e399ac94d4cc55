/* Pointer checks of a conv_nd call (SPEC section 8): required tensors present, and no input
 * overlapping y except the in-place residual z == y. Run before any launch, so an error leaves
 * y untouched. */
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>

typedef struct tensor_span {
    const char *name;
    const void *ptr;
    int64_t bytes;
    int required;
} tensor_span;

static int spans_overlap(const tensor_span *a, const tensor_span *b) {
    const uintptr_t a0 = (uintptr_t)a->ptr, b0 = (uintptr_t)b->ptr;
    return a0 < b0 + (uintptr_t)b->bytes && b0 < a0 + (uintptr_t)a->bytes;
}

convnd_status convnd_check_call(const convnd_problem *p, const void *x, const void *w,
                                const void *bias, const void *z, const void *y) {
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    return convnd_check_pointers(p, &s, x, w, bias, z, y);
}

convnd_status convnd_check_pointers(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                    const void *x, const void *w, const void *bias, const void *z,
                                    const void *y) {
    const convnd_problem_sizes s = *sizes;

    const tensor_span y_span = {"y", y, s.y_numel * s.elem_bytes, 1};
    const tensor_span inputs[] = {
        {"x", x, s.x_numel * s.elem_bytes, 1},
        {"w", w, s.w_numel * s.elem_bytes, 1},
        {"bias", bias, s.bias_numel * s.elem_bytes, p->has_bias},
        {"z", z, s.y_numel * s.elem_bytes, p->has_z},
    };
    const int n_inputs = (int)(sizeof inputs / sizeof inputs[0]);

    for (int i = 0; i < n_inputs; ++i)
        if (inputs[i].required && inputs[i].bytes > 0 && !inputs[i].ptr)
            return convnd_error(CONVND_ERR_NULL_POINTER,
                                "%s is NULL but the problem reads %" PRId64 " bytes of it%s",
                                inputs[i].name, inputs[i].bytes,
                                i == 2   ? " (has_bias=1)"
                                : i == 3 ? " (has_z=1)"
                                         : "");
    if (y_span.bytes > 0 && !y)
        return convnd_error(CONVND_ERR_NULL_POINTER,
                            "y is NULL but the problem writes %" PRId64 " bytes to it",
                            y_span.bytes);
    if (y_span.bytes == 0) return CONVND_OK;

    /* Elements must be naturally aligned: on the GPU a misaligned load faults, and the fault
     * leaves the CUDA context unusable, so it is refused here instead. */
    for (int i = 0; i <= n_inputs; ++i) {
        const tensor_span *t = i < n_inputs ? &inputs[i] : &y_span;
        if (!t->required || t->bytes == 0 || (uintptr_t)t->ptr % (uintptr_t)s.elem_bytes == 0)
            continue;
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s=%p is not aligned to its %" PRId64 "-byte %s elements", t->name,
                            t->ptr, s.elem_bytes, convnd_dtype_name(p->dtype));
    }

    for (int i = 0; i < n_inputs; ++i) {
        const tensor_span *in = &inputs[i];
        if (!in->required || in->bytes == 0 || !in->ptr) continue;
        const int in_place_residual = i == 3 && in->ptr == y; /* same shape and layout as y */
        if (in_place_residual || !spans_overlap(in, &y_span)) continue;
        return convnd_error(CONVND_ERR_ALIASING,
                            "%s [%p, +%" PRId64 " bytes) overlaps y [%p, +%" PRId64
                            " bytes); only z == y exactly may alias y",
                            in->name, in->ptr, in->bytes, y, y_span.bytes);
    }
    return CONVND_OK;
}
