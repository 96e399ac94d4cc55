/* A kernel launcher's dtype switch, once: calls launch(tag) with tag's `type` the element type of
 * dtype (a convnd_dtype: float, convnd_half, convnd_bf16), or returns CONVND_ERR_UNSUPPORTED naming
 * who. Used as
 *
 *   return convnd_launch_by_dtype(a->params.dtype, "direct", [&](auto t) {
 *       return direct_launch_dtype<typename decltype(t)::type>(a, threads);
 *   });
 */
#ifndef CONVND_LAUNCH_DTYPE_CUH
#define CONVND_LAUNCH_DTYPE_CUH

#include "convnd.h"
#include "error.h"
#include "half_types.cuh"

namespace CONVND_NS {

template <typename T> struct convnd_dtype_tag { using type = T; };

template <typename Launch>
static convnd_status convnd_launch_by_dtype(int32_t dtype, const char *who, Launch &&launch) {
    switch (dtype) {
    case CONVND_F32:
        return launch(convnd_dtype_tag<float>{});
    case CONVND_F16:
        return launch(convnd_dtype_tag<convnd_half>{});
    case CONVND_BF16:
        return launch(convnd_dtype_tag<convnd_bf16>{});
    default:
        return convnd_error(CONVND_ERR_UNSUPPORTED, "%s: dtype %d not supported", who, (int)dtype);
    }
}

} // namespace CONVND_NS

#endif
