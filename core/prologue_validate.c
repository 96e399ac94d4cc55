/* SPEC §15: the input prologue's rules, and the element counts of the f32 operands its steps
 * read (r [N, I...], a and b [C_in] or [N, C_in]). */
#include "error.h"
#include "problem_internal.h"

#include <inttypes.h>
#include <math.h>

int32_t convnd_prologue_operands(const convnd_prologue *pro) {
    int32_t bits = 0;
    for (int32_t i = 0; i < pro->num_steps; ++i)
        switch (pro->steps[i].op) {
        case CONVND_PRO_DIV_R:
        case CONVND_PRO_MUL_R:
            bits |= CONVND_PRO_READS_R;
            break;
        case CONVND_PRO_MUL_A:
            bits |= CONVND_PRO_READS_A;
            break;
        case CONVND_PRO_ADD_B:
            bits |= CONVND_PRO_READS_B;
            break;
        case CONVND_PRO_FMA_AB:
            bits |= CONVND_PRO_READS_A | CONVND_PRO_READS_B;
            break;
        default:
            break;
        }
    return bits;
}

static convnd_status check_step(const convnd_prologue_step *st, int32_t i) {
    if (st->op < CONVND_PRO_DIV_R || st->op > CONVND_PRO_ACT)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "prologue.steps[%d].op=%d is not a convnd_prologue_op (1 div_r, 2 "
                            "mul_r, 3 mul_scalar, 4 mul_a, 5 add_b, 6 fma_ab, 7 act)",
                            (int)i, (int)st->op);
    if (st->round != 0 && st->round != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "prologue.steps[%d].round=%d must be 0 or 1", (int)i, (int)st->round);
    if (st->op == CONVND_PRO_MUL_SCALAR && !isfinite(st->scalar))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "prologue.steps[%d].scalar=%g must be finite (op=mul_scalar)", (int)i,
                            (double)st->scalar);
    if (st->op == CONVND_PRO_ACT && (st->act < CONVND_ACT_NONE || st->act > CONVND_ACT_GELU))
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "prologue.steps[%d].act=%d is not a convnd_activation (0 none, 1 relu, "
                            "2 silu, 3 gelu)",
                            (int)i, (int)st->act);
    return CONVND_OK;
}

convnd_status convnd_check_prologue(const convnd_problem *p, convnd_problem_sizes *s) {
    const convnd_prologue *pro = &p->prologue;
    s->pro_r_numel = s->pro_a_numel = s->pro_b_numel = 0;
    if (pro->num_steps < 0 || pro->num_steps > CONVND_MAX_PROLOGUE_STEPS)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "prologue.num_steps=%d must be 0..%d",
                            (int)pro->num_steps, CONVND_MAX_PROLOGUE_STEPS);
    if (pro->ab_per_sample != 0 && pro->ab_per_sample != 1)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT, "prologue.ab_per_sample=%d must be 0 or 1",
                            (int)pro->ab_per_sample);
    if (pro->num_steps == 0) return CONVND_OK;
    if (p->mode == CONVND_WGRAD)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "prologue.num_steps=%d needs mode=forward or transposed (mode=wgrad: "
                            "pass the transformed input as x)",
                            (int)pro->num_steps);
    if (p->sequences.kind != CONVND_SEQS_NONE)
        return convnd_error(CONVND_ERR_UNSUPPORTED,
                            "prologue.num_steps=%d: a stateful causal conv1d (SPEC §13, "
                            "sequences.kind=%d) takes no prologue",
                            (int)pro->num_steps, (int)p->sequences.kind);
    for (int32_t i = 0; i < pro->num_steps; ++i) {
        convnd_status st = check_step(&pro->steps[i], i);
        if (st) return st;
    }
    /* r [N, I...] and a, b [C_in] / [N, C_in]: each no larger than x, whose count
     * convnd_problem_check has proven to fit */
    int64_t positions = p->N;
    for (int32_t t = 0; t < p->dims; ++t)
        positions *= p->input[t];
    const int64_t ab = pro->ab_per_sample ? p->N * p->C_in : p->C_in;
    const int32_t reads = convnd_prologue_operands(pro);
    if (reads & CONVND_PRO_READS_R) s->pro_r_numel = positions;
    if (reads & CONVND_PRO_READS_A) s->pro_a_numel = ab;
    if (reads & CONVND_PRO_READS_B) s->pro_b_numel = ab;
    return CONVND_OK;
}
