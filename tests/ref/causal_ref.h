/* The CPU reference of the stateful causal conv1d (SPEC §13), in f64, straight from the
 * definition: X = cat(initial_state, sequence), y[t] = act(bias + sum_k w[k] X[t + k]). */
#ifndef CONVND_CAUSAL_REF_H
#define CONVND_CAUSAL_REF_H

#include "convnd_causal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host pointers in t; y gets the exact (unrounded) outputs in x's layout, mag the magnitudes
 * |bias| + sum |w x| (for the tolerance), final_states (when t->final_states is non-NULL; may be
 * NULL otherwise) the exact final states [S, D, W-1]. The problem must be valid. */
void convnd_ref_causal_conv1d(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                              double *y, double *mag, double *final_states);

/* The decode step on host tensors: y and mag as above; state (in/out, f64 copy of conv_state,
 * [state_rows, D, state_len]) is updated. Rows skipped by a negative index keep y untouched. */
void convnd_ref_causal_update(const convnd_causal_update_problem *p,
                              const convnd_causal_update_tensors *t, double *state, double *y,
                              double *mag);

#ifdef __cplusplus
}
#endif

#endif
