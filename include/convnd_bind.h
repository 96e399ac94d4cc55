/* convnd front-end bindings: each maps one framework's convolution call onto the canonical
 * convnd_problem (SPEC section 7), or returns an error whose per-thread message
 * (convnd_last_error) names the parameter and values, in the framework's own words where
 * it has them ("padding='same' is not supported for strided convolutions").
 *
 * Conventions shared by every binding:
 * - Shapes are int64 arrays in the framework's own order (PyTorch and ONNX: input
 *   [N, C_in, spatial...], weight as the framework stores it; TensorFlow: see below).
 * - Per-dimension parameter lists are convnd_ints. NULL means "argument not given" and takes
 *   the framework's default (stride 1, padding 0, dilation 1, output_padding 0). A list of
 *   length 1 is broadcast to every spatial dim where the framework does that (PyTorch,
 *   TensorFlow; never ONNX); any other length must equal the number of spatial dims, else
 *   error.
 * - bias_len: the length of the bias vector, or -1 when there is no bias. It must be C_out.
 * - On success *out is overwritten with a problem from convnd_problem_init (f32,
 *   channels-first x and w, y layout AUTO, alpha 1, beta 0, no z, no activation, exact math)
 *   plus the bound geometry and has_bias; the caller then sets dtype, layouts and epilogue.
 *   The result has passed convnd_validate. On error *out is left untouched.
 */
#ifndef CONVND_BIND_H
#define CONVND_BIND_H

#include "convnd.h"
#include "convnd_causal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor shape (rank up to CONVND_MAX_RANK). */
typedef struct convnd_shape {
    int32_t rank;
    int64_t v[CONVND_MAX_RANK];
} convnd_shape;

/* A parameter list (stride, padding, dilation, output_shape, ...): usually one entry per
 * spatial dim; TensorFlow also takes one per tensor dim, hence room for CONVND_MAX_RANK. */
typedef struct convnd_ints {
    int32_t len;
    int64_t v[CONVND_MAX_RANK];
} convnd_ints;

/* A pad list: ONNX `pads` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...], spatial dims
 * only) or a PyTorch F.pad list ([last_before, last_after, prev_before, prev_after, ...],
 * up to every dim of the tensor, N and C included). */
typedef struct convnd_pads {
    int32_t len;
    int64_t v[2 * CONVND_MAX_RANK];
} convnd_pads;

static inline convnd_ints convnd_ints1(int64_t a) {
    convnd_ints r = {1, {a, 0, 0, 0, 0}};
    return r;
}
static inline convnd_ints convnd_ints2(int64_t a, int64_t b) {
    convnd_ints r = {2, {a, b, 0, 0, 0}};
    return r;
}
static inline convnd_ints convnd_ints3(int64_t a, int64_t b, int64_t c) {
    convnd_ints r = {3, {a, b, c, 0, 0}};
    return r;
}
/* Copy len entries of v (at most the struct's capacity; a larger len is kept as given so
 * that the bindings reject it with a message, reading no more than the capacity). */
convnd_shape convnd_shape_of(int32_t rank, const int64_t *v);
convnd_ints convnd_ints_of(int32_t len, const int64_t *v);
convnd_pads convnd_pads_of(int32_t len, const int64_t *v);

/* ---- PyTorch ------------------------------------------------------------------------------ */

/* torch.nn.functional.conv{1,2,3}d(input, weight, bias, stride, padding, dilation, groups) with
 * integer padding: P0 = P1 = padding. dims is 1, 2 or 3 (which function). input has rank
 * dims+2, or dims+1 for an unbatched input (bound as N = 1). weight: [C_out, C_in/groups, K...].
 * Negative padding, non-positive stride/dilation/groups are rejected as ATen does. */
convnd_status convnd_bind_torch_conv(int32_t dims, const convnd_shape *input,
                                     const convnd_shape *weight, int64_t bias_len,
                                     const convnd_ints *stride, const convnd_ints *padding,
                                     const convnd_ints *dilation, int64_t groups,
                                     convnd_problem *out);

typedef enum convnd_torch_padding {
    CONVND_TORCH_PADDING_VALID = 0, /* padding="valid": P0 = P1 = 0 */
    CONVND_TORCH_PADDING_SAME = 1   /* padding="same": floor(D(K-1)/2) / ceil(D(K-1)/2) */
} convnd_torch_padding;

/* Which PyTorch padding rule convnd_bind_torch_padding applies. */
typedef enum convnd_torch_padding_rule {
    CONVND_TORCH_RULE_EXPLICIT = 0, /* conv{1,2,3}d(padding=int or list): P0 = P1 = padding */
    CONVND_TORCH_RULE_VALID = 1,    /* padding="valid": 0 */
    CONVND_TORCH_RULE_SAME = 2,     /* padding="same": D(K-1) split, the odd unit after */
    CONVND_TORCH_RULE_CAUSAL = 3,   /* dim 0: P0 = D(K-1), P1 = 0; the others `padding` */
    CONVND_TORCH_RULE_TRANSPOSED =
        4 /* conv_transpose: P0 = padding, P1 = padding - output_padding */
} convnd_torch_padding_rule;

/* The geometry the PyTorch front-ends below give a conv: stride and dilation expanded to one
 * entry per spatial dim, and its paddings. */
typedef struct convnd_torch_geometry {
    int32_t dims;
    int64_t stride[CONVND_MAX_DIMS], dilation[CONVND_MAX_DIMS];
    int64_t pad_before[CONVND_MAX_DIMS], pad_after[CONVND_MAX_DIMS];
} convnd_torch_geometry;

/* That geometry for a conv of this weight (its spatial sizes are the kernel) and these
 * arguments, with their argument checks (lists broadcast or of one entry per spatial dim,
 * non-negative padding, positive stride and dilation, "same" only unstrided, output_padding below
 * stride or dilation): the one implementation of these rules; the Python package's functional
 * front-ends call it. output_padding only with CONVND_TORCH_RULE_TRANSPOSED. Entries past dims
 * are 0. */
convnd_status convnd_bind_torch_geometry(convnd_torch_padding_rule rule, const convnd_shape *weight,
                                         const convnd_ints *stride, const convnd_ints *padding,
                                         const convnd_ints *dilation,
                                         const convnd_ints *output_padding,
                                         convnd_torch_geometry *out);

/* conv{1,2,3}d with padding="valid" or "same". "same" requires every stride to be 1 (ATen:
 * "padding='same' is not supported for strided convolutions"); the odd extra goes after. */
convnd_status convnd_bind_torch_conv_padding_mode(int32_t dims, const convnd_shape *input,
                                                  const convnd_shape *weight, int64_t bias_len,
                                                  const convnd_ints *stride,
                                                  convnd_torch_padding padding,
                                                  const convnd_ints *dilation, int64_t groups,
                                                  convnd_problem *out);

/* torch.nn.functional.conv_transpose{1,2,3}d(input, weight, bias, stride, padding,
 * output_padding, groups, dilation) (PyTorch's argument order). weight: [C_in, C_out/groups,
 * K...]. P0 = padding, P1 = padding - output_padding; 0 <= output_padding < max(stride,
 * dilation) per dim, else error. */
convnd_status convnd_bind_torch_conv_transpose(int32_t dims, const convnd_shape *input,
                                               const convnd_shape *weight, int64_t bias_len,
                                               const convnd_ints *stride,
                                               const convnd_ints *padding,
                                               const convnd_ints *output_padding, int64_t groups,
                                               const convnd_ints *dilation, convnd_problem *out);

/* torch.convolution(input, weight, bias, stride, padding, dilation, transposed,
 * output_padding, groups). dims = weight rank - 2; input must be batched (same rank as
 * weight). As in ATen, output_padding is ignored (but must not be negative) when !transposed. */
convnd_status convnd_bind_torch_convolution(const convnd_shape *input, const convnd_shape *weight,
                                            int64_t bias_len, const convnd_ints *stride,
                                            const convnd_ints *padding, const convnd_ints *dilation,
                                            int32_t transposed, const convnd_ints *output_padding,
                                            int64_t groups, convnd_problem *out);

/* torch._convolution(..., benchmark, deterministic, cudnn_enabled, allow_tf32): like
 * torch.convolution; allow_tf32 != 0 sets math = CONVND_MATH_ALLOW_TF32 (the other flags do not
 * change the result's meaning and are not taken). */
convnd_status convnd_bind_torch__convolution(const convnd_shape *input, const convnd_shape *weight,
                                             int64_t bias_len, const convnd_ints *stride,
                                             const convnd_ints *padding,
                                             const convnd_ints *dilation, int32_t transposed,
                                             const convnd_ints *output_padding, int64_t groups,
                                             int32_t allow_tf32, convnd_problem *out);

/* A causal convolution in PyTorch layout (as in causal video VAEs and causal conv1d): the
 * outermost spatial dim (time) gets P0 = D(K-1), P1 = 0; the other spatial dims get the
 * symmetric `padding` (NULL: 0; one entry broadcast, or dims-1 entries for dims 1..dims-1).
 * weight: [C_out, C_in/groups, K...]. */
convnd_status convnd_bind_causal_conv(int32_t dims, const convnd_shape *input,
                                      const convnd_shape *weight, int64_t bias_len,
                                      const convnd_ints *stride, const convnd_ints *padding,
                                      const convnd_ints *dilation, int64_t groups,
                                      convnd_problem *out);

/* The causal cache of chunked streaming (SPEC §12), for a causal problem as bound above (a
 * video VAE's causal conv3d, time = the outermost spatial dim; or a causal conv1d): the next
 * chunk reads `prefix_frames` cached frames from x_prefix in place of that much of the time
 * dim's zero padding (P0 -= prefix_frames; at most P0), and writes the last `state_frames`
 * frames of cat(x_prefix, x) to the state, the next chunk's prefix (state_frames = P0 = D(K-1)
 * keeps the whole receptive field; Wan's CACHE_T = 2). The first chunk: prefix_frames = 0.
 * Forward mode, time as io_axis 0; run it with convnd_plan_execute_io. */
convnd_status convnd_bind_causal_cache(const convnd_problem *causal, int64_t prefix_frames,
                                       int64_t state_frames, convnd_problem *out);

/* ---- ONNX --------------------------------------------------------------------------------- */

typedef enum convnd_onnx_auto_pad {
    CONVND_ONNX_NOTSET = 0, /* explicit `pads` (default 0) */
    CONVND_ONNX_VALID = 1,
    CONVND_ONNX_SAME_UPPER = 2, /* extra padding at the end */
    CONVND_ONNX_SAME_LOWER = 3  /* extra padding at the beginning */
} convnd_onnx_auto_pad;

/* ONNX Conv. X: [N, C, D1...], W: [M, C/group, K...] (dims = X rank - 2, 1..3). Attributes:
 * NULL = absent (dilations, strides: 1; pads: 0; kernel_shape: from W, must match W when
 * given). pads holds 2*dims entries, begin values then end values, each >= 0; pads together
 * with auto_pad other than NOTSET is an error. SAME_*: total T = max(0, (ceil(I/S)-1)*S + E - I)
 * split floor/ceil (UPPER) or ceil/floor (LOWER); strides > 1 allowed. */
convnd_status convnd_bind_onnx_conv(const convnd_shape *X, const convnd_shape *W, int64_t bias_len,
                                    convnd_onnx_auto_pad auto_pad, const convnd_ints *dilations,
                                    int64_t group, const convnd_ints *kernel_shape,
                                    const convnd_pads *pads, const convnd_ints *strides,
                                    convnd_problem *out);

/* ONNX ConvTranspose. X: [N, C, D1...], W: [C, M/group, K...]. output_padding (default 0,
 * each >= 0) and output_shape (spatial sizes only, dims entries) as in the ONNX spec:
 * - without output_shape, auto_pad NOTSET/VALID: P0 = pads_begin, P1 = pads_end - output_padding;
 * - with output_shape (pads then ignored, as the spec says) or auto_pad SAME_* (output_shape
 *   defaults to I*S): total = S(I-1) + output_padding + E - output_shape; SAME_UPPER: begin =
 *   floor(total/2), end = total - begin; NOTSET/SAME_LOWER: end = floor(total/2), begin = total -
 *   end (floor division as the ONNX reference implementation); then P0 = begin,
 *   P1 = end - output_padding, so the output size is exactly output_shape. */
convnd_status convnd_bind_onnx_conv_transpose(
    const convnd_shape *X, const convnd_shape *W, int64_t bias_len, convnd_onnx_auto_pad auto_pad,
    const convnd_ints *dilations, int64_t group, const convnd_ints *kernel_shape,
    const convnd_ints *output_padding, const convnd_ints *output_shape, const convnd_pads *pads,
    const convnd_ints *strides, convnd_problem *out);

/* ConvTranspose as onnxruntime computes it, for users who want its result (docs/api.md, "Where
 * ONNX's implementations disagree"): with auto_pad SAME_* and no output_shape, a negative total
 * padding (the kernel's extent E below the stride) is taken as 0, so the output is
 * S(I-1) + output_padding + E where the spec and onnx.reference give I*S. Everything else is
 * convnd_bind_onnx_conv_transpose's. */
convnd_status convnd_bind_onnx_conv_transpose_ort(
    const convnd_shape *X, const convnd_shape *W, int64_t bias_len, convnd_onnx_auto_pad auto_pad,
    const convnd_ints *dilations, int64_t group, const convnd_ints *kernel_shape,
    const convnd_ints *output_padding, const convnd_ints *output_shape, const convnd_pads *pads,
    const convnd_ints *strides, convnd_problem *out);

/* ONNX TensorProto element types, as ONNX numbers them (what the bindings name or refuse). */
typedef enum convnd_onnx_type {
    CONVND_ONNX_FLOAT = 1,
    CONVND_ONNX_FLOAT16 = 10,
    CONVND_ONNX_DOUBLE = 11, /* refused by name: convnd has no f64 kernels */
    CONVND_ONNX_BFLOAT16 = 16
} convnd_onnx_type;

/* ONNX CausalConvWithState (opset 27, SPEC §13): input [B, C, L] channels-first, weight
 * [C, 1, k] (1 <= k <= CONVND_CAUSAL_MAX_WIDTH), bias_len -1 (no bias) or C, past_state NULL
 * (absent: zeros) or [B, C, k-1], activation NULL or "none", "silu", "swish" (= silu), elem_type
 * the tensors' ONNX type T (FLOAT, FLOAT16, BFLOAT16; DOUBLE and others refused by name). Fills
 * the causal problem (batch B, dim C, seqlen L, width k, (B, D, L), has_bias, silu); run it with
 * convnd_causal_conv1d, weight as [C, k], initial_states = past_state, final_states =
 * present_state [B, C, k-1] (length 0 when k = 1; it holds past_state's tail and the input when
 * L < k-1), y = output [B, C, L]. On error *out is untouched. */
convnd_status convnd_bind_onnx_causal_conv_with_state(const convnd_shape *input,
                                                      const convnd_shape *weight, int64_t bias_len,
                                                      const convnd_shape *past_state,
                                                      const char *activation, int32_t elem_type,
                                                      convnd_causal_problem *out);

/* ---- TensorFlow / Keras ------------------------------------------------------------------- */

typedef enum convnd_tf_padding {
    CONVND_TF_VALID = 0,
    CONVND_TF_SAME = 1,  /* = ONNX SAME_UPPER; strides > 1 allowed */
    CONVND_TF_CAUSAL = 2 /* Keras Conv1D padding="causal": D(K-1) / 0; 1-D only */
} convnd_tf_padding;

typedef enum convnd_tf_data_format {
    CONVND_TF_CHANNELS_LAST = 0, /* NWC / NHWC / NDHWC (TensorFlow's default) */
    CONVND_TF_CHANNELS_FIRST = 1 /* NCW / NCHW / NCDHW */
} convnd_tf_data_format;

/* tf.nn.convolution / Keras ConvND. input in data_format order (dims = rank - 2); filter in
 * TensorFlow's order [K..., C_in/groups, C_out] (groups = C_in / filter's C_in/groups, which must
 * divide C_in and C_out). strides and dilations: NULL (1), 1 entry (broadcast), dims entries, or
 * dims+2 entries in data_format order whose N and C entries must be 1. strides > 1 together with
 * dilations > 1 is an error, as in TensorFlow. The problem gets x_layout and y_layout from
 * data_format; TensorFlow's filter order is neither convnd weight layout, so the caller stores the
 * weight as [C_out][C_in/g][K...] or [C_out][K...][C_in/g] and sets w_layout. */
convnd_status convnd_bind_tf_conv(const convnd_shape *input, const convnd_shape *filter,
                                  int64_t bias_len, const convnd_ints *strides,
                                  convnd_tf_padding padding, const convnd_ints *dilations,
                                  convnd_tf_data_format data_format, convnd_problem *out);

/* ---- folding a pad op into the conv that follows it --------------------------------------- */

typedef enum convnd_pad_mode {
    CONVND_PAD_CONSTANT = 0,
    CONVND_PAD_REFLECT = 1,
    CONVND_PAD_REPLICATE = 2,
    CONVND_PAD_CIRCULAR = 3
} convnd_pad_mode;

/* Folds y = conv(F.pad(x, pad, mode, value)) into the conv: *p describes the forward conv as
 * applied to the padded tensor (its input sizes are the padded sizes); on success p->input
 * becomes x's sizes and the padding absorbs the pad (P0 += before, P1 += after per spatial dim).
 * pad is in PyTorch order ([last_before, last_after, prev_before, ...], even length, at most
 * 2*(dims+2)). Negative entries (crops) fold too, where the conv does not zero-pad that same
 * side (a crop then zero padding is no padding of x). Refused with a reason: a mode other than
 * constant, a non-zero value, a non-zero entry on N or C, a crop on a side the conv pads, a
 * transposed conv, a pad that leaves x with fewer than 1 element in some dim. On error *p is
 * left untouched. */
convnd_status convnd_fold_pad(convnd_problem *p, const convnd_pads *pad, convnd_pad_mode mode,
                              double value);

/* ---- backward (SPEC §10) ------------------------------------------------------------------ */

/* The data gradient of p as a problem conv_nd runs with (x <- dy, w <- p's weight, y <- dx):
 * - forward p: the transposed conv of SPEC §4 (same S, D, P0, groups, weight; P1 - r, r = (I +
 *   P0 + P1 - E) mod S) from O to exactly x's size I; dy in p's (resolved) y layout, dx in p's
 *   x layout.
 * - transposed p: the forward conv from O to I with the same S, D, P0, P1 and weight.
 * The epilogue is reset (alpha 1, beta 0, no bias, no z, no activation): set has_z = 1, beta = 1
 * and pass z == dx to accumulate into an existing gradient. A wgrad p is an error. *out is
 * overwritten only on success. */
convnd_status convnd_bind_dgrad(const convnd_problem *p, convnd_problem *out);

/* The weight gradient of p as a CONVND_WGRAD problem (epilogue reset as above):
 * - forward p: p in wgrad mode, *swap_operands = 0: conv_nd(out, x, dy, NULL, z, dw, ...).
 * - transposed p: the wgrad problem of its adjoint forward conv (from O to I, weight read as
 *   [C_in, C_out/g, K...], which is dw's shape), *swap_operands = 1: pass x <- dy and dy <- x,
 *   conv_nd(out, dy, x, NULL, z, dw, ...).
 * swap_operands may be NULL only for a forward p. A wgrad p is an error. */
convnd_status convnd_bind_wgrad(const convnd_problem *p, convnd_problem *out,
                                int32_t *swap_operands);

/* ---- printing ----------------------------------------------------------------------------- */

/* Writes a one-line description of p ("forward 2-D N=1 C_in=3 C_out=8 groups=1 input=[9x9]
 * kernel=[4x4] stride=[1x1] dilation=[1x1] pad_before=[1x1] pad_after=[2x2] f32 x=cf w=cf y=auto
 * ...") into buf (always NUL-terminated when buf_len > 0). Returns the length it needed, like
 * snprintf. */
int convnd_problem_string(const convnd_problem *p, char *buf, size_t buf_len);

#ifdef __cplusplus
}
#endif

#endif /* CONVND_BIND_H */
