/* TensorFlow / Keras front-end (SPEC section 7): tf.nn.convolution and Keras ConvND with
 * padding "VALID", "SAME" (= ONNX SAME_UPPER, strides > 1 allowed) or Keras "causal" (1-D),
 * shapes in TensorFlow's own order (data_format input, filter [K..., C_in/groups, C_out]). */
#include "bind_common.h"
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>

/* Per-spatial-dim values of TensorFlow's strides / dilations: NULL (1), one value, one per
 * spatial dim, or one per tensor dim in data_format order with 1 on N and C. */
static convnd_status expand_tf_list(const char *name, const convnd_ints *list, int32_t dims,
                                    int channels_last, int64_t out[]) {
    if (!list || list->len != dims + 2) return convnd_bind_expand(name, list, dims, 1, 1, out);
    const int32_t c_index = channels_last ? dims + 1 : 1;
    const int32_t first_spatial = channels_last ? 1 : 2;
    if (list->v[0] != 1 || list->v[c_index] != 1) {
        char text[CONVND_LIST_TEXT];
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow %s=%s must be 1 on the batch and channel dims (%s)", name,
                            convnd_bind_ints_text(text, list),
                            channels_last ? "channels_last" : "channels_first");
    }
    for (int32_t t = 0; t < dims; ++t)
        out[t] = list->v[first_spatial + t];
    return CONVND_OK;
}

convnd_status convnd_bind_tf_conv(const convnd_shape *input, const convnd_shape *filter,
                                  int64_t bias_len, const convnd_ints *strides,
                                  convnd_tf_padding padding, const convnd_ints *dilations,
                                  convnd_tf_data_format data_format, convnd_problem *out) {
    convnd_status st;
    if ((st = convnd_bind_check_shape("input", input)) ||
        (st = convnd_bind_check_shape("filter", filter)))
        return st;
    char in_text[CONVND_LIST_TEXT], f_text[CONVND_LIST_TEXT];
    convnd_bind_shape_text(in_text, input);
    convnd_bind_shape_text(f_text, filter);
    if (input->rank < 3 || input->rank > CONVND_MAX_RANK)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: input of shape %s must have rank 3 to %d", in_text,
                            CONVND_MAX_RANK);
    if (filter->rank != input->rank)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: filter of shape %s must have the rank of input of "
                            "shape %s",
                            f_text, in_text);
    if (data_format != CONVND_TF_CHANNELS_LAST && data_format != CONVND_TF_CHANNELS_FIRST)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: data_format=%d is not channels_last (0) or "
                            "channels_first (1)",
                            (int)data_format);
    if (padding < CONVND_TF_VALID || padding > CONVND_TF_CAUSAL)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: padding=%d is not VALID (0), SAME (1) or causal (2)",
                            (int)padding);
    if (bias_len < -1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: bias_len=%" PRId64 " must be -1 (no bias) or >= 0",
                            bias_len);

    const int32_t dims = input->rank - 2;
    const int channels_last = data_format == CONVND_TF_CHANNELS_LAST;
    if (padding == CONVND_TF_CAUSAL && dims != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "Keras: padding=\"causal\" is only supported for 1-D convolutions "
                            "(input of shape %s has %d spatial dims; see convnd_bind_causal_conv)",
                            in_text, (int)dims);

    int64_t stride[CONVND_MAX_DIMS], dilation[CONVND_MAX_DIMS];
    if ((st = expand_tf_list("strides", strides, dims, channels_last, stride)) ||
        (st = expand_tf_list("dilations", dilations, dims, channels_last, dilation)))
        return st;
    int strided = 0, dilated = 0;
    for (int32_t t = 0; t < dims; ++t) {
        if (stride[t] < 1 || dilation[t] < 1) {
            char s_text[CONVND_LIST_TEXT], d_text[CONVND_LIST_TEXT];
            return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                "TensorFlow conv: strides=%s and dilations=%s must all be >= 1",
                                convnd_format_ints(s_text, sizeof s_text, stride, dims),
                                convnd_format_ints(d_text, sizeof d_text, dilation, dims));
        }
        strided |= stride[t] > 1;
        dilated |= dilation[t] > 1;
    }
    if (strided && dilated) {
        char s_text[CONVND_LIST_TEXT], d_text[CONVND_LIST_TEXT];
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow: strides > 1 not supported in conjunction with dilation "
                            "rate > 1 (strides=%s, dilations=%s)",
                            convnd_format_ints(s_text, sizeof s_text, stride, dims),
                            convnd_format_ints(d_text, sizeof d_text, dilation, dims));
    }

    const int64_t *in = input->v, *f = filter->v;
    const int64_t N = in[0], C_in = channels_last ? in[dims + 1] : in[1];
    const int64_t *spatial = in + (channels_last ? 1 : 2);
    const int64_t filter_depth = f[dims], C_out = f[dims + 1];
    if (filter_depth < 1 || C_in % filter_depth != 0 || C_in / filter_depth < 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: input depth C_in=%" PRId64
                            " must be a positive multiple of the filter depth %" PRId64
                            " (input %s, filter %s)",
                            C_in, filter_depth, in_text, f_text);
    const int64_t groups = C_in / filter_depth;
    if (C_out % groups != 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: output depth C_out=%" PRId64
                            " is not a multiple of the number of groups %" PRId64
                            " (input %s, filter %s)",
                            C_out, groups, in_text, f_text);
    if (bias_len != -1 && bias_len != C_out)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "TensorFlow conv: bias has %" PRId64
                            " elements; expected C_out=%" PRId64,
                            bias_len, C_out);

    convnd_problem p;
    convnd_problem_init(&p, dims);
    p.N = N;
    p.C_in = C_in;
    p.C_out = C_out;
    p.groups = groups;
    p.has_bias = bias_len != -1;
    p.x_layout = p.y_layout = channels_last ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST;
    for (int32_t t = 0; t < dims; ++t) {
        p.input[t] = spatial[t];
        p.kernel[t] = f[t];
        p.stride[t] = stride[t];
        p.dilation[t] = dilation[t];
        if (p.input[t] < 1 || p.kernel[t] < 1) continue; /* convnd_validate names it */
        if (padding == CONVND_TF_SAME) {
            st = convnd_bind_same_padding(t, p.input[t], p.kernel[t], p.stride[t], p.dilation[t], 1,
                                          &p.pad_before[t], &p.pad_after[t]);
            if (st) return st;
        } else if (padding == CONVND_TF_CAUSAL) {
            if (convnd_mul_overflows(p.dilation[t], p.kernel[t] - 1, &p.pad_before[t]))
                return convnd_error(CONVND_ERR_OVERFLOW,
                                    "causal padding dilation*(kernel-1) = %" PRId64 "*%" PRId64
                                    " overflows int64",
                                    p.dilation[t], p.kernel[t] - 1);
        }
    }
    return convnd_bind_finish(&p, out);
}
