/* Internal view of a validated problem, shared by bind/, schedules/ and the dispatcher. */
#ifndef CONVND_PROBLEM_INTERNAL_H
#define CONVND_PROBLEM_INTERNAL_H

#include "conv_params.h"
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything validation derives from a problem, computed once with checked arithmetic. */
typedef struct convnd_problem_sizes {
    int64_t out[CONVND_MAX_DIMS]; /* output spatial sizes, entries past dims are 1 */
    int64_t x_numel, w_numel, bias_numel, y_numel;
    int64_t elem_bytes;
    convnd_layout y_layout; /* resolved, never AUTO */
    /* SPEC §12/§14: the input the conv reads, x's sizes with prefix_size and suffix_size added
     * on io_axis (entries past dims are 1), and the prefix, suffix and state tensors' element
     * counts (0 when unused) */
    int64_t in[CONVND_MAX_DIMS];
    int64_t prefix_numel, suffix_numel, state_numel;
    /* SPEC §11: element strides of x, y (dy in wgrad mode) and z over their logical dims (the
     * view's, or the packed layout's), the elements from each base pointer to the end of its
     * last one (numel when packed; 0 when empty), and which of them are not packed (bits
     * CONVND_STRIDED_X / _Y / _Z: a z whose strides differ from y's counts as strided) */
    int64_t xs[CONVND_MAX_RANK], ys[CONVND_MAX_RANK], zs[CONVND_MAX_RANK];
    int64_t x_span, y_span, z_span;
    /* SPEC §14: the prefix's and the suffix's strides (their views', or x_layout's packed ones)
     * and spans (0 when absent) */
    int64_t ps[CONVND_MAX_RANK], fs[CONVND_MAX_RANK];
    int64_t prefix_span, suffix_span;
    int32_t strided;
    /* SPEC §15: the prologue's f32 operands' element counts (0 when no step reads them) */
    int64_t pro_r_numel, pro_a_numel, pro_b_numel;
} convnd_problem_sizes;

enum { CONVND_STRIDED_X = 1, CONVND_STRIDED_Y = 2, CONVND_STRIDED_Z = 4 };

/* SPEC §11 (core/views.c), run by convnd_problem_check once sizes and y_layout are known:
 * fills s's strides, spans and strided bits; refuses negative strides, a view past its extent,
 * a self-overlapping output and a view of dw (wgrad z). */
convnd_status convnd_check_views(const convnd_problem *p, convnd_problem_sizes *s);

/* Elements from the base to the end of the last element of a tensor of this shape and these
 * strides (0 when a dim is 0); 1 when that does not fit int64. */
int convnd_view_span_overflows(const int64_t *shape, const int64_t *strides, int32_t rank,
                               int64_t *span);

/* SPEC §12 (core/io_axis.c): checks io_axis, prefix_size and state_size and fills s->in; run
 * before the output sizes, which are taken over s->in. */
convnd_status convnd_check_io_axis(const convnd_problem *p, convnd_problem_sizes *s);
/* 1 when p reads a prefix or writes a state. */
static inline int32_t convnd_has_io_axis(const convnd_problem *p) {
    return p->prefix_size > 0 || p->suffix_size > 0 || p->state_size > 0;
}

/* SPEC §13 (core/causal_validate.c): a problem with sequences is a stateful causal conv1d, every
 * field as convnd_bind_causal_conv1d sets it; and its tensors' checks (convnd_check_io's for such
 * a problem: the states and index tensors, packed). */
convnd_status convnd_check_sequences(const convnd_problem *p);
convnd_status convnd_check_sequence_io(const convnd_problem *p, const convnd_io *io);

/* SPEC §15 (core/prologue_validate.c): the prologue's steps, and its operands' counts into s
 * (run once x's count is known). */
convnd_status convnd_check_prologue(const convnd_problem *p, convnd_problem_sizes *s);
/* The operands a prologue's steps read: CONVND_PRO_READS_* bits. */
enum { CONVND_PRO_READS_R = 1, CONVND_PRO_READS_A = 2, CONVND_PRO_READS_B = 4 };
int32_t convnd_prologue_operands(const convnd_prologue *pro);

/* convnd_validate that also returns the derived sizes (s may not be NULL). */
convnd_status convnd_problem_check(const convnd_problem *p, convnd_problem_sizes *s);

/* A valid problem with everything derived from it, once: the problem with y_layout resolved
 * (never AUTO: the SPEC's default, channels-last when x or w is), its sizes and its launch
 * parameters. What a plan holds and every schedule question reads; nothing downstream derives
 * them again. */
typedef struct convnd_resolved {
    convnd_problem problem;
    convnd_problem_sizes sizes;
    convnd_conv_params params;
} convnd_resolved;

/* The one validation of a call: p into *out (zeroed first; left zeroed on an error). */
convnd_status convnd_resolve(const convnd_problem *p, convnd_resolved *out);

/* convnd_tensor_describe of a problem convnd_problem_check already made `sizes` from: no second
 * validation (a plan's own queries). */
convnd_status convnd_tensor_describe_checked(const convnd_problem *p,
                                             const convnd_problem_sizes *sizes, convnd_tensor which,
                                             convnd_tensor_desc *out);

/* Bytes per element of a dtype (0 for a value outside the enum). */
int64_t convnd_dtype_bytes(convnd_dtype dtype);

/* Element strides of a tensor of logical shape [d0, d1, d2...] (rank >= 1) stored in `layout`:
 * channels-first is row-major; channels-last keeps dim 1 innermost and the rest in order
 * (N[D]HWC, or [C_out][K...][C_in/g] for a weight). Size-0 dims count as 1, as in PyTorch.
 * The caller has checked that the product of the sizes fits int64. */
void convnd_layout_strides(const int64_t *shape, int32_t rank, convnd_layout layout,
                           int64_t *strides);

/* Validates p, pads it to 3 spatial dims (leading size-1 dims) and fills the kernels' view.
 * index64 is set when a tensor has 2^31 elements or more, or always when the environment has
 * CONVND_FORCE_INDEX64=1 (a test hook: the 64-bit paths on problems small enough to run). */
convnd_status convnd_params_from_problem(const convnd_problem *p, convnd_conv_params *out);

/* convnd_params_from_problem for a problem already validated into sizes. */
convnd_status convnd_params_from_sizes(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                       convnd_conv_params *out);

/* Checks the pointers of a conv_nd call against a valid problem: x, w and y (and bias when
 * has_bias, z when has_z) must not be NULL unless that tensor has no elements; each must be
 * aligned to the element size; no input may overlap y's bytes, except z == y exactly (in-place
 * residual). Validates p first. */
convnd_status convnd_check_call(const convnd_problem *p, const void *x, const void *w,
                                const void *bias, const void *z, const void *y);
/* The same for every tensor of a call (SPEC §12's x_prefix and state too: state, an output,
 * may overlap nothing else). */
convnd_status convnd_check_io(const convnd_problem *p, const convnd_problem_sizes *sizes,
                              const convnd_io *io);

/* The workspace of a conv_nd call that gives one (non-NULL, workspace_bytes > 0): aligned to
 * CONVND_WORKSPACE_ALIGNMENT, and its bytes overlap none of x, w, bias, z, y (it is scratch the
 * kernels write, and x is const). For a problem already validated into sizes (a plan's): it
 * validates nothing again. */
convnd_status convnd_check_workspace(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                     const convnd_io *io, const void *workspace,
                                     size_t workspace_bytes);
/* convnd_check_call's pointer checks alone, for a problem already validated into sizes. */
convnd_status convnd_check_pointers(const convnd_problem *p, const convnd_problem_sizes *sizes,
                                    const void *x, const void *w, const void *bias, const void *z,
                                    const void *y);

/* "[1, 2, 3]" into buf (truncated to buf_len); returns buf. */
const char *convnd_format_ints(char *buf, size_t buf_len, const int64_t *v, int32_t len);

/* Short names for messages ("f32", "channels-last", ...; "?" outside the enum). */
const char *convnd_dtype_name(convnd_dtype dtype);
const char *convnd_layout_name(convnd_layout layout);
const char *convnd_mode_name(convnd_mode mode);
const char *convnd_activation_name(convnd_activation activation);

#ifdef __cplusplus
}
#endif

#endif
