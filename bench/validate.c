/* The validation step (bench/validate.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"
#include "operands.h"
#include "convnd_ref.h"
#include "random_fill.h"

double bench_tolerance(const convnd_problem *p, double ref, double mag) {
    const double u_out = p->dtype == CONVND_F16    ? 0x1.0p-11
                         : p->dtype == CONVND_BF16 ? 0x1.0p-8
                                                   : 0x1.0p-24;
    const double u_in =
        p->dtype == CONVND_F32 && p->math == CONVND_MATH_ALLOW_TF32 ? 0x1.0p-10 : 0.0;
    double k_red = (double)(p->groups > 0 ? p->C_in / p->groups : p->C_in);
    for (int32_t t = 0; t < p->dims; ++t)
        k_red *= (double)p->kernel[t];
    int64_t out[CONVND_MAX_DIMS];
    if (p->mode == CONVND_WGRAD && convnd_output_size(p, out) == CONVND_OK) {
        k_red = (double)p->N; /* a dw element sums over the batch and the output positions */
        for (int32_t t = 0; t < p->dims; ++t)
            k_red *= (double)out[t];
    }
    const double slope = p->activation == CONVND_ACT_NONE ? 1.0 : CONVND_REF_ACT_MAX_SLOPE;
    return u_out * fabs(ref) + slope * mag * (2.0 * u_in + 2.0 * (k_red + 8.0) * 0x1.0p-23) +
           0.5 * convnd_ref_ulp(p->dtype, 0.0);
}

void bench_reference_free(bench_reference *ref) {
    free(ref->x_host);
    free(ref->w_host);
    free(ref->y_host);
    free(ref->exact);
    free(ref->mag);
    bench_free(&ref->x_dev);
    bench_free(&ref->w_dev);
    bench_free(&ref->y_dev);
    memset(ref, 0, sizeof *ref);
}

convnd_status bench_reference_make(const convnd_problem *reduced, uint64_t seed,
                                   bench_reference *ref, char *err, size_t err_len) {
    memset(ref, 0, sizeof *ref);
    ref->p = *reduced;
    convnd_status s = convnd_tensor_describe(reduced, CONVND_X, &ref->xd);
    if (s == CONVND_OK)
        s = convnd_tensor_describe(reduced, bench_operand_tensor(reduced), &ref->wd);
    if (s == CONVND_OK) s = convnd_tensor_describe(reduced, bench_output_tensor(reduced), &ref->yd);
    if (s != CONVND_OK) {
        snprintf(err, err_len, "reduced problem: %s", convnd_last_error());
        return s;
    }
    const size_t yn = (size_t)ref->yd.numel;
    ref->x_host = malloc((size_t)ref->xd.bytes + 1);
    ref->w_host = malloc((size_t)ref->wd.bytes + 1);
    ref->y_host = malloc((size_t)ref->yd.bytes + 1);
    ref->exact = malloc(yn * sizeof(double) + 1);
    ref->mag = malloc(yn * sizeof(double) + 1);
    if (!ref->x_host || !ref->w_host || !ref->y_host || !ref->exact || !ref->mag) {
        bench_reference_free(ref);
        snprintf(err, err_len, "out of host memory for the validation copy");
        return CONVND_ERR_OUT_OF_MEMORY;
    }
    bench_rng rng = bench_rng_seed(seed);
    bench_fill_random(reduced->dtype, ref->x_host, ref->xd.numel, &rng);
    bench_fill_random(reduced->dtype, ref->w_host, ref->wd.numel, &rng);
    s = reduced->mode == CONVND_WGRAD /* w_host holds dy, exact/mag are dw's */
            ? convnd_ref_wgrad_f64(reduced, ref->x_host, ref->w_host, NULL, ref->exact, ref->mag)
            : convnd_ref_conv_f64(reduced, ref->x_host, ref->w_host, NULL, NULL, ref->exact,
                                  ref->mag);
    if (s == CONVND_OK) s = bench_alloc(&ref->x_dev, (size_t)ref->xd.bytes);
    if (s == CONVND_OK) s = bench_alloc(&ref->w_dev, (size_t)ref->wd.bytes);
    if (s == CONVND_OK) s = bench_alloc(&ref->y_dev, (size_t)ref->yd.bytes);
    if (s == CONVND_OK && ref->xd.bytes)
        s = convnd_memcpy_h2d(ref->x_dev, ref->x_host, (size_t)ref->xd.bytes);
    if (s == CONVND_OK && ref->wd.bytes)
        s = convnd_memcpy_h2d(ref->w_dev, ref->w_host, (size_t)ref->wd.bytes);
    if (s != CONVND_OK) {
        snprintf(err, err_len, "validation copy: %s", convnd_last_error());
        bench_reference_free(ref);
    }
    return s;
}

/* Compares the candidate's y (host) with the reference, element by element. */
static void compare(const bench_reference *ref, bench_validation *out) {
    const convnd_problem *p = &ref->p;
    double diff2 = 0.0, ref2 = 0.0;
    int64_t first_bad = -1;
    for (int64_t i = 0; i < ref->yd.numel; ++i) {
        const double y = convnd_ref_load(p->dtype, ref->y_host, i);
        const double e = ref->exact[i];
        if (!isfinite(y)) {
            if (out->unwritten++ == 0 && first_bad < 0) first_bad = i;
            continue;
        }
        const double d = fabs(y - e), bound = bench_tolerance(p, e, ref->mag[i]);
        diff2 += d * d;
        ref2 += e * e;
        if (d / bound > out->worst) out->worst = d / bound;
        if (d > bound && out->outside++ == 0 && first_bad < 0) first_bad = i;
    }
    out->rel_l2 = ref2 > 0.0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    out->passed = out->unwritten == 0 && out->outside == 0;
    if (out->passed) {
        snprintf(out->message, sizeof out->message, "ok: rel L2 %.2e, worst %.2f of the bound",
                 out->rel_l2, out->worst);
    } else {
        const double y = convnd_ref_load(p->dtype, ref->y_host, first_bad);
        snprintf(out->message, sizeof out->message,
                 "%lld of %lld outputs unwritten (NaN poison left), %lld outside the tolerance; "
                 "first at element %lld: got %.6g, expected %.6g",
                 (long long)out->unwritten, (long long)ref->yd.numel, (long long)out->outside,
                 (long long)first_bad, y, ref->exact[first_bad]);
    }
}

convnd_status bench_validate(const bench_candidate *c, bench_reference *ref,
                             bench_validation *out) {
    memset(out, 0, sizeof *out);
    bench_instance in;
    char why[256];
    convnd_status s = bench_instance_prepare(&in, c, &ref->p, ref->x_dev, ref->w_dev, ref->y_dev,
                                             why, sizeof why);
    if (s == CONVND_ERR_UNSUPPORTED) {
        out->unsupported = 1;
        snprintf(out->message, sizeof out->message, "%s", why);
        bench_instance_release(&in);
        return CONVND_OK;
    }
    /* poison after prepare: an algorithm search may have written y */
    const size_t ybytes = (size_t)ref->yd.bytes;
    bench_poison(ref->y_host, ybytes);
    if (s == CONVND_OK && ybytes) s = convnd_memcpy_h2d(ref->y_dev, ref->y_host, ybytes);
    if (s == CONVND_OK) s = bench_instance_run(&in, ref->x_dev, ref->w_dev, ref->y_dev, NULL);
    if (s == CONVND_OK) s = convnd_synchronize(NULL);
    if (s == CONVND_OK && ybytes) s = convnd_memcpy_d2h(ref->y_host, ref->y_dev, ybytes);
    if (s != CONVND_OK) {
        snprintf(out->message, sizeof out->message, "%s: %.200s", convnd_status_string(s),
                 why[0] ? why : convnd_last_error());
    } else {
        compare(ref, out);
    }
    bench_instance_release(&in);
    return s;
}
