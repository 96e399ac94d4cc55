/* SPEC §11: explicit element strides for x, y (dy), z and (SPEC §14) the prefix and the suffix.
 * Validation (non-negative strides, the caller's extent, no self-overlapping output) and the
 * strides every layer reads afterwards. */
#include "checked_math.h"
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <string.h>

int convnd_view_span_overflows(const int64_t *shape, const int64_t *strides, int32_t rank,
                               int64_t *span) {
    int64_t last = 0; /* offset of the last element */
    for (int32_t i = 0; i < rank; ++i) {
        if (shape[i] == 0) {
            *span = 0;
            return 0;
        }
        int64_t step;
        if (convnd_mul_overflows(shape[i] - 1, strides[i], &step) ||
            convnd_add_overflows(last, step, &last))
            return 1;
    }
    return convnd_add_overflows(last, 1, span);
}

/* SPEC §11's rule: sorted by stride, each stride of a dim of size > 1 is at least the span of
 * the dims with smaller strides; otherwise two indices share an element. */
static int self_overlapping(const int64_t *shape, const int64_t *strides, int32_t rank) {
    int32_t order[CONVND_MAX_RANK], n = 0;
    for (int32_t i = 0; i < rank; ++i)
        if (shape[i] > 1) order[n++] = i;
    for (int32_t i = 1; i < n; ++i) /* insertion sort by stride */
        for (int32_t j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j) {
            const int32_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t span = 1; /* fits: it never exceeds the whole view's span, checked before */
    for (int32_t i = 0; i < n; ++i) {
        if (strides[order[i]] < span) return 1;
        span += (shape[order[i]] - 1) * strides[order[i]];
    }
    return 0;
}

typedef struct view_tensor {
    const char *name; /* "x", "y", "dy", "z", "prefix", "suffix" */
    const convnd_view *view;
    int64_t shape[CONVND_MAX_RANK];
    int32_t rank;
    convnd_layout layout;
    int32_t output;
} view_tensor;

/* The strides of one tensor (its view's or its packed layout's) and its span, checked. */
static convnd_status resolve_view(const view_tensor *t, int64_t elem_bytes, int64_t *strides,
                                  int64_t *span) {
    char a[160], b[160];
    const convnd_view *v = t->view;
    if (v->custom != 0 && v->custom != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "%s_view.custom=%d must be 0 or 1",
                            t->name, (int)v->custom);
    if (!v->custom) {
        convnd_layout_strides(t->shape, t->rank, t->layout, strides);
    } else {
        for (int32_t i = 0; i < t->rank; ++i)
            if (v->strides[i] < 0)
                return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                                    "%s_view.strides[%d]=%" PRId64 " must be >= 0", t->name, (int)i,
                                    v->strides[i]);
        memcpy(strides, v->strides, sizeof(int64_t) * (size_t)t->rank);
    }
    int64_t bytes;
    if (convnd_view_span_overflows(t->shape, strides, t->rank, span) ||
        convnd_mul_overflows(*span, elem_bytes, &bytes))
        return convnd_error(CONVND_ERR_OVERFLOW,
                            "%s_view of shape %s with strides %s reaches past what int64 can count",
                            t->name, convnd_format_ints(a, sizeof a, t->shape, t->rank),
                            convnd_format_ints(b, sizeof b, strides, t->rank));
    if (!v->custom) return CONVND_OK;
    if (v->extent < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s_view.extent=%" PRId64 " must be >= 0 (0: unchecked)", t->name,
                            v->extent);
    if (v->extent > 0 && *span > v->extent)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s_view of shape %s with strides %s reaches %" PRId64
                            " elements from its base, past its extent=%" PRId64,
                            t->name, convnd_format_ints(a, sizeof a, t->shape, t->rank),
                            convnd_format_ints(b, sizeof b, strides, t->rank), *span, v->extent);
    if (t->output && self_overlapping(t->shape, strides, t->rank))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s_view of shape %s with strides %s overlaps itself: an output "
                            "needs each stride, sorted, at least the span of the smaller ones",
                            t->name, convnd_format_ints(a, sizeof a, t->shape, t->rank),
                            convnd_format_ints(b, sizeof b, strides, t->rank));
    return CONVND_OK;
}

/* 1 when strides address the tensor exactly as its packed layout does (sizes-1 dims aside). */
static int32_t view_is_packed(const view_tensor *t, const int64_t *strides) {
    int64_t packed[CONVND_MAX_RANK];
    convnd_layout_strides(t->shape, t->rank, t->layout, packed);
    for (int32_t i = 0; i < t->rank; ++i)
        if (t->shape[i] > 1 && strides[i] != packed[i]) return 0;
    return 1;
}

/* The prefix (suffix) of `size` positions on the io axis: its view's strides or x_layout's, and
 * its span (SPEC §14). */
static convnd_status resolve_halo(const view_tensor *x, const char *name, const convnd_view *view,
                                  int64_t size, int axis, int64_t elem_bytes, int64_t *strides,
                                  int64_t *span) {
    view_tensor h = *x;
    h.name = name;
    h.view = view;
    h.shape[2 + axis] = size;
    if (view->custom && size == 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "%s_view.custom=1 but the problem has no %s (%s_size=0)", name, name,
                            name);
    return resolve_view(&h, elem_bytes, strides, span);
}

convnd_status convnd_check_views(const convnd_problem *p, convnd_problem_sizes *s) {
    const int32_t rank = p->dims + 2;
    const size_t spatial = sizeof(int64_t) * (size_t)p->dims;
    const int wgrad = p->mode == CONVND_WGRAD;
    view_tensor x = {"x", &p->x_view, {p->N, p->C_in}, rank, p->x_layout, 0};
    memcpy(x.shape + 2, p->input, spatial);
    convnd_status st;
    s->prefix_span = s->suffix_span = 0;
    if (convnd_has_io_axis(p) &&
        ((st = resolve_halo(&x, "prefix", &p->prefix_view, p->prefix_size, p->io_axis,
                            s->elem_bytes, s->ps, &s->prefix_span)) ||
         (st = resolve_halo(&x, "suffix", &p->suffix_view, p->suffix_size, p->io_axis,
                            s->elem_bytes, s->fs, &s->suffix_span))))
        return st;
    if (!convnd_has_io_axis(p) && (p->prefix_view.custom || p->suffix_view.custom))
        return convnd_error(
            CONVND_ERR_INVALID_ARGUMENT, "%s_view.custom=%d but the problem has no %s (%s_size=0)",
            p->prefix_view.custom ? "prefix" : "suffix",
            (int)(p->prefix_view.custom ? p->prefix_view.custom : p->suffix_view.custom),
            p->prefix_view.custom ? "prefix" : "suffix",
            p->prefix_view.custom ? "prefix" : "suffix");
    view_tensor y = {wgrad ? "dy" : "y", &p->y_view, {p->N, p->C_out}, rank, s->y_layout, !wgrad};
    memcpy(y.shape + 2, s->out, spatial);
    if ((st = resolve_view(&x, s->elem_bytes, s->xs, &s->x_span)) ||
        (st = resolve_view(&y, s->elem_bytes, s->ys, &s->y_span)))
        return st;
    s->strided = (view_is_packed(&x, s->xs) ? 0 : CONVND_STRIDED_X) |
                 (view_is_packed(&y, s->ys) ? 0 : CONVND_STRIDED_Y);
    memcpy(s->zs, s->ys, sizeof s->zs);
    s->z_span = 0;
    if (!p->has_z) return CONVND_OK;
    if (wgrad && p->z_view.custom)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "z_view.custom=%d: in wgrad mode z (dw_prev) has w's packed layout; "
                            "views of dw are not supported",
                            (int)p->z_view.custom);
    if (wgrad) {
        s->z_span = s->w_numel;
        return CONVND_OK;
    }
    /* z shares y's view unless it has its own */
    view_tensor z = y;
    z.name = "z";
    z.output = 0;
    z.view = p->z_view.custom ? &p->z_view : &p->y_view;
    if ((st = resolve_view(&z, s->elem_bytes, s->zs, &s->z_span))) return st;
    for (int32_t i = 0; i < rank; ++i)
        if (y.shape[i] > 1 && s->zs[i] != s->ys[i]) s->strided |= CONVND_STRIDED_Z;
    return CONVND_OK;
}
