/* The materialized zero-pad copy for the benchmark's peers (bench/materialized_pad.h). */
#include "materialized_pad.h"
#include "pad_copy.h"
#include "problem_internal.h"
#include "registry.h"

static const convnd_launcher pad_copy_kernel = CONVND_LAUNCHER_OF(pad_copy);

int32_t bench_has_padding(const convnd_problem *p) {
    for (int32_t t = 0; t < p->dims; ++t)
        if (p->pad_before[t] != 0 || p->pad_after[t] != 0) return 1;
    return 0;
}

void bench_padded_problem(const convnd_problem *p, convnd_problem *out) {
    *out = *p;
    for (int32_t t = 0; t < p->dims; ++t) {
        out->input[t] = p->input[t] + p->pad_before[t] + p->pad_after[t];
        out->pad_before[t] = out->pad_after[t] = 0;
    }
}

convnd_status bench_pad_copy(const convnd_problem *p, const void *x, void *xpad, void *stream) {
    convnd_resolved r;
    const convnd_status s = convnd_resolve(p, &r);
    if (s != CONVND_OK) return s;
    convnd_launch_args a = {
        .x = x, .y = xpad, .params = r.params, .stream = stream, .device = convnd_active_device()};
    return CONVND_LAUNCH(&pad_copy_kernel, &a);
}
