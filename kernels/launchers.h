/* Every schedule kernel launcher, declared once: kernels/NAME.cu defines it (so the compiler
 * checks the definition against this line) and schedules/NAME.c calls it through
 * CONVND_CALL_LAUNCHER. Adding a kernel: one line here. */
#ifndef CONVND_LAUNCHERS_H
#define CONVND_LAUNCHERS_H

#include "launch_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

CONVND_DECLARE_LAUNCHER(direct);
CONVND_DECLARE_LAUNCHER(depthwise_cl);
CONVND_DECLARE_LAUNCHER(depthwise_tile);
CONVND_DECLARE_LAUNCHER(depthwise_stream);
CONVND_DECLARE_LAUNCHER(grouped);
CONVND_DECLARE_LAUNCHER(tiled_direct);
CONVND_DECLARE_LAUNCHER(igemm_tc_f16);
CONVND_DECLARE_LAUNCHER(igemm_tc_bf16);
CONVND_DECLARE_LAUNCHER(igemm_tc_tf32);
CONVND_DECLARE_LAUNCHER(igemm_simt);
CONVND_DECLARE_LAUNCHER(convT_tc_f16);
CONVND_DECLARE_LAUNCHER(convT_tc_bf16);
CONVND_DECLARE_LAUNCHER(convT_tc_tf32);
CONVND_DECLARE_LAUNCHER(convT_simt);
CONVND_DECLARE_LAUNCHER(hopper_igemm); /* sm_90a image only (kernels/CMakeLists.txt) */
CONVND_DECLARE_LAUNCHER(wgrad_direct);
CONVND_DECLARE_LAUNCHER(wgrad_splitk);
CONVND_DECLARE_LAUNCHER(wgrad_igemm_simt);
CONVND_DECLARE_LAUNCHER(wgrad_igemm_tc);
CONVND_DECLARE_LAUNCHER(wgrad_depthwise);

#ifdef __cplusplus
}
#endif

#endif
