#include <math.h>

#include "test_duality.h"
#include "test_tolerance.h"
#include "convnd_ref.h"

convnd_problem test_dual_problem(const convnd_problem *f) {
    convnd_problem t = *f;
    t.mode = CONVND_TRANSPOSED;
    t.C_in = f->C_out;
    t.C_out = f->C_in;
    int64_t out[CONVND_MAX_DIMS];
    convnd_output_size(f, out);
    for (int32_t d = 0; d < f->dims; ++d) {
        const int64_t e = f->dilation[d] * (f->kernel[d] - 1) + 1;
        const int64_t r = (f->input[d] + f->pad_before[d] + f->pad_after[d] - e) % f->stride[d];
        t.input[d] = out[d];
        t.pad_after[d] = f->pad_after[d] - r;
    }
    t.x_layout = f->y_layout == CONVND_LAYOUT_AUTO
                     ? convnd_default_output_layout(f->x_layout, f->w_layout)
                     : f->y_layout;
    t.y_layout = f->x_layout;
    return t;
}

double test_dot(convnd_dtype dt, const void *a, const void *b, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i)
        s += convnd_ref_load(dt, a, i) * convnd_ref_load(dt, b, i);
    return s;
}

double test_dot_error_bound(const test_conv_case *c, const void *weight) {
    const test_tolerance tol = test_tolerance_for(&c->p);
    double s = 0.0;
    for (int64_t i = 0; i < c->yd.numel; ++i)
        s += fabs(convnd_ref_load(c->p.dtype, weight, i)) *
             test_tolerance_bound(&tol, c->ref[i], c->mag[i]);
    return s;
}
