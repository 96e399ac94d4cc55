/* convnd_float_to_tf32 on the emulated device: round to nearest with ties away from zero, as
 * cvt.rna.tf32.f32 (the GPU's __float_to_tf32) does; Inf and NaN pass through. The tensor-core
 * kernels round f32 operands with it before mma.sync (tc_warp_mma.cuh). */
#define CONVND_EMU 1
#include "portability.cuh"

#include <criterion/criterion.h>
#include <math.h>

Test(emu_tf32, rounding_is_to_nearest_ties_away) {
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f); /* tie: away */
    cr_assert_eq(convnd_float_to_tf32(-(1.0f + 0x1p-11f)), -(1.0f + 0x1p-10f));
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-12f), 1.0f);
    cr_assert_eq(convnd_float_to_tf32(1.0f + 0x1p-11f + 0x1p-20f), 1.0f + 0x1p-10f);
    cr_assert(isinf(convnd_float_to_tf32(INFINITY)));
    cr_assert(isnan(convnd_float_to_tf32(NAN)));
}
