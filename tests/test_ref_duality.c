/* SPEC §4 on the reference: a forward conv F and the transposed conv T built from it (same S, D,
 * P0, the same weight tensor, P1 - r) are adjoint: <F(x), v> = <x, T(v)>. The two modes share no
 * index arithmetic in the reference (a gather i = o*S - P0 + k*D versus the solutions of
 * i*S + k*D - P0 = o), so this checks each against the other with no outside oracle. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_ref.h"
#include "test_random.h"

#define DUALITY_CASES 600
#define DUALITY_SEED 0x5eed0d0a1ull
/* Both sides sum the same products x*w*v in different orders, in f64. */
#define DUALITY_TOL 1e-12

static convnd_layout random_layout(test_rng *r) {
    return test_rng_int(r, 0, 1) ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST;
}

/* A random forward problem with O >= 1 in every dim and a few hundred elements at most. */
static void draw_forward(test_rng *r, convnd_problem *f) {
    const int32_t dims = (int32_t)test_rng_int(r, 1, 3);
    const int64_t max_input[4] = {0, 14, 8, 5};
    for (;;) {
        convnd_problem_init(f, dims);
        f->N = test_rng_int(r, 1, 2);
        f->groups = test_rng_int(r, 1, 3);
        f->C_in = f->groups * test_rng_int(r, 1, 3);
        f->C_out = f->groups * test_rng_int(r, 1, 3);
        int ok = 1;
        for (int t = 0; t < dims; t++) {
            f->input[t] = test_rng_int(r, 1, max_input[dims]);
            f->kernel[t] = test_rng_int(r, 1, 4);
            f->stride[t] = test_rng_int(r, 1, 3);
            f->dilation[t] = test_rng_int(r, 1, 3);
            f->pad_before[t] = test_rng_int(r, -2, 3);
            f->pad_after[t] = test_rng_int(r, -2, 3);
            const int64_t e = f->dilation[t] * (f->kernel[t] - 1) + 1;
            ok = ok && f->input[t] + f->pad_before[t] + f->pad_after[t] >= e;
        }
        f->dtype = (convnd_dtype)test_rng_int(r, 0, 2);
        f->x_layout = random_layout(r);
        f->w_layout = random_layout(r);
        f->y_layout = random_layout(r);
        if (ok) return;
    }
}

/* SPEC §4: T maps F's output size back to F's input size. T's x and y take F's y and x layouts,
 * so that both inner products below are plain dot products over memory. */
static void adjoint_of(const convnd_problem *f, convnd_problem *t) {
    *t = *f;
    t->mode = CONVND_TRANSPOSED;
    t->C_in = f->C_out;
    t->C_out = f->C_in;
    int64_t out[CONVND_MAX_DIMS];
    cr_assert_eq(convnd_output_size(f, out), CONVND_OK);
    for (int i = 0; i < f->dims; i++) {
        const int64_t e = f->dilation[i] * (f->kernel[i] - 1) + 1;
        const int64_t r = (f->input[i] + f->pad_before[i] + f->pad_after[i] - e) % f->stride[i];
        t->input[i] = out[i];
        t->pad_after[i] = f->pad_after[i] - r;
    }
    t->x_layout = f->y_layout;
    t->y_layout = f->x_layout;
}

static void *random_tensor(const convnd_problem *p, convnd_tensor which, int64_t *numel,
                           test_rng *r) {
    convnd_tensor_desc d;
    cr_assert_eq(convnd_tensor_describe(p, which, &d), CONVND_OK, "%s", convnd_last_error());
    void *data = malloc(convnd_ref_dtype_size(p->dtype) * (size_t)d.numel);
    cr_assert_not_null(data);
    test_fill_random(p->dtype, data, d.numel, r);
    *numel = d.numel;
    return data;
}

Test(ref_duality, forward_and_transposed_are_adjoint) {
    int checked = 0;
    for (int i = 0; i < DUALITY_CASES; i++) {
        const uint64_t seed = DUALITY_SEED + (uint64_t)i;
        test_rng rng = test_rng_seed(seed);
        convnd_problem f, t;
        draw_forward(&rng, &f);
        adjoint_of(&f, &t);

        int64_t nx, nw, nv;
        void *x = random_tensor(&f, CONVND_X, &nx, &rng);
        void *w = random_tensor(&f, CONVND_W, &nw, &rng);
        void *v = random_tensor(&t, CONVND_X, &nv, &rng);
        char text[512];
        convnd_problem_string(&f, text, sizeof text);
        convnd_tensor_desc fy, fw, ty, tw;
        cr_assert_eq(convnd_tensor_describe(&f, CONVND_Y, &fy), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&f, CONVND_W, &fw), CONVND_OK);
        cr_assert_eq(convnd_tensor_describe(&t, CONVND_Y, &ty), CONVND_OK,
                     "seed %llu (%s): the transposed problem is invalid: %s",
                     (unsigned long long)seed, text, convnd_last_error());
        cr_assert_eq(convnd_tensor_describe(&t, CONVND_W, &tw), CONVND_OK);
        /* SPEC §4: T maps O back to I, and reads F's weight tensor as it is */
        for (int r = 0; r < f.dims + 2; r++) {
            cr_assert_eq(ty.shape[r],
                         r == 0   ? f.N
                         : r == 1 ? f.C_in
                                  : f.input[r - 2],
                         "seed %llu (%s): T's output dim %d is %lld", (unsigned long long)seed,
                         text, r, (long long)ty.shape[r]);
            cr_assert(tw.shape[r] == fw.shape[r] && tw.strides[r] == fw.strides[r],
                      "seed %llu (%s): T's weight dim %d differs from F's",
                      (unsigned long long)seed, text, r);
        }
        cr_assert_eq(nv, fy.numel);

        double *fx = malloc(sizeof(double) * (size_t)fy.numel);
        double *fx_mag = malloc(sizeof(double) * (size_t)fy.numel);
        double *tv = malloc(sizeof(double) * (size_t)ty.numel);
        cr_assert(fx && fx_mag && tv);
        cr_assert_eq(convnd_ref_conv_f64(&f, x, w, NULL, NULL, fx, fx_mag), CONVND_OK);
        cr_assert_eq(convnd_ref_conv_f64(&t, v, w, NULL, NULL, tv, NULL), CONVND_OK,
                     "seed %llu (%s): %s", (unsigned long long)seed, text, convnd_last_error());

        double lhs = 0, rhs = 0, scale = 0;
        for (int64_t j = 0; j < fy.numel; j++) {
            const double vj = convnd_ref_load(f.dtype, v, j);
            lhs += fx[j] * vj;
            scale += fx_mag[j] * fabs(vj);
        }
        for (int64_t j = 0; j < ty.numel; j++)
            rhs += convnd_ref_load(f.dtype, x, j) * tv[j];

        /* scale 0: every tap fell in the padding (small inputs, big pads), both sides are 0 */
        cr_expect(scale > 0 || (lhs == 0 && rhs == 0), "seed %llu (%s): no tap, yet %g != %g",
                  (unsigned long long)seed, text, lhs, rhs);
        if (scale > 0) {
            checked++;
            cr_expect_leq(fabs(lhs - rhs), DUALITY_TOL * scale,
                          "seed %llu (%s): <F(x), v> = %.17g but <x, T(v)> = %.17g (scale %.3g)",
                          (unsigned long long)seed, text, lhs, rhs, scale);
        }
        free(x);
        free(w);
        free(v);
        free(fx);
        free(fx_mag);
        free(tv);
    }
    cr_assert_gt(checked, DUALITY_CASES * 8 / 10, "only %d of %d problems had a tap", checked,
                 DUALITY_CASES);
    cr_log_info("duality: %d of %d problems with taps", checked, DUALITY_CASES);
}
