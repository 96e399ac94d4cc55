/* The stateful causal conv1d (SPEC §13) as a schedule: the registry entry that runs problems with
 * sequences (convnd_bind_causal_conv1d binds the calls onto one), and the public calls of
 * include/convnd_causal.h, which bind, plan and execute like conv_nd. */
#include <string.h>

#include "causal_launchers.h"
#include "causal_params.h"
#include "convnd_causal.h"
#include "error.h"
#include "plan.h"
#include "refuse.h"
#include "registry.h"

static const convnd_causal_launcher causal_conv1d_kernel = CONVND_LAUNCHER_OF(causal_conv1d);
static const convnd_causal_launcher causal_conv1d_update_kernel =
    CONVND_LAUNCHER_OF(causal_conv1d_update);

/* One configuration: tiles of 32 channels x 64 tokens (families/causal_conv1d/causal_conv1d.cu) */
static const char *const causal_configs[] = {"d32_l64"};
enum { CAUSAL_MAX_GRID_DIM_Y = 65535 };

static int32_t causal_supports(const convnd_conv_params *params, int32_t config, char *reason,
                               size_t reason_len) {
    (void)config;
    /* views_support.c refuses the same before the planner asks; supports() says it too, because
     * it is the schedule's whole answer (convnd_schedule_supports, the fuzzer and tests ask it) */
    if (params->sequences.kind == CONVND_SEQS_NONE)
        return convnd_refuse(reason, reason_len,
                             "not a stateful causal conv1d (SPEC §13: problem.sequences, "
                             "convnd_bind_causal_conv1d)");
    if (params->sequences.kind != CONVND_SEQS_UPDATE &&
        params->C_in > (int64_t)CAUSAL_MAX_GRID_DIM_Y * CONVND_CAUSAL_TILE_D)
        return convnd_refuse(reason, reason_len, "dim=%lld exceeds %lld (the grid's y)",
                             (long long)params->C_in,
                             (long long)CAUSAL_MAX_GRID_DIM_Y * CONVND_CAUSAL_TILE_D);
    return 1;
}

static int32_t causal_worth_routing(const convnd_conv_params *params, int32_t config) {
    (void)params;
    (void)config;
    return 1;
}

/* The kernels' own launch ABI (core/causal_params.h) from a plan's launch arguments: the
 * problem's one spatial dim is index 2 of the params' padded dims. */
static convnd_status causal_launch(const convnd_launch_args *a) {
    const convnd_conv_params *c = &a->params;
    const convnd_sequences *q = &c->sequences;
    convnd_causal_launch_args l;
    memset(&l, 0, sizeof l);
    convnd_causal_params *p = &l.p;
    p->dtype = c->dtype;
    p->layout = c->x_cl ? CONVND_CAUSAL_BLD : CONVND_CAUSAL_BDL;
    p->width = (int32_t)c->k[2];
    p->has_bias = c->has_bias;
    p->silu = c->activation == CONVND_ACT_SILU;
    p->batch = c->N;
    p->dim = c->C_in;
    p->seqlen = c->in[2];
    p->xs_b = p->dim * p->seqlen;
    p->xs_d = c->x_cl ? 1 : p->seqlen;
    p->xs_l = c->x_cl ? p->dim : 1;
    l.x = a->x;
    l.w = a->w;
    l.bias = a->bias;
    l.y = a->y;
    l.stream = a->stream;
    l.device = a->device;
    if (q->kind == CONVND_SEQS_UPDATE) {
        p->num_seqs = p->batch;
        p->state_len = q->state_len;
        p->state_rows = q->state_rows;
        l.state = a->state;
        l.cache_seqlens = q->circular ? a->cache_seqlens : NULL;
        l.state_indices = q->indexed ? a->state_indices : NULL;
        return CONVND_LAUNCH(&causal_conv1d_update_kernel, &l);
    }
    p->seqs = q->kind == CONVND_SEQS_IDX       ? CONVND_CAUSAL_SEQ_IDX
              : q->kind == CONVND_SEQS_OFFSETS ? CONVND_CAUSAL_OFFSETS
                                               : CONVND_CAUSAL_ROWS;
    p->num_seqs = q->kind == CONVND_SEQS_OFFSETS ? q->num_seqs : p->batch;
    l.init = q->initial_states ? a->x_prefix : NULL;
    l.final_state = q->final_states ? a->state : NULL;
    l.seq_idx = q->kind == CONVND_SEQS_IDX ? a->seq_idx : NULL;
    l.query_start_loc = q->kind == CONVND_SEQS_OFFSETS ? a->query_start_loc : NULL;
    return CONVND_LAUNCH(&causal_conv1d_kernel, &l);
}

CONVND_SCHEDULE_ENTRY(causal_conv1d, causal,
                      "the stateful causal conv1d (SPEC §13): streaming tiles with initial and "
                      "final states, packed sequences, the decode step",
                      "families/causal_conv1d/causal_conv1d.c, "
                      "families/causal_conv1d/causal_conv1d.cu",
                      1, causal_configs, NULL, CONVND_NEEDS_SM80, CONVND_READS_SEQUENCES);

/* Plan (on the stack, as conv_nd does) and execute a bound causal problem. */
static convnd_status causal_run(const convnd_problem *p, const convnd_io *io, void *stream) {
    convnd_plan_t plan;
    convnd_status st = convnd_plan_prepare(&plan, p);
    if (st != CONVND_OK) return st;
    if ((st = convnd_check_io(&plan.resolved.problem, &plan.resolved.sizes, io))) return st;
    if ((st = convnd_plan_choose(&plan, NULL, NULL))) {
        /* the planner's "no schedule": say why the one schedule that runs these declined */
        char why[512] = "";
        if (st == CONVND_ERR_NO_SCHEDULE &&
            !convnd_schedule_supports("causal_conv1d", p, why, sizeof why))
            return convnd_error(st, "no schedule runs this stateful causal conv1d: %s", why);
        return st;
    }
    return convnd_plan_launch(&plan, io, NULL, 0, stream);
}

convnd_status convnd_causal_conv1d(const convnd_causal_problem *p, const convnd_causal_tensors *t,
                                   void *stream) {
    convnd_problem q;
    convnd_io io;
    const convnd_status st = convnd_bind_causal_conv1d(p, t, &q, &io);
    return st != CONVND_OK ? st : causal_run(&q, &io, stream);
}

convnd_status convnd_causal_conv1d_update(const convnd_causal_update_problem *p,
                                          const convnd_causal_update_tensors *t, void *stream) {
    convnd_problem q;
    convnd_io io;
    const convnd_status st = convnd_bind_causal_conv1d_update(p, t, &q, &io);
    return st != CONVND_OK ? st : causal_run(&q, &io, stream);
}
