/* SPEC §15's input prologue as plain C, step by step: each step one f32 operation (C's float
 * arithmetic, FLT_EVAL_METHOD 0; fma_ab through fmaf), rounded to the dtype where the chain says,
 * independent of the library's kernels (primitives/prologue.cuh). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convnd_ref.h"

static float round_to(convnd_dtype dt, float v) {
    switch (dt) {
    case CONVND_F16:
        return (float)convnd_ref_f16_to_f64(convnd_ref_f32_to_f16(v));
    case CONVND_BF16:
        return (float)convnd_ref_bf16_to_f64(convnd_ref_f32_to_bf16(v));
    default:
        return v;
    }
}

static float activate_f32(convnd_activation act, float v) {
    switch (act) {
    case CONVND_ACT_RELU:
        return v > 0.0f ? v : 0.0f;
    case CONVND_ACT_SILU:
        return v / (1.0f + expf(-v));
    case CONVND_ACT_GELU:
        return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    default:
        return v;
    }
}

float convnd_ref_prologue_value(const convnd_prologue *pro, convnd_dtype dt, float v, float r,
                                float a, float b) {
    for (int32_t i = 0; i < pro->num_steps; ++i) {
        const convnd_prologue_step *st = &pro->steps[i];
        switch (st->op) {
        case CONVND_PRO_DIV_R:
            v = v / r;
            break;
        case CONVND_PRO_MUL_R:
            v = v * r;
            break;
        case CONVND_PRO_MUL_SCALAR:
            v = v * st->scalar;
            break;
        case CONVND_PRO_MUL_A:
            v = v * a;
            break;
        case CONVND_PRO_ADD_B:
            v = v + b;
            break;
        case CONVND_PRO_FMA_AB:
            v = fmaf(v, a, b);
            break;
        case CONVND_PRO_ACT:
            v = activate_f32(st->act, v);
            break;
        }
        if (st->round) v = round_to(dt, v);
    }
    return v;
}

convnd_status convnd_ref_prologue(const convnd_problem *p, const void *x, const float *r,
                                  const float *a, const float *b, float *xhat) {
    convnd_tensor_desc xd;
    convnd_status st = convnd_tensor_describe(p, CONVND_X, &xd);
    if (st != CONVND_OK) return st;
    const int64_t span = xd.bytes / (int64_t)convnd_ref_dtype_size(p->dtype);
    for (int64_t i = 0; i < span; ++i) /* a view's gaps: x's own values */
        xhat[i] = (float)convnd_ref_load(p->dtype, x, i);
    int64_t positions = 1; /* r [N, I...] packed: per sample, row-major over I */
    for (int32_t t = 0; t < p->dims; ++t)
        positions *= p->input[t];
    for (int64_t e = 0; e < xd.numel; ++e) {
        int64_t idx[CONVND_MAX_RANK], rem = e;
        for (int32_t j = xd.rank - 1; j >= 0; --j) {
            idx[j] = rem % xd.shape[j];
            rem /= xd.shape[j];
        }
        const int64_t n = idx[0], c = idx[1];
        int64_t pos = 0, off = n * xd.strides[0] + c * xd.strides[1];
        for (int32_t t = 0; t < p->dims; ++t) {
            pos = pos * p->input[t] + idx[2 + t];
            off += idx[2 + t] * xd.strides[2 + t];
        }
        const int64_t ab = p->prologue.ab_per_sample ? n * p->C_in + c : c;
        xhat[off] = convnd_ref_prologue_value(&p->prologue, p->dtype, xhat[off],
                                              r ? r[n * positions + pos] : 0.0f, a ? a[ab] : 0.0f,
                                              b ? b[ab] : 0.0f);
    }
    return CONVND_OK;
}
