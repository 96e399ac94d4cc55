/* One-line text description of a problem, for examples, logs and test failure messages. */
#include "convnd_bind.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

typedef struct text_sink {
    char *buf;
    size_t len, used; /* used may exceed len: the length needed */
} text_sink;

static void append(text_sink *s, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    char *at = s->used < s->len ? s->buf + s->used : NULL;
    const size_t room = s->used < s->len ? s->len - s->used : 0;
    const int n = vsnprintf(at, room, fmt, args);
    va_end(args);
    if (n > 0) s->used += (size_t)n;
}

static void append_dims(text_sink *s, const char *name, const int64_t *v, int32_t dims) {
    append(s, " %s=[", name);
    for (int32_t t = 0; t < dims; ++t)
        append(s, "%s%" PRId64, t ? "x" : "", v[t]);
    append(s, "]");
}

int convnd_problem_string(const convnd_problem *p, char *buf, size_t buf_len) {
    text_sink s = {buf, buf_len, 0};
    if (buf_len > 0) buf[0] = '\0';
    if (!p) {
        append(&s, "(null problem)");
        return (int)s.used;
    }
    const int32_t dims = p->dims < 0 ? 0 : p->dims > CONVND_MAX_DIMS ? CONVND_MAX_DIMS : p->dims;
    append(&s, "%s %d-D N=%" PRId64 " C_in=%" PRId64 " C_out=%" PRId64 " groups=%" PRId64,
           convnd_mode_name(p->mode), (int)p->dims, p->N, p->C_in, p->C_out, p->groups);
    append_dims(&s, "input", p->input, dims);
    append_dims(&s, "kernel", p->kernel, dims);
    append_dims(&s, "stride", p->stride, dims);
    append_dims(&s, "dilation", p->dilation, dims);
    append_dims(&s, "pad_before", p->pad_before, dims);
    append_dims(&s, "pad_after", p->pad_after, dims);
    append(&s, " %s x=%s w=%s y=%s", convnd_dtype_name(p->dtype), convnd_layout_name(p->x_layout),
           convnd_layout_name(p->w_layout), convnd_layout_name(p->y_layout));
    append(&s, " bias=%d z=%d alpha=%g beta=%g act=%s%s", (int)p->has_bias, (int)p->has_z,
           (double)p->alpha, (double)p->beta, convnd_activation_name(p->activation),
           p->math == CONVND_MATH_ALLOW_TF32 ? " tf32" : "");
    const struct {
        const char *name;
        const convnd_view *view;
    } views[] = {{"x_view", &p->x_view},
                 {"y_view", &p->y_view},
                 {"z_view", &p->z_view},
                 {"prefix_view", &p->prefix_view},
                 {"suffix_view", &p->suffix_view}};
    for (int i = 0; i < 5; ++i)
        if (views[i].view->custom) {
            append_dims(&s, views[i].name, views[i].view->strides, dims + 2);
            if (views[i].view->extent) append(&s, "/%" PRId64, views[i].view->extent);
        }
    if (p->prefix_size || p->state_size)
        append(&s, " io_axis=%d prefix=%" PRId64 " state=%" PRId64, (int)p->io_axis, p->prefix_size,
               p->state_size);
    if (p->suffix_size) append(&s, " io_axis=%d suffix=%" PRId64, (int)p->io_axis, p->suffix_size);
    return (int)s.used;
}
