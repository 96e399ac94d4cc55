#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_problem_text.h"

static const char *layout_text(convnd_layout l) {
    return l == CONVND_CHANNELS_LAST ? "cl" : l == CONVND_CHANNELS_FIRST ? "cf" : "auto";
}

static const char *dtype_text(convnd_dtype d) {
    return d == CONVND_F16 ? "f16" : d == CONVND_BF16 ? "bf16" : "f32";
}

static const char *act_text(convnd_activation a) {
    return a == CONVND_ACT_RELU ? "relu" : a == CONVND_ACT_SILU ? "silu" : "gelu";
}

/* appends printf output at buf[*used], never past buf_len */
static void put(char *buf, size_t buf_len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t buf_len, size_t *used, const char *fmt, ...) {
    if (*used + 1 >= buf_len) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf + *used, buf_len - *used, fmt, ap);
    va_end(ap);
    if (n > 0) *used += (size_t)n < buf_len - *used ? (size_t)n : buf_len - *used - 1;
}

static void put_list(char *buf, size_t buf_len, size_t *used, const char *name, const int64_t *v,
                     int32_t dims) {
    put(buf, buf_len, used, " %s=", name);
    for (int32_t t = 0; t < dims; ++t)
        put(buf, buf_len, used, t ? ",%lld" : "%lld", (long long)v[t]);
}

const char *convnd_problem_format(char *buf, size_t buf_len, const convnd_problem *p) {
    size_t used = 0;
    if (!buf || buf_len == 0) return buf;
    buf[0] = '\0';
    const int32_t dims = p->dims >= 1 && p->dims <= CONVND_MAX_DIMS ? p->dims : CONVND_MAX_DIMS;
    put(buf, buf_len, &used, "%s %dd N=%lld Ci=%lld Co=%lld g=%lld",
        p->mode == CONVND_TRANSPOSED ? "tr"
        : p->mode == CONVND_WGRAD    ? "wg"
                                     : "fwd",
        (int)p->dims, (long long)p->N, (long long)p->C_in, (long long)p->C_out,
        (long long)p->groups);
    put_list(buf, buf_len, &used, "I", p->input, dims);
    put_list(buf, buf_len, &used, "K", p->kernel, dims);
    put_list(buf, buf_len, &used, "S", p->stride, dims);
    put_list(buf, buf_len, &used, "D", p->dilation, dims);
    put_list(buf, buf_len, &used, "P0", p->pad_before, dims);
    put_list(buf, buf_len, &used, "P1", p->pad_after, dims);
    put(buf, buf_len, &used, " %s x=%s w=%s y=%s", dtype_text(p->dtype), layout_text(p->x_layout),
        layout_text(p->w_layout), layout_text(p->y_layout));
    if (p->has_bias) put(buf, buf_len, &used, " bias");
    if (p->has_z) put(buf, buf_len, &used, " z");
    if (p->alpha != 1.0f) put(buf, buf_len, &used, " alpha=%.9g", (double)p->alpha);
    if (p->beta != 0.0f) put(buf, buf_len, &used, " beta=%.9g", (double)p->beta);
    if (p->activation != CONVND_ACT_NONE)
        put(buf, buf_len, &used, " act=%s", act_text(p->activation));
    if (p->math == CONVND_MATH_ALLOW_TF32) put(buf, buf_len, &used, " tf32");
    const convnd_view *views[] = {&p->x_view, &p->y_view, &p->z_view, &p->prefix_view,
                                  &p->suffix_view};
    const char *names[] = {"xs", "ys", "zs", "ps", "fs"};
    for (int i = 0; i < 5; ++i)
        if (views[i]->custom) {
            put_list(buf, buf_len, &used, names[i], views[i]->strides, dims + 2);
            if (views[i]->extent) put(buf, buf_len, &used, ":%lld", (long long)views[i]->extent);
        }
    if (p->prefix_size || p->state_size)
        put(buf, buf_len, &used, " axis=%d pre=%lld st=%lld", (int)p->io_axis,
            (long long)p->prefix_size, (long long)p->state_size);
    if (p->suffix_size)
        put(buf, buf_len, &used, " axis=%d suf=%lld", (int)p->io_axis, (long long)p->suffix_size);
    return buf;
}

/* "3,-1,2" into v[0..dims-1]; one value is broadcast. */
static int parse_list(const char *s, int64_t *v, int32_t dims) {
    int32_t n = 0;
    while (n < dims) {
        char *end;
        v[n++] = strtoll(s, &end, 10);
        if (end == s) return 0;
        if (*end == '\0') break;
        if (*end != ',') return 0;
        s = end + 1;
    }
    if (n == 1)
        for (int32_t t = 1; t < dims; ++t)
            v[t] = v[0];
    else if (n != dims)
        return 0;
    return 1;
}

/* "xs=1,2,3,4[:extent]": a custom view of rank dims + 2 (SPEC §11). */
static int parse_view(const char *s, convnd_view *v, int32_t dims) {
    char list[128];
    const char *colon = strchr(s, ':');
    const size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (n >= sizeof list) return 0;
    memcpy(list, s, n);
    list[n] = '\0';
    v->custom = 1;
    v->extent = colon ? strtoll(colon + 1, NULL, 10) : 0;
    return parse_list(list, v->strides, dims + 2);
}

static int parse_layout(const char *s, convnd_layout *l) {
    if (!strcmp(s, "cl"))
        *l = CONVND_CHANNELS_LAST;
    else if (!strcmp(s, "cf"))
        *l = CONVND_CHANNELS_FIRST;
    else if (!strcmp(s, "auto"))
        *l = CONVND_LAYOUT_AUTO;
    else
        return 0;
    return 1;
}

static int parse_token(const char *tok, convnd_problem *p) {
    const char *eq = strchr(tok, '=');
    const char *val = eq ? eq + 1 : "";
    const size_t klen = eq ? (size_t)(eq - tok) : strlen(tok);
    char key[16];
    if (klen >= sizeof key) return 0;
    memcpy(key, tok, klen);
    key[klen] = '\0';
    const int32_t d = p->dims;
    if (!eq) {
        if (!strcmp(key, "f32"))
            p->dtype = CONVND_F32;
        else if (!strcmp(key, "f16"))
            p->dtype = CONVND_F16;
        else if (!strcmp(key, "bf16"))
            p->dtype = CONVND_BF16;
        else if (!strcmp(key, "bias"))
            p->has_bias = 1;
        else if (!strcmp(key, "z"))
            p->has_z = 1;
        else if (!strcmp(key, "tf32"))
            p->math = CONVND_MATH_ALLOW_TF32;
        else
            return 0;
        return 1;
    }
    if (!strcmp(key, "N"))
        p->N = strtoll(val, NULL, 10);
    else if (!strcmp(key, "Ci"))
        p->C_in = strtoll(val, NULL, 10);
    else if (!strcmp(key, "Co"))
        p->C_out = strtoll(val, NULL, 10);
    else if (!strcmp(key, "g"))
        p->groups = strtoll(val, NULL, 10);
    else if (!strcmp(key, "I"))
        return parse_list(val, p->input, d);
    else if (!strcmp(key, "K"))
        return parse_list(val, p->kernel, d);
    else if (!strcmp(key, "S"))
        return parse_list(val, p->stride, d);
    else if (!strcmp(key, "D"))
        return parse_list(val, p->dilation, d);
    else if (!strcmp(key, "P0"))
        return parse_list(val, p->pad_before, d);
    else if (!strcmp(key, "P1"))
        return parse_list(val, p->pad_after, d);
    else if (!strcmp(key, "x"))
        return parse_layout(val, &p->x_layout);
    else if (!strcmp(key, "w"))
        return parse_layout(val, &p->w_layout);
    else if (!strcmp(key, "y"))
        return parse_layout(val, &p->y_layout);
    else if (!strcmp(key, "xs"))
        return parse_view(val, &p->x_view, d);
    else if (!strcmp(key, "ys"))
        return parse_view(val, &p->y_view, d);
    else if (!strcmp(key, "zs"))
        return parse_view(val, &p->z_view, d);
    else if (!strcmp(key, "ps"))
        return parse_view(val, &p->prefix_view, d);
    else if (!strcmp(key, "fs"))
        return parse_view(val, &p->suffix_view, d);
    else if (!strcmp(key, "axis"))
        p->io_axis = (int32_t)strtol(val, NULL, 10);
    else if (!strcmp(key, "pre"))
        p->prefix_size = strtoll(val, NULL, 10);
    else if (!strcmp(key, "suf"))
        p->suffix_size = strtoll(val, NULL, 10);
    else if (!strcmp(key, "st"))
        p->state_size = strtoll(val, NULL, 10);
    else if (!strcmp(key, "alpha"))
        p->alpha = strtof(val, NULL);
    else if (!strcmp(key, "beta"))
        p->beta = strtof(val, NULL);
    else if (!strcmp(key, "act")) {
        if (!strcmp(val, "relu"))
            p->activation = CONVND_ACT_RELU;
        else if (!strcmp(val, "silu"))
            p->activation = CONVND_ACT_SILU;
        else if (!strcmp(val, "gelu"))
            p->activation = CONVND_ACT_GELU;
        else if (!strcmp(val, "none"))
            p->activation = CONVND_ACT_NONE;
        else
            return 0;
    } else
        return 0;
    return 1;
}

int test_problem_parse(const char *text, convnd_problem *p, char *err, size_t err_len) {
    char copy[512], mode[8] = "", dims[8] = "";
    if (err && err_len) err[0] = '\0';
    if (strlen(text) >= sizeof copy || sscanf(text, "%7s %7s", mode, dims) != 2 ||
        (strcmp(mode, "fwd") && strcmp(mode, "tr") && strcmp(mode, "wg")) || strlen(dims) != 2 ||
        dims[1] != 'd' || dims[0] < '1' || dims[0] > '3') {
        if (err) snprintf(err, err_len, "expected \"fwd|tr|wg 1d|2d|3d ...\": '%s'", text);
        return 0;
    }
    convnd_problem_init(p, dims[0] - '0');
    p->mode = mode[0] == 't' ? CONVND_TRANSPOSED : mode[0] == 'w' ? CONVND_WGRAD : CONVND_FORWARD;
    strcpy(copy, text);
    char *save = NULL;
    strtok_r(copy, " ", &save); /* mode */
    strtok_r(NULL, " ", &save); /* dims */
    for (char *tok = strtok_r(NULL, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (!parse_token(tok, p)) {
            if (err) snprintf(err, err_len, "bad token '%s' in '%s'", tok, text);
            return 0;
        }
    }
    return 1;
}
