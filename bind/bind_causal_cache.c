/* The causal cache binding (convnd_bind.h, SPEC §12): cached frames replace zero padding. */
#include <inttypes.h>

#include "bind_common.h"
#include "error.h"

convnd_status convnd_bind_causal_cache(const convnd_problem *causal, int64_t prefix_frames,
                                       int64_t state_frames, convnd_problem *out) {
    if (!causal || !out)
        return convnd_error(CONVND_ERR_NULL_POINTER, "%s is NULL", !causal ? "causal" : "out");
    const convnd_status st = convnd_validate(causal);
    if (st != CONVND_OK) return st;
    if (causal->mode != CONVND_FORWARD)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "causal cache: mode=%d must be forward (0)", (int)causal->mode);
    const int64_t P0 = causal->pad_before[0];
    if (prefix_frames < 0 || prefix_frames > P0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "causal cache: prefix_frames=%" PRId64 " must be in [0, P0=%" PRId64
                            "] (the time dim's causal padding)",
                            prefix_frames, P0);
    if (state_frames < 0)
        return convnd_error(CONVND_ERR_INVALID_ARGUMENT,
                            "causal cache: state_frames=%" PRId64 " must be >= 0", state_frames);
    convnd_problem bound = *causal;
    bound.io_axis = 0;
    bound.prefix_size = prefix_frames;
    bound.state_size = state_frames;
    bound.pad_before[0] = P0 - prefix_frames;
    return convnd_bind_finish(&bound, out);
}
