/* The stateful causal conv1d entry points (SPEC §13): validate, then launch on the active
 * device. Validation happens before any launch, so an error writes nothing. */
#include "causal_params.h"
#include "convnd_causal.h"
#include "error.h"
#include "causal_launchers.h"

static const convnd_causal_launcher causal_conv1d_kernel = CONVND_LAUNCHER_OF(causal_conv1d);
static const convnd_causal_launcher causal_conv1d_update_kernel =
    CONVND_LAUNCHER_OF(causal_conv1d_update);

convnd_status convnd_causal_conv1d(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                                   void *stream) {
    convnd_causal_launch_args a;
    convnd_status st = convnd_causal_prepare(p, t, stream, &a);
    if (st != CONVND_OK) return st;
    a.device = convnd_active_device();
    return CONVND_LAUNCH(&causal_conv1d_kernel, &a);
}

convnd_status convnd_causal_conv1d_update(const convnd_causal_update_problem *p,
                                          const convnd_causal_update_tensors *t, void *stream) {
    convnd_causal_launch_args a;
    convnd_status st = convnd_causal_update_prepare(p, t, stream, &a);
    if (st != CONVND_OK) return st;
    a.device = convnd_active_device();
    return CONVND_LAUNCH(&causal_conv1d_update_kernel, &a);
}
