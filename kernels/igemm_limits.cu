/* What the implicit-GEMM registry entry (schedules/implicit_gemm.c, plain C) must know from the
 * kernel headers: whether a problem needs 64-bit indices, which the igemm kernels (32-bit
 * only) refuse. Defined once, in the emulated-device build, which is always part of the
 * library; the rule itself stays in conv_index.cuh. */
#include "portability.cuh"
#include "conv_index.cuh"

#if defined(CONVND_EMU)
extern "C" int convnd_igemm_needs_index64(const convnd_conv_params *p) {
    return CONVND_NS::conv_needs_index64(*p) ? 1 : 0;
}
#endif
