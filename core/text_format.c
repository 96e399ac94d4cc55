/* Small text helpers for error messages and problem descriptions. */
#include "problem_internal.h"

#include <inttypes.h>
#include <stdio.h>

const char *convnd_format_ints(char *buf, size_t buf_len, const int64_t *v, int32_t len) {
    if (buf_len == 0) return buf;
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = -1; i <= len && used < buf_len; ++i) {
        int n;
        if (i == -1)
            n = snprintf(buf + used, buf_len - used, "[");
        else if (i == len)
            n = snprintf(buf + used, buf_len - used, "]");
        else
            n = snprintf(buf + used, buf_len - used, "%s%" PRId64, i ? ", " : "", v[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return buf;
}

const char *convnd_dtype_name(convnd_dtype dtype) {
    switch (dtype) {
    case CONVND_F32:
        return "f32";
    case CONVND_F16:
        return "f16";
    case CONVND_BF16:
        return "bf16";
    }
    return "?";
}

const char *convnd_layout_name(convnd_layout layout) {
    switch (layout) {
    case CONVND_CHANNELS_FIRST:
        return "channels-first";
    case CONVND_CHANNELS_LAST:
        return "channels-last";
    case CONVND_LAYOUT_AUTO:
        return "auto";
    }
    return "?";
}

const char *convnd_mode_name(convnd_mode mode) {
    switch (mode) {
    case CONVND_FORWARD:
        return "forward";
    case CONVND_TRANSPOSED:
        return "transposed";
    case CONVND_WGRAD:
        return "wgrad";
    }
    return "?";
}

const char *convnd_activation_name(convnd_activation activation) {
    switch (activation) {
    case CONVND_ACT_NONE:
        return "none";
    case CONVND_ACT_RELU:
        return "relu";
    case CONVND_ACT_SILU:
        return "silu";
    case CONVND_ACT_GELU:
        return "gelu";
    }
    return "?";
}
