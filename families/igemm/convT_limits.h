/* Limits of the phase-decomposed transposed convolution (families/igemm/convT_*.cu), shared by the
 * kernels (table sizes in the kernel parameters) and their registry entry (schedules/
 * convT.c, plain C), which refuses larger problems with these numbers in the reason.
 *
 * A transposed convolution with strides S0, S1, S2 has S0*S1*S2 output phases. Their tables
 * travel in the kernel's parameters (about 1.6 KB at these sizes), so they are bounded: strides
 * up to 16 per dimension and 64 phases in all (a 1-D stride of 16, 2-D 8x8, 3-D 4x4x4). */
#ifndef CONVND_CONVT_LIMITS_H
#define CONVND_CONVT_LIMITS_H

#define CONVND_CONVT_MAX_STRIDE 16
#define CONVND_CONVT_MAX_PHASES 64

#endif
