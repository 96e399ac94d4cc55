/* Which tensor of a problem each bench buffer holds. conv_nd's operands are (x, w) -> y in the
 * forward and transposed modes, and (x, dy) -> dw in the weight-gradient mode (SPEC §10): there
 * the second operand has y's shape and the output w's. */
#ifndef CONVND_BENCH_OPERANDS_H
#define CONVND_BENCH_OPERANDS_H

#include "convnd.h"

/* The tensor whose shape the second operand (the "w" buffer) has. */
static inline convnd_tensor bench_operand_tensor(const convnd_problem *p) {
    return p->mode == CONVND_WGRAD ? CONVND_Y : CONVND_W;
}

/* The tensor whose shape the output (the "y" buffer) has. */
static inline convnd_tensor bench_output_tensor(const convnd_problem *p) {
    return p->mode == CONVND_WGRAD ? CONVND_W : CONVND_Y;
}

#endif
