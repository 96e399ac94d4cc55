/* The "pad + conv" peer: a materialized zero-pad copy of x, then the schedule the planner picks
 * for the original problem, run on the zero-padded problem (the planner's choice for that one
 * when the schedule does not support it). Its distance to the "auto" row is what fusing the
 * padding into the kernel saves. */
#include <stdio.h>
#include <string.h>

#include "candidate.h"
#include "materialized_pad.h"

static convnd_status pad_prepare(bench_instance *in, const convnd_problem *p, const void *x,
                                 const void *w, void *y, char *why, size_t why_len) {
    (void)x, (void)w, (void)y;
    if (p->mode != CONVND_FORWARD) {
        snprintf(why, why_len, "%s",
                 p->mode == CONVND_TRANSPOSED
                     ? "transposed padding crops the output: no input pad to copy"
                     : "the pad copy peer runs forward convolutions only");
        return CONVND_ERR_UNSUPPORTED;
    }
    if (!bench_has_padding(p)) {
        snprintf(why, why_len, "no padding to materialize");
        return CONVND_ERR_UNSUPPORTED;
    }
    bench_padded_problem(p, &in->inner);
    char fused[BENCH_LABEL_LEN];
    convnd_status s = convnd_plan_name(p, NULL, fused, sizeof fused);
    if (s != CONVND_OK) goto fail;
    /* the same schedule as the fused run when it takes the padded problem */
    if (convnd_schedule_supports(fused, &in->inner, NULL, 0))
        snprintf(in->inner_spec, sizeof in->inner_spec, "%s", fused);
    const convnd_options opts = {.schedule = in->inner_spec[0] ? in->inner_spec : NULL};
    char inner_plan[BENCH_LABEL_LEN];
    if ((s = convnd_plan_name(&in->inner, &opts, inner_plan, sizeof inner_plan)) != CONVND_OK)
        goto fail;
    snprintf(in->plan, sizeof in->plan, "pad copy + %.80s", inner_plan);
    convnd_tensor_desc xd;
    if ((s = convnd_tensor_describe(&in->inner, CONVND_X, &xd)) != CONVND_OK) goto fail;
    in->scratch_bytes = (size_t)xd.bytes;
    if ((s = bench_alloc(&in->scratch, in->scratch_bytes)) != CONVND_OK) goto fail;
    if ((s = convnd_workspace_size(&in->inner, &opts, &in->workspace_bytes)) != CONVND_OK)
        goto fail;
    if ((s = bench_alloc(&in->workspace, in->workspace_bytes)) != CONVND_OK) goto fail;
    return CONVND_OK;
fail:
    snprintf(why, why_len, "%s", convnd_last_error());
    return s;
}

static convnd_status pad_run(bench_instance *in, const void *x, const void *w, void *y,
                             void *stream) {
    convnd_status s = bench_pad_copy(&in->problem, x, in->scratch, stream);
    if (s != CONVND_OK) return s;
    const convnd_options opts = {.schedule = in->inner_spec[0] ? in->inner_spec : NULL};
    return conv_nd(&in->inner, in->scratch, w, NULL, NULL, y, in->workspace, in->workspace_bytes,
                   stream, &opts);
}

const bench_candidate_ops bench_pad_conv_ops = {pad_prepare, pad_run, NULL};
