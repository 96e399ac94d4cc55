/* The kernels of the cublas_im2col schedule (families/im2col/im2col.cu), seen from its host side
 * (families/im2col/cublas_im2col.c). Plain C.
 *
 * The schedule works on a chunk of images [n0, n0 + nb) at a time, with M = nb * prod(O)
 * (forward) or nb * prod(I) (transposed) GEMM columns j = (n - n0, spatial position):
 *
 *   forward:    im2col   x -> col (group g, row r, column j)
 *               GEMM     acc[g] = W[g] . col[g]            (f32 result)
 *               epilogue acc -> y
 *   transposed: GEMM     col[g] = W[g]^T . x[g]            (f32 result)
 *               col2im   col -> y, gathering the taps, then the epilogue
 *
 * A GEMM row r of group g is the offset of (c, k0, k1, k2) inside one weight row, r =
 * c*ws[1] + k0*ws[2] + k1*ws[3] + k2*ws[4] (c = c_in/g forward, c_out/g transposed), so the
 * weight is used in place in either layout. The orientation follows x's layout so that im2col
 * reads x along its innermost dimension:
 *   x channels-last:  col[g][j][r] and acc[g][j][c]   (r, c innermost)
 *   x channels-first: col[g][r][j] and acc[g][c][j]   (j innermost)
 * Transposed mode with channels-first x adds an image level: col[g][n - n0][r][i]. */
#ifndef CONVND_IM2COL_H
#define CONVND_IM2COL_H

#include <stdint.h>
#include "launch_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct convnd_im2col_args {
    const convnd_launch_args *launch; /* problem, params, tensors, stream */
    convnd_device device;             /* read by CONVND_LAUNCH */
    int64_t n0, nb;                   /* the chunk of images */
    void *col;                        /* forward: written by im2col; transposed: GEMM output */
    int32_t col_dtype;                /* forward: convnd_dtype of col; transposed: always f32 */
    const float *acc;                 /* forward epilogue: the GEMM output */
    /* to_f32: dst[i] = (float)src[i] for i < count, src in params.dtype */
    const void *src;
    float *dst;
    int64_t count;
} convnd_im2col_args;

/* im2col for the chunk: every col element written (zeros where the tap falls in the padding). */
convnd_status convnd_emu_im2col_forward(const convnd_im2col_args *a);
convnd_status convnd_gpu_im2col_forward(const convnd_im2col_args *a);
/* Forward epilogue: y (chunk images) = act(alpha * acc + bias + beta * z). */
convnd_status convnd_emu_im2col_epilogue(const convnd_im2col_args *a);
convnd_status convnd_gpu_im2col_epilogue(const convnd_im2col_args *a);
/* Transposed: y (chunk images) = epilogue(sum over the taps of col), a gather (no atomics). */
convnd_status convnd_emu_col2im_epilogue(const convnd_im2col_args *a);
convnd_status convnd_gpu_col2im_epilogue(const convnd_im2col_args *a);
/* Widening copy to f32, for the host BLAS (which has no 16-bit GEMM). */
convnd_status convnd_emu_im2col_to_f32(const convnd_im2col_args *a);
convnd_status convnd_gpu_im2col_to_f32(const convnd_im2col_args *a);

#ifdef __cplusplus
}
#endif

/* their launchers as data, for CONVND_LAUNCH (core/launch_abi.h) */
CONVND_LAUNCHER_TYPE(convnd_im2col_launcher, convnd_im2col_args);

#endif
