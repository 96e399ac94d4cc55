/* A materialized zero-pad copy of x: what a framework does when its convolution cannot express
 * the padding (F.pad, then the conv with padding 0). convnd never needs it (padding is fused
 * into every schedule); the benchmark uses it for its "pad + conv" and "cuDNN after a pad copy"
 * peers, to show what fusing the padding saves. Internal: not part of the public API.
 *
 * From a launch's params (x's sizes, strides, layout and the forward padding P0/P1 per dim) and
 * a->x, writes a->y = x padded to [N, C_in, I + P0 + P1 ...], packed in x's layout
 * (channels-last when params.x_cl): zeros where a position falls in the padding; negative
 * padding crops. Forward problems only. */
#ifndef CONVND_PAD_COPY_H
#define CONVND_PAD_COPY_H

#include "launch_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

CONVND_DECLARE_LAUNCHER(pad_copy);

#ifdef __cplusplus
}
#endif

#endif
