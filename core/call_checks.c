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
    int64_t elem_bytes; /* the alignment its elements need */
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

/* The inputs x, w (dy), bias, z, x_prefix, x_suffix, pro_r, pro_a, pro_b of a call, in that
 * order, then the outputs y (dw) and state. A view's bytes run from its base to the end of its
 * last element (SPEC §11). */
enum { N_INPUTS = 9, N_OUTPUTS = 2, N_SPANS = N_INPUTS + N_OUTPUTS, Z_SPAN = 3 };
static void call_spans(const convnd_problem *p, const convnd_problem_sizes *sizes,
                       const convnd_io *io, tensor_span spans[N_SPANS]) {
    const convnd_problem_sizes s = *sizes;
    /* WGRAD (SPEC §10): the second operand is dy (y's shape), the output dw (w's shape) */
    const int wgrad = p->mode == CONVND_WGRAD;
    const int64_t e = s.elem_bytes;
    const int64_t f = (int64_t)sizeof(float);
    spans[0] = (tensor_span){"x", io->x, s.x_span * e, 1, e};
    spans[1] = (tensor_span){wgrad ? "dy" : "w", io->w, (wgrad ? s.y_span : s.w_numel) * e, 1, e};
    spans[2] = (tensor_span){"bias", io->bias, s.bias_numel * e, p->has_bias, e};
    spans[3] = (tensor_span){"z", io->z, s.z_span * e, p->has_z, e};
    spans[4] = (tensor_span){"x_prefix", io->x_prefix, s.prefix_span * e, p->prefix_size > 0, e};
    spans[5] = (tensor_span){"x_suffix", io->x_suffix, s.suffix_span * e, p->suffix_size > 0, e};
    /* SPEC §15: f32 whatever the dtype */
    spans[6] = (tensor_span){"pro_r", io->pro_r, s.pro_r_numel * f, s.pro_r_numel > 0, f};
    spans[7] = (tensor_span){"pro_a", io->pro_a, s.pro_a_numel * f, s.pro_a_numel > 0, f};
    spans[8] = (tensor_span){"pro_b", io->pro_b, s.pro_b_numel * f, s.pro_b_numel > 0, f};
    spans[9] = (tensor_span){wgrad ? "dw" : "y", io->y, (wgrad ? s.w_numel : s.y_span) * e, 1, e};
    spans[10] = (tensor_span){"state", io->state, s.state_numel * e, p->state_size > 0, e};
}

/* Why a required tensor may be named in a NULL-pointer message */
static const char *required_because(int i) {
    switch (i) {
    case 2:
        return " (has_bias=1)";
    case 3:
        return " (has_z=1)";
    case 4:
        return " (prefix_size > 0: pass it with convnd_plan_execute_io)";
    case 5:
        return " (suffix_size > 0: pass it with convnd_plan_execute_io)";
    case 6:
    case 7:
    case 8:
        return " (a prologue step reads it, SPEC §15: pass it with convnd_plan_execute_io)";
    case 10:
        return " (state_size > 0: pass it with convnd_plan_execute_io)";
    }
    return "";
}

convnd_status convnd_check_io(const convnd_problem *p, const convnd_problem_sizes *sizes,
                              const convnd_io *io) {
    /* SPEC §13: a stateful causal conv1d's tensors are its own (states, index tensors) */
    if (p->sequences.kind != CONVND_SEQS_NONE) return convnd_check_sequence_io(p, io);
    const convnd_problem_sizes s = *sizes;
    tensor_span spans[N_SPANS];
    call_spans(p, sizes, io, spans);
    const tensor_span *outputs = spans + N_INPUTS;

    for (int i = 0; i < N_SPANS; ++i)
        if (spans[i].required && spans[i].bytes > 0 && !spans[i].ptr)
            return convnd_error(CONVND_ERR_NULL_POINTER,
                                "%s is NULL but the problem %s %" PRId64 " bytes %s it%s",
                                spans[i].name, i < N_INPUTS ? "reads" : "writes", spans[i].bytes,
                                i < N_INPUTS ? "of" : "to", required_because(i));
    if (outputs[0].bytes == 0 && outputs[1].bytes == 0) return CONVND_OK;

    /* Elements must be naturally aligned: on the GPU a misaligned load faults, and the fault
     * leaves the CUDA context unusable, so it is refused here instead. */
    for (int i = 0; i < N_SPANS; ++i) {
        const tensor_span *t = &spans[i];
        if (!t->required || t->bytes == 0 || (uintptr_t)t->ptr % (uintptr_t)t->elem_bytes == 0)
            continue;
        return convnd_error(
            CONVND_ERR_INVALID_ARGUMENT, "%s=%p is not aligned to its %" PRId64 "-byte %s elements",
            t->name, t->ptr, t->elem_bytes, i >= 6 && i <= 8 ? "f32" : convnd_dtype_name(p->dtype));
    }

    /* No tensor may overlap an output, except z == y exactly with y's strides (in place) */
    for (int o = 0; o < N_OUTPUTS; ++o) {
        const tensor_span *out = &outputs[o];
        if (!out->required || out->bytes == 0) continue;
        for (int i = 0; i < N_INPUTS + o; ++i) {
            const tensor_span *in = &spans[i];
            if (!in->required || in->bytes == 0 || !in->ptr) continue;
            const int in_place_residual =
                o == 0 && i == Z_SPAN && in->ptr == out->ptr && !(s.strided & CONVND_STRIDED_Z);
            if (in_place_residual || !spans_overlap(in, out)) continue;
            if (o == 1)
                return convnd_error(CONVND_ERR_ALIASING,
                                    "%s [%p, +%" PRId64 " bytes) overlaps state [%p, +%" PRId64
                                    " bytes); the state may overlap no other tensor",
                                    in->name, in->ptr, in->bytes, out->ptr, out->bytes);
            return convnd_error(CONVND_ERR_ALIASING,
                                "%s [%p, +%" PRId64 " bytes) overlaps %s [%p, +%" PRId64
                                " bytes); only z == %s exactly may alias %s",
                                in->name, in->ptr, in->bytes, out->name, out->ptr, out->bytes,
                                out->name, out->name);
        }
    }
    return CONVND_OK;
}

convnd_status convnd_check_pointers(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                    const void *x, const void *w, const void *bias, const void *z,
                                    const void *y) {
    const convnd_io io = {.x = x, .w = w, .bias = bias, .z = z, .y = (void *)y};
    return convnd_check_io(p, sizes, &io);
}

convnd_status convnd_check_workspace(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                     const convnd_io *io, const void *workspace,
                                     size_t workspace_bytes) {
    if (!workspace || workspace_bytes == 0) return CONVND_OK;
    if ((uintptr_t)workspace % CONVND_WORKSPACE_ALIGNMENT != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "workspace=%p is not aligned to %d bytes (its address mod %d is %u)",
                            workspace, CONVND_WORKSPACE_ALIGNMENT, CONVND_WORKSPACE_ALIGNMENT,
                            (unsigned)((uintptr_t)workspace % CONVND_WORKSPACE_ALIGNMENT));
    tensor_span spans[N_SPANS];
    call_spans(p, sizes, io, spans);
    /* workspace_bytes is the caller's claim; a span past the address space still overlaps */
    const uintptr_t w0 = (uintptr_t)workspace;
    const uintptr_t w1 = workspace_bytes > UINTPTR_MAX - w0 ? UINTPTR_MAX : w0 + workspace_bytes;
    for (int i = 0; i < N_SPANS; ++i) {
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
