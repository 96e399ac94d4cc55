/* Benchmark candidates: one row each per problem. A candidate is a convnd schedule (forced),
 * the planner's choice ("auto"), or a peer: cuDNN (GPU only, after a materialized pad copy
 * where its API cannot express the padding), convnd's cublas_im2col schedule, and "pad + conv"
 * (a materialized zero-pad copy, then the planner's schedule on the zero-padded problem).
 *
 * Every kind implements the same three operations, so that validation and timing treat them
 * alike, and a test can inject its own (a deliberately wrong candidate must come out FAILED). */
#ifndef CONVND_BENCH_CANDIDATE_H
#define CONVND_BENCH_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>
#include "convnd.h"

#define BENCH_LABEL_LEN 96

typedef struct bench_instance bench_instance;

typedef struct bench_candidate_ops {
    /* Prepares to run p: device allocations, algorithm search. x, w and y are device buffers of
     * p holding random data (y may be overwritten). CONVND_ERR_UNSUPPORTED (reason in why)
     * when the candidate cannot run p: the row is skipped, not failed. */
    convnd_status (*prepare)(bench_instance *in, const convnd_problem *p, const void *x,
                             const void *w, void *y, char *why, size_t why_len);
    /* y = conv(x, w), asynchronously on stream (device buffers). */
    convnd_status (*run)(bench_instance *in, const void *x, const void *w, void *y, void *stream);
    /* Frees what prepare took; safe after a failed prepare. */
    void (*release)(bench_instance *in);
} bench_candidate_ops;

typedef struct bench_candidate {
    char label[BENCH_LABEL_LEN];  /* the row's name */
    char series[BENCH_LABEL_LEN]; /* the plot's bar (one per candidate across problems) */
    char spec[BENCH_LABEL_LEN];   /* convnd "schedule[:config]"; "" = the planner's choice */
    int32_t is_peer;              /* counts for "ratio to the best peer" */
    const bench_candidate_ops *ops;
    void *user; /* for candidates injected by tests */
} bench_candidate;

struct bench_instance {
    const bench_candidate *cand;
    convnd_problem problem;
    char plan[BENCH_LABEL_LEN]; /* what actually runs, e.g. "igemm_tc:b128" or "cuDNN IMPLICIT_GEMM"
                                 */
    char note[BENCH_LABEL_LEN]; /* e.g. "after a materialized pad copy" */
    void *workspace;
    size_t workspace_bytes;
    void *scratch; /* the padded copy of x, for the pad kinds */
    size_t scratch_bytes;
    convnd_problem inner; /* the problem the convolution runs on (padded for the pad kinds) */
    char inner_spec[BENCH_LABEL_LEN];
    void *state;  /* the peer's own (cuDNN descriptors) */
    int64_t runs; /* calls of run(): tests check that a FAILED candidate is never timed */
};

/* Prepare/run/release through the candidate's ops, counting runs. */
convnd_status bench_instance_prepare(bench_instance *in, const bench_candidate *c,
                                     const convnd_problem *p, const void *x, const void *w, void *y,
                                     char *why, size_t why_len);
convnd_status bench_instance_run(bench_instance *in, const void *x, const void *w, void *y,
                                 void *stream);
void bench_instance_release(bench_instance *in);

/* ---- the kinds ----------------------------------------------------------------------------- */

extern const bench_candidate_ops bench_convnd_ops;   /* a forced schedule, or the planner */
extern const bench_candidate_ops bench_pad_conv_ops; /* bench/peer_pad.c */
extern const bench_candidate_ops bench_cudnn_ops;    /* bench/peer_cudnn.c */

/* 1 when this build can run cuDNN (found at configure time); the rows still need a GPU. */
int32_t bench_have_cudnn(void);

/* What to compare. */
typedef struct bench_selection {
    const char *schedules; /* comma-separated "name[:config]" list, NULL = every schedule */
    int32_t every_config;  /* one row per configuration instead of per schedule */
    int32_t peers;         /* cuDNN, pad + conv (cublas_im2col is a schedule row either way) */
    int32_t auto_row;      /* the planner's choice */
} bench_selection;

/* Fills out[0..*count) (capacity cap) with the candidates of sel, in row order: the planner's
 * choice, every schedule, then the peers. 0 with a message when a named schedule or config
 * does not exist. */
int bench_candidates(const bench_selection *sel, bench_candidate *out, int32_t cap, int32_t *count,
                     char *err, size_t err_len);

/* Device memory helpers: the active device's allocator, NULL-safe free. */
convnd_status bench_alloc(void **ptr, size_t bytes);
void bench_free(void **ptr);

#endif
