#include <math.h>

#include "test_tolerance.h"
#include "convnd_ref.h"

double test_unit_roundoff(convnd_dtype dt) {
    return dt == CONVND_F16 ? 0x1.0p-11 : dt == CONVND_BF16 ? 0x1.0p-8 : 0x1.0p-24;
}

test_tolerance test_tolerance_for(const convnd_problem *p) {
    test_tolerance t;
    t.u_out = test_unit_roundoff(p->dtype);
    t.u_in = p->dtype == CONVND_F32 && p->math == CONVND_MATH_ALLOW_TF32 ? 0x1.0p-10 : 0.0;
    t.u_acc = 0x1.0p-23;
    double k = (double)(p->groups > 0 ? p->C_in / p->groups : p->C_in);
    for (int32_t d = 0; d < p->dims; ++d)
        k *= (double)p->kernel[d];
    int64_t out[CONVND_MAX_DIMS];
    if (p->mode == CONVND_WGRAD && convnd_output_size(p, out) == CONVND_OK) {
        k = (double)p->N; /* a dw element sums over the batch and every output position */
        for (int32_t d = 0; d < p->dims; ++d)
            k *= (double)out[d];
    }
    t.k_red = k;
    t.slope = p->activation == CONVND_ACT_NONE ? 1.0 : CONVND_REF_ACT_MAX_SLOPE;
    t.tiny = 0.5 * convnd_ref_ulp(p->dtype, 0.0);
    return t;
}

double test_tolerance_bound(const test_tolerance *t, double ref, double mag) {
    return t->u_out * fabs(ref) +
           t->slope * mag *
               (2.0 * t->u_in + TEST_TOL_C_SAFETY * (t->k_red + TEST_TOL_E_OPS) * t->u_acc) +
           t->tiny;
}
