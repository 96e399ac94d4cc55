#include <criterion/criterion.h>
#include <math.h>

#include "test_duality.h"
#include "test_tolerance.h"
#include "convnd_ref.h"
#include "test_orders.h"
#include "test_problem_text.h"

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

void test_check_duality(const convnd_problem *f, const char *f_spec, const char *t_spec,
                        uint64_t seed, const char *label) {
    const convnd_problem t = test_dual_problem(f);
    char ftext[512], ttext[512], err[512];
    convnd_problem_format(ftext, sizeof ftext, f);
    convnd_problem_format(ttext, sizeof ttext, &t);
    cr_assert(convnd_validate(&t) == CONVND_OK, "%s: dual problem invalid: %s\n  T: %s", label,
              convnd_last_error(), ttext);
    test_conv_case fc, tc;
    cr_assert(test_case_init(&fc, f, 0, seed, err, sizeof err), "%s: %s", label, err);
    cr_assert(test_case_init(&tc, &t, 0, seed ^ 0x9e3779b97f4a7c15ull, err, sizeof err), "%s: %s",
              label, err);
    cr_assert(test_case_set_inputs(&tc, NULL, fc.hw, err, sizeof err), "%s: %s", label, err);
    cr_assert(fc.yd.numel == tc.xd.numel && tc.yd.numel == fc.xd.numel,
              "%s: T does not map F's output size back to its input size", label);
    for (int order = 0; order < test_order_count(); ++order) {
        test_order_apply(order);
        const convnd_status fs = test_case_run(&fc, f_spec);
        const convnd_status ts = test_case_run(&tc, t_spec);
        cr_expect(fs == CONVND_OK && ts == CONVND_OK, "%s: run failed: %s\n  F: %s\n  T: %s", label,
                  convnd_last_error(), ftext, ttext);
        if (fs != CONVND_OK || ts != CONVND_OK) continue;
        /* <F(x), y> with y = T's input, and <x, T(y)> */
        const double lhs = test_dot(f->dtype, fc.hy, tc.hx, fc.yd.numel);
        const double rhs = test_dot(f->dtype, fc.hx, tc.hy, fc.xd.numel);
        const double bound = test_dot_error_bound(&fc, tc.hx) + test_dot_error_bound(&tc, fc.hx);
        cr_expect(fabs(lhs - rhs) <= bound,
                  "%s (order %s, F by %s, T by %s): <F(x),y> = %.12g but <x,T(y)> = %.12g, "
                  "|diff| %.3g > bound %.3g\n  F: %s\n  T: %s",
                  label, test_order_name(order), f_spec, t_spec, lhs, rhs, fabs(lhs - rhs), bound,
                  ftext, ttext);
    }
    test_case_free(&fc);
    test_case_free(&tc);
}
