/* FLOPs and minimal bytes of a problem, as the benchmark counts them
 * (shared/bench/README.md): 2 FLOPs per useful multiply-add; x, w, bias, z, y moved once. */
#include "error.h"
#include "problem_internal.h"

convnd_status convnd_flops(const convnd_problem *p, double *flops) {
    if (!flops) return convnd_error(CONVND_ERR_NULL_POINTER, "flops is NULL");
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    double kernel = 1.0, positions = 1.0;
    const int forward = p->mode != CONVND_TRANSPOSED; /* WGRAD: the forward's multiply-adds */
    for (int t = 0; t < p->dims; ++t) {
        kernel *= (double)p->kernel[t];
        positions *= (double)(forward ? s.out[t] : p->input[t]);
    }
    /* forward: every output reads C_in/g channels; transposed: every input feeds C_out/g. */
    const double outer = forward ? (double)p->C_out : (double)p->C_in;
    const double inner = (double)((forward ? p->C_in : p->C_out) / p->groups);
    *flops = 2.0 * (double)p->N * outer * positions * inner * kernel;
    return CONVND_OK;
}

convnd_status convnd_min_bytes(const convnd_problem *p, double *bytes) {
    if (!bytes) return convnd_error(CONVND_ERR_NULL_POINTER, "bytes is NULL");
    convnd_problem_sizes s;
    convnd_status st = convnd_problem_check(p, &s);
    if (st) return st;
    double elements = (double)s.x_numel + (double)s.w_numel + (double)s.y_numel;
    if (p->has_bias) elements += (double)s.bias_numel;
    if (p->has_z) elements += (double)(p->mode == CONVND_WGRAD ? s.w_numel : s.y_numel);
    *bytes = elements * (double)s.elem_bytes;
    return CONVND_OK;
}
