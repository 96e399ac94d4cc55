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

/* The inputs x, w (dy), bias, z of a call, in that order, then the output y (dw). */
enum { N_INPUTS = 4 };
static void call_spans(const convnd_problem *p, const convnd_problem_sizes *sizes, const void *x,
                       const void *w, const void *bias, const void *z, const void *y,
                       tensor_span spans[N_INPUTS + 1]) {
    const convnd_problem_sizes s = *sizes;
    /* WGRAD (SPEC §10): the second operand is dy (y's shape), the output dw (w's shape) */
    const int wgrad = p->mode == CONVND_WGRAD;
    const int64_t out_bytes = (wgrad ? s.w_numel : s.y_numel) * s.elem_bytes;
    spans[0] = (tensor_span){"x", x, s.x_numel * s.elem_bytes, 1};
    spans[1] =
        (tensor_span){wgrad ? "dy" : "w", w, (wgrad ? s.y_numel : s.w_numel) * s.elem_bytes, 1};
    spans[2] = (tensor_span){"bias", bias, s.bias_numel * s.elem_bytes, p->has_bias};
    spans[3] = (tensor_span){"z", z, out_bytes, p->has_z};
    spans[4] = (tensor_span){wgrad ? "dw" : "y", y, out_bytes, 1};
}

convnd_status convnd_check_pointers(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                    const void *x, const void *w, const void *bias, const void *z,
                                    const void *y) {
    const convnd_problem_sizes s = *sizes;
    tensor_span spans[N_INPUTS + 1];
    call_spans(p, sizes, x, w, bias, z, y, spans);
    const tensor_span *inputs = spans, y_span = spans[N_INPUTS];
    const int n_inputs = N_INPUTS;

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
                            "%s is NULL but the problem writes %" PRId64 " bytes to it",
                            y_span.name, y_span.bytes);
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
                            "%s [%p, +%" PRId64 " bytes) overlaps %s [%p, +%" PRId64
                            " bytes); only z == %s exactly may alias %s",
                            in->name, in->ptr, in->bytes, y_span.name, y, y_span.bytes, y_span.name,
                            y_span.name);
    }
    return CONVND_OK;
}

convnd_status convnd_check_workspace(const convnd_problem *p, const void *x, const void *w,
                                     const void *bias, const void *z, const void *y,
                                     const void *workspace, size_t workspace_bytes) {
    if (!workspace || workspace_bytes == 0) return CONVND_OK;
    if ((uintptr_t)workspace % CONVND_WORKSPACE_ALIGNMENT != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "workspace=%p is not aligned to %d bytes (its address mod %d is %u)",
                            workspace, CONVND_WORKSPACE_ALIGNMENT, CONVND_WORKSPACE_ALIGNMENT,
                            (unsigned)((uintptr_t)workspace % CONVND_WORKSPACE_ALIGNMENT));
    convnd_problem_sizes s;
    const convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    tensor_span spans[N_INPUTS + 1];
    call_spans(p, &s, x, w, bias, z, y, spans);
    /* workspace_bytes is the caller's claim; a span past the address space still overlaps */
    const uintptr_t w0 = (uintptr_t)workspace;
    const uintptr_t w1 = workspace_bytes > UINTPTR_MAX - w0 ? UINTPTR_MAX : w0 + workspace_bytes;
    for (int i = 0; i <= N_INPUTS; ++i) {
        const tensor_span *t = &spans[i];
        if (!t->required || t->bytes == 0 || !t->ptr) continue;
        const uintptr_t t0 = (uintptr_t)t->ptr;
        if (t0 < w1 && w0 < t0 + (uintptr_t)t->bytes)
            return convnd_error(CONVND_ERR_ALIASING,
                                "workspace [%p, +%zu bytes) overlaps %s [%p, +%" PRId64
                                " bytes); the workspace must not overlap any tensor",
                                workspace, workspace_bytes, t->name, t->ptr, t->bytes);
    }
    return CONVND_OK;
}
