/* The CPU reference: the canonical op of SPEC §2–§5 as plain loops, independent of the
 * library's kernels. Inputs are converted to f64, accumulation and the epilogue are in f64, and
 * the output is rounded once, at the end, to the problem's dtype.
 *
 * All pointers are host pointers. Tensors are laid out as convnd_tensor_describe() says for the
 * problem (x_layout, w_layout, resolved y_layout, or the views' strides of SPEC §11; bias is
 * [C_out]). */
#ifndef CONVND_REF_H
#define CONVND_REF_H

#include <stdint.h>
#include "convnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = act(alpha * conv(x, w) + bias + beta * z), y in p->dtype (forward or transposed p; a wgrad
 * p is CONVND_ERR_INVALID_ARGUMENT: see convnd_ref_wgrad). bias and z may be NULL when the
 * problem does not use them; z may equal y. Returns the validation status of p (nothing is
 * written on error). */
convnd_status convnd_ref_conv(const convnd_problem *p, const void *x, const void *w,
                              const void *bias, const void *z, void *y);

/* SPEC §12/§14: the conv of p over X = cat(x_prefix, x, x_suffix) along p->io_axis, made as an
 * explicit copy, and state (when state_size > 0) = X's last state_size positions, zeros before
 * X's start. */
/* X itself (malloc'd into *X, packed in x's layout) and *q, p's conv over it with no prefix,
 * suffix or state. A p without any of them is CONVND_ERR_INVALID_ARGUMENT. */
convnd_status convnd_ref_io_input(const convnd_problem *p, const void *x_prefix, const void *x,
                                  const void *x_suffix, convnd_problem *q, void **X);
/* The state of p from q and X as convnd_ref_io_input made them. */
convnd_status convnd_ref_state(const convnd_problem *p, const convnd_problem *q, const void *X,
                               void *state);
convnd_status convnd_ref_conv_io(const convnd_problem *p, const void *x_prefix, const void *x,
                                 const void *x_suffix, const void *w, const void *bias,
                                 const void *z, void *y, void *state);

/* The same result before the final rounding. y_exact and y_mag (either may be NULL) are indexed
 * like y (same strides, describe(Y).bytes / element size doubles). y_mag holds, per output, the
 * magnitude |alpha| * sum |x*w| + |bias| + |beta*z| of the terms that made it: the scale for
 * rounding- error tolerances (the activations here have a slope of at most 1.13, see below). */
convnd_status convnd_ref_conv_f64(const convnd_problem *p, const void *x, const void *w,
                                  const void *bias, const void *z, double *y_exact, double *y_mag);

/* Weight gradient (SPEC §10) straight from the definitions, in f64: dw = alpha * acc + beta * z.
 * p is a forward or wgrad problem (acc[co, cl, k] = sum_{n,o} dy[n, co, o] * x[n, ci, o*S - P0 +
 * k*D]) or a transposed one (acc[ci, co', k] = sum_{n,i} x[n, ci, i] * dy[n, co, i*S + k*D - P0],
 * dw with the transposed weight's shape). x, dy [N, C_out, O...] in y's layout, z and dw in w's
 * layout; z is read only when has_z (it may equal dw). dw_mag as y_mag above. */
convnd_status convnd_ref_wgrad_f64(const convnd_problem *p, const void *x, const void *dy,
                                   const void *z, double *dw_exact, double *dw_mag);
/* The same, rounded once to p->dtype into dw. */
convnd_status convnd_ref_wgrad(const convnd_problem *p, const void *x, const void *dy,
                               const void *z, void *dw);

/* SPEC §15: x through p's input prologue, x̂ = P(x), step by step in f32 (tests/ref/prologue_ref.c):
 * xhat (f32) is indexed like x (its span; a view's gaps keep x's values). r [N, I...], a and b
 * ([C_in] or [N, C_in]) are the f32 operands, NULL for those no step reads. Padding, a prefix and
 * a suffix are not x: the conv over x̂ is the prologue's conv. */
convnd_status convnd_ref_prologue(const convnd_problem *p, const void *x, const float *r,
                                  const float *a, const float *b, float *xhat);
/* One element's chain: v through pro's steps with operands r, a, b, rounding to dt where a
 * step says. */
float convnd_ref_prologue_value(const convnd_prologue *pro, convnd_dtype dt, float v, float r,
                                float a, float b);

/* Largest |act'(v)| over all v for the supported activations (GELU's peak slope); multiply
 * y_mag by it when bounding an activated output's error. */
#define CONVND_REF_ACT_MAX_SLOPE 1.13

/* The activation of SPEC §5 in f64. */
double convnd_ref_activate(convnd_activation act, double v);

/* ---- dtypes (ref_dtype.c) ------------------------------------------------------------------ */

/* Bytes per element of a dtype (0 for an unknown one). */
size_t convnd_ref_dtype_size(convnd_dtype dt);

/* IEEE binary16 / bfloat16 bit patterns <-> f64, round to nearest even, one rounding, with
 * subnormals, overflow to infinity and NaN kept NaN. f32 inputs convert exactly to f64, so
 * these also serve as the f32 <-> f16/bf16 conversions. */
uint16_t convnd_ref_f64_to_f16(double v);
uint16_t convnd_ref_f64_to_bf16(double v);
double convnd_ref_f16_to_f64(uint16_t h);
double convnd_ref_bf16_to_f64(uint16_t b);
static inline uint16_t convnd_ref_f32_to_f16(float v) {
    return convnd_ref_f64_to_f16(v);
}
static inline uint16_t convnd_ref_f32_to_bf16(float v) {
    return convnd_ref_f64_to_bf16(v);
}

/* Element i of an array of dtype dt, as f64 (exact). */
double convnd_ref_load(convnd_dtype dt, const void *data, int64_t i);
/* Rounds v once to dt and stores it as element i. */
void convnd_ref_store(convnd_dtype dt, void *data, int64_t i, double v);
/* v rounded to dt and back (what convnd_ref_store followed by convnd_ref_load gives). */
double convnd_ref_round(convnd_dtype dt, double v);
/* Spacing of dt's representable numbers at |v| (the unit in the last place of v's binade; the
 * subnormal spacing below the normal range). */
double convnd_ref_ulp(convnd_dtype dt, double v);

#ifdef __cplusplus
}
#endif

#endif
