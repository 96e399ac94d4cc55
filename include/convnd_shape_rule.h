/* convnd's output-size rule (SPEC §2, §3; WGRAD uses the forward's), written once as expressions
 * over any integer type: core/problem_validate.c evaluates them on int64_t after checking every
 * intermediate for overflow, and the PyTorch op's Meta kernel on c10::SymInt (symbolic sizes
 * under torch.compile). FLOOR_DIV is the caller's floor division (C's / truncates toward zero,
 * which would turn a span of -1 into an output of 1). Plain C; no declarations. */
#ifndef CONVND_SHAPE_RULE_H
#define CONVND_SHAPE_RULE_H

/* The extent one output position's taps cover: dilation * (kernel - 1) + 1. */
#define CONVND_EFFECTIVE_KERNEL(K, D) ((D) * ((K)-1) + 1)

/* Forward (and weight-gradient) output size over input I, effective kernel E, stride S and the
 * paddings before/after P0, P1 (negative paddings crop): floor((I + P0 + P1 - E) / S) + 1. */
#define CONVND_FORWARD_OUTPUT(I, E, S, P0, P1, FLOOR_DIV) (FLOOR_DIV((I) + (P0) + (P1) - (E), (S)) + 1)

/* Transposed output size: (I - 1) * S + E - P0 - P1. */
#define CONVND_TRANSPOSED_OUTPUT(I, E, S, P0, P1) (((I)-1) * (S) + (E) - (P0) - (P1))

/* The data gradient of a forward conv (SPEC §10): the transposed conv from its output size O
 * back to exactly I, with the forward's S, D, P0 and this P1 (below the forward's P1 by the rows
 * the forward's floor dropped). */
#define CONVND_DGRAD_PAD_AFTER(I, O, E, S, P0) (((O)-1) * (S) + (E) - (P0) - (I))

#endif
