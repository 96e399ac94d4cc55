/* convnd: hand-written CUDA convolution kernels behind one canonical entry point.
 *
 * Plain C11 (usable from C++ and .cu files). Includes no CUDA header: streams are opaque
 * pointers (a cudaStream_t cast to void*, or NULL for the default stream).
 *
 * Semantics (shapes, padding, transposed mode, epilogue) are those of the project's SPEC:
 *   forward:    O = floor((I + P0 + P1 - E) / S) + 1,  E = D*(K-1) + 1
 *   transposed: O = (I - 1)*S + E - P0 - P1
 *   y = act(alpha * acc + bias + beta * z)
 *
 * Thread safety: every function may be called from several host threads at once (each thread
 * with its own y and workspace; tests/test_concurrency.c). The last-error message is per thread.
 * The autotune cache is shared by all threads, under a lock (its file too). Process-wide settings
 * (convnd_set_device, the emulator controls, CONVND_* environment variables) should be set
 * before threads start calling. On the emulated device, launches from several threads run one at
 * a time. A plan is immutable: one plan may be executed from many threads at once. Neither
 * conv_nd nor a plan allocates device memory: scratch, autotune's included, comes from the
 * caller's workspace (convnd_workspace_size) or opts->autotune_scratch.
 */
#ifndef CONVND_H
#define CONVND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVND_MAX_DIMS 3
#define CONVND_MAX_RANK (CONVND_MAX_DIMS + 2)

typedef enum convnd_status {
    CONVND_OK = 0,
    CONVND_ERR_INVALID_ARGUMENT = 1, /* a parameter value breaks the SPEC's rules */
    CONVND_ERR_NULL_POINTER = 2,     /* a required tensor or output pointer is NULL */
    CONVND_ERR_ALIASING = 3,         /* an input overlaps y (only z == y is allowed) */
    CONVND_ERR_UNSUPPORTED = 4,      /* valid, but not supported (dtype, layout, schedule) */
    CONVND_ERR_NO_SCHEDULE = 5,      /* no schedule supports the problem */
    CONVND_ERR_WORKSPACE = 6,        /* workspace smaller than the plan needs */
    CONVND_ERR_OVERFLOW = 7,         /* a size, element or byte count does not fit int64 */
    CONVND_ERR_DEVICE = 8,           /* a CUDA call or kernel launch failed */
    CONVND_ERR_OUT_OF_MEMORY = 9,
    CONVND_ERR_INTERNAL = 10
} convnd_status;

/* CONVND_WGRAD (SPEC §10): the weight gradient of the forward problem the struct describes.
 * conv_nd(p, x, dy, NULL, z, dw, ...): x as forward, dy [N, C_out, O...] in y_layout, output dw
 * with w's forward shape in w_layout; dw = alpha*acc + beta*z, z (dw_prev) may equal dw. No bias,
 * no activation. Describe CONVND_Y for dy, CONVND_W (and CONVND_Z) for dw. */
typedef enum convnd_mode {
    CONVND_FORWARD = 0,
    CONVND_TRANSPOSED = 1,
    CONVND_WGRAD = 2
} convnd_mode;

typedef enum convnd_dtype { CONVND_F32 = 0, CONVND_F16 = 1, CONVND_BF16 = 2 } convnd_dtype;

typedef enum convnd_layout {
    CONVND_CHANNELS_FIRST = 0, /* N C [D] [H] W; weight [C_out][C_in/g][K...] */
    CONVND_CHANNELS_LAST = 1,  /* N [D] [H] W C; weight [C_out][K...][C_in/g] */
    CONVND_LAYOUT_AUTO = 2     /* y only: ATen's rule, channels-last if x or w is */
} convnd_layout;

typedef enum convnd_activation {
    CONVND_ACT_NONE = 0,
    CONVND_ACT_RELU = 1,
    CONVND_ACT_SILU = 2,
    CONVND_ACT_GELU = 3 /* exact (erf) GELU */
} convnd_activation;

typedef enum convnd_math {
    CONVND_MATH_DEFAULT = 0,   /* f32: exact FMA; f16/bf16: tensor cores, f32 accumulation */
    CONVND_MATH_ALLOW_TF32 = 1 /* f32 inputs may be rounded to TF32 for tensor cores */
} convnd_math;

/* SPEC §11: where a tensor's elements live. custom = 0 (the default, what convnd_problem_init
 * leaves): the packed strides of the tensor's layout. custom = 1: element [n, c, p...] lives at
 * base + n*strides[0] + c*strides[1] + sum p[t]*strides[2+t] (elements, each >= 0; entries past
 * the tensor's rank are ignored), e.g. a channel slice of a larger buffer or a padded row pitch.
 * extent > 0: the elements the caller's buffer holds from the base pointer; a view reaching past
 * it is refused (0: not checked). An output view must not be self-overlapping. Only some
 * schedules read views (`direct` and the wgrad ones any; the implicit GEMMs those of x and y,
 * with z at y's offsets); the others decline with a reason. */
typedef struct convnd_view {
    int32_t custom;
    int64_t strides[CONVND_MAX_RANK];
    int64_t extent;
} convnd_view;

/* SPEC §15: the input prologue, a chain of elementwise steps applied to every element of x a tap
 * reads inside [0, I) (padding stays 0; a prefix or suffix is read as given; a state output
 * receives the transformed values). Each step is computed in f32 from the previous value and,
 * with round = 1, rounded to x's dtype after it (f32: no-op). r, a and b are f32 tensors passed
 * with convnd_plan_execute_io (io.pro_r, io.pro_a, io.pro_b), packed: r [N, I...] over x's own
 * positions, a and b [C_in] (or [N, C_in] with ab_per_sample = 1). docs/prologue.md. */
typedef enum convnd_prologue_op {
    CONVND_PRO_DIV_R = 1,      /* v / r[n, p] (IEEE division) */
    CONVND_PRO_MUL_R = 2,      /* v * r[n, p] */
    CONVND_PRO_MUL_SCALAR = 3, /* v * step.scalar */
    CONVND_PRO_MUL_A = 4,      /* v * a[c] */
    CONVND_PRO_ADD_B = 5,      /* v + b[c] */
    CONVND_PRO_FMA_AB = 6,     /* fma(v, a[c], b[c]): one f32 rounding, as a CUDA compiler makes
                                  ATen's contracted x*a + b (MUL_A then ADD_B rounds twice) */
    CONVND_PRO_ACT = 7         /* act_in: step.act (SPEC §5's functions, in f32) */
} convnd_prologue_op;

typedef struct convnd_prologue_step {
    convnd_prologue_op op;
    int32_t round;         /* 1: the result is rounded to x's dtype */
    float scalar;          /* MUL_SCALAR */
    convnd_activation act; /* ACT */
} convnd_prologue_step;

#define CONVND_MAX_PROLOGUE_STEPS 6

typedef struct convnd_prologue {
    int32_t num_steps; /* 0 (the default): no prologue */
    convnd_prologue_step steps[CONVND_MAX_PROLOGUE_STEPS];
    int32_t ab_per_sample; /* 1: a and b are [N, C_in] (per sample and channel), else [C_in] */
} convnd_prologue;

/* The canonical problem. Sizes are int64; per-dimension arrays hold `dims` entries, outermost
 * spatial dimension first (D, H, W); entries past `dims` are ignored. Fill with
 * convnd_problem_init() and then set what differs from its defaults. */
/* SPEC §13 on a problem: the stateful causal conv1d (include/convnd_causal.h binds its calls
 * onto one: convnd_bind_causal_conv1d). A depthwise 1-D forward conv with P0 = K-1, P1 = 0 whose
 * batch rows hold sequences and whose history lives in states; only the causal_conv1d schedule
 * runs it. CONVND_SEQS_NONE (0, the default) for every other problem. */
typedef enum convnd_seqs {
    CONVND_SEQS_NONE = 0,
    CONVND_SEQS_ROWS = 1,    /* every batch row is one sequence (causal_conv1d_fn) */
    CONVND_SEQS_IDX = 2,     /* per-token sequence ids: io.seq_idx, int32 [N, I] */
    CONVND_SEQS_OFFSETS = 3, /* num_seqs sequences packed in one row: io.query_start_loc */
    CONVND_SEQS_UPDATE = 4   /* the decode step against io.state (causal_conv1d_update) */
} convnd_seqs;

typedef struct convnd_sequences {
    convnd_seqs kind;
    int64_t num_seqs; /* OFFSETS */
    /* ROWS/OFFSETS: 1 when io.x_prefix holds initial states / io.state receives final states,
     * [S, C, K-1] packed (S: num_seqs when packed, else N); io.state may be io.x_prefix exactly */
    int32_t initial_states, final_states;
    /* UPDATE: io.state is [state_rows, C, state_len] (state_len >= K-1), read and written;
     * circular: 1 with io.cache_seqlens (int32 [N]); indexed: 1 with io.state_indices (int32
     * [N]) */
    int64_t state_len, state_rows;
    int32_t circular, indexed;
} convnd_sequences;

typedef struct convnd_problem {
    int32_t dims; /* 1, 2 or 3 */
    convnd_mode mode;
    int64_t N, C_in, C_out, groups;
    int64_t input[CONVND_MAX_DIMS];
    int64_t kernel[CONVND_MAX_DIMS];
    int64_t stride[CONVND_MAX_DIMS];
    int64_t dilation[CONVND_MAX_DIMS];
    int64_t pad_before[CONVND_MAX_DIMS]; /* signed: negative crops */
    int64_t pad_after[CONVND_MAX_DIMS];
    convnd_dtype dtype;
    convnd_layout x_layout, w_layout, y_layout; /* z always shares y's layout */
    /* epilogue: y = act(alpha * acc + bias + beta * z) */
    int32_t has_bias; /* bias [C_out] is read */
    int32_t has_z;    /* residual z (shape of y) is read; z may equal y exactly */
    float alpha, beta;
    convnd_activation activation;
    convnd_math math;
    /* SPEC §11 views of x, y and z (z's view defaults to y's when y has one and z does not). In
     * wgrad mode y_view is dy's; dw and its z have w's packed layout. */
    convnd_view x_view, y_view, z_view;
    /* SPEC §12, forward mode only: along spatial dim io_axis (0..dims-1) the conv reads
     * X = cat(x_prefix, x), x_prefix holding prefix_size positions, and writes X's last
     * state_size positions (zeros before X's start) to a state tensor in the same launch. Both
     * are shaped like x with that dim's size replaced, packed in x_layout, and are passed to
     * convnd_plan_execute_io. All 0 (the default): neither. */
    int32_t io_axis;
    int64_t prefix_size, state_size;
    /* SPEC §14: a suffix of suffix_size positions after x on the same axis, X = cat(x_prefix, x,
     * x_suffix); shaped like the prefix, passed to convnd_plan_execute_io. */
    int64_t suffix_size;
    /* SPEC §14: the prefix and the suffix as views (SPEC §11, strides over [N, C, spatial...]);
     * custom = 0 (the default): packed in x_layout. */
    convnd_view prefix_view, suffix_view;
    /* SPEC §13: a stateful causal conv1d's sequences and states (above); kind 0: none. */
    convnd_sequences sequences;
    /* SPEC §15: the input prologue (above); num_steps 0: none. */
    convnd_prologue prologue;
} convnd_problem;

/* Defaults: forward, N=1, groups=1, stride=dilation=1, padding 0, f32, channels-first x and w,
 * y layout AUTO, alpha=1, beta=0, no bias, no z, no activation, exact f32 math. Sizes are left
 * 0 and must be set. */
void convnd_problem_init(convnd_problem *p, int32_t dims);

/* Checks every rule of the SPEC (section 8) with overflow-checked arithmetic. On error the
 * per-thread message names the parameter and values, e.g. "groups=3 does not divide C_in=64". */
convnd_status convnd_validate(const convnd_problem *p);

/* ---- tensors: shapes and strides ---------------------------------------------------------- */

typedef enum convnd_tensor {
    CONVND_X = 0,
    CONVND_W = 1,
    CONVND_BIAS = 2,
    CONVND_Y = 3,
    CONVND_Z = 4,
    CONVND_X_PREFIX = 5, /* SPEC §12: [N, C_in, I...] with prefix_size on io_axis */
    CONVND_STATE = 6,    /* SPEC §12: [N, C_in, I...] with state_size on io_axis */
    CONVND_X_SUFFIX = 7, /* SPEC §14: [N, C_in, I...] with suffix_size on io_axis */
    CONVND_PRO_R = 8,    /* SPEC §15, f32: [N, I...] (x's own positions) */
    CONVND_PRO_A = 9,    /* SPEC §15, f32: [C_in], or [N, C_in] with ab_per_sample */
    CONVND_PRO_B = 10    /* SPEC §15, f32: as a */
} convnd_tensor;

/* Shape in logical order (x: [N, C_in, I...], w: forward [C_out, C_in/g, K...] or transposed
 * [C_in, C_out/g, K...], bias: [C_out], y and z: [N, C_out, O...]) and element strides for the
 * tensor's layout, or its view's strides (SPEC §11). In CONVND_WGRAD mode y is dy (the input)
 * and z, like w, is dw's shape. */
typedef struct convnd_tensor_desc {
    int32_t rank;
    int64_t shape[CONVND_MAX_RANK];
    int64_t strides[CONVND_MAX_RANK]; /* in elements */
    int64_t numel;
    int64_t bytes; /* from the base pointer to the end of the last element (numel * size packed) */
    convnd_layout layout; /* resolved (never AUTO) */
} convnd_tensor_desc;

/* Validates p, then describes one tensor. */
convnd_status convnd_tensor_describe(const convnd_problem *p, convnd_tensor which,
                                     convnd_tensor_desc *out);

/* Output spatial sizes O[0..dims-1] (validates p). */
convnd_status convnd_output_size(const convnd_problem *p, int64_t out[CONVND_MAX_DIMS]);

/* SPEC §14: one shard's part of a forward convolution sharded along spatial dim `axis` of p (p
 * is the whole problem: input[axis] = I, without a prefix, suffix or state). The shard holding
 * input rows [shard_begin, shard_begin + shard_size) computes output rows [out_begin, out_end)
 * (none when equal), whose windows read input rows [in_begin, in_end) (unclipped: those outside
 * [0, I) are the original padding). Its own problem is p with input[axis] = x_end - x_begin
 * (x: those rows of the whole input, a view of the shard), prefix_size and suffix_size rows of
 * other shards before and after them, and pad_before/pad_after[axis] = pad_before/pad_after here
 * (negative values crop); its output is exactly rows [out_begin, out_end). Rows
 * [interior_begin, interior_end) read only the shard's rows (and padding): they can be computed
 * while the halo is in flight. */
typedef struct convnd_shard {
    int64_t out_begin, out_end;
    int64_t in_begin, in_end;
    int64_t x_begin, x_end;
    int64_t prefix_size, suffix_size;
    int64_t pad_before, pad_after;
    int64_t interior_begin, interior_end;
} convnd_shard;
/* The shard's rows by SPEC §14's identity (the rows whose windows start in the shard: its halo
 * is a suffix only), x = the whole shard (x_begin, x_end = its rows). */
convnd_status convnd_shard_rows(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                int64_t shard_size, convnd_shard *out);
/* The shard's rows aligned with its input rows: [ceil(begin * O / I), ceil(end * O / I)), the
 * same rows as the input's for a "same" conv (O = I), so that a chain of such convs and
 * row-local layers (a residual add, nearest upsampling) keeps one row partition; the halo is on
 * both sides. x = the shard's rows the windows read. */
convnd_status convnd_shard_rows_aligned(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                        int64_t shard_size, convnd_shard *out);
/* Any output rows [out_begin, out_end) of the whole conv, computed by the shard, as their own
 * problem: x = the shard's rows their windows read (at least one), the rows beyond it as prefix
 * and suffix. A shard's rows in parts (the interior while the halo is in flight, then the
 * rest) are parts of its rows. */
convnd_status convnd_shard_part(const convnd_problem *p, int32_t axis, int64_t shard_begin,
                                int64_t shard_size, int64_t out_begin, int64_t out_end,
                                convnd_shard *out);

/* ATen's default output layout: channels-last when x or w is channels-last. */
convnd_layout convnd_default_output_layout(convnd_layout x_layout, convnd_layout w_layout);

/* Useful FLOPs (2 per multiply-add; forward 2*N*C_out*prod(O)*(C_in/g)*prod(K), transposed
 * 2*N*C_in*prod(I)*(C_out/g)*prod(K)) and the fewest bytes (x, w, bias, z, y once each). */
convnd_status convnd_flops(const convnd_problem *p, double *flops);
convnd_status convnd_min_bytes(const convnd_problem *p, double *bytes);

/* ---- errors --------------------------------------------------------------------------------- */

const char *convnd_status_string(convnd_status s);
/* Message of the last error on this host thread ("" when none). */
const char *convnd_last_error(void);

/* ---- the canonical call ------------------------------------------------------------------- */

typedef struct convnd_options {
    /* NULL: the planner chooses. Else "schedule" or "schedule:config" (see convnd_list); a forced
     * schedule that does not support the problem is an error carrying its reason, never a
     * silent fallback. The environment variable CONVND_SCHEDULE forces one the same way when
     * this is NULL. */
    const char *schedule;
    /* 1: time every supporting configuration once on the GPU and cache the winner per problem
     * and device (like cuDNN's benchmark mode). Ignored on the emulated device. conv_nd times on
     * the caller's tensors with a scratch y carved from its workspace (convnd_workspace_size
     * counts it); convnd_plan_create times at creation on autotune_scratch below. */
    int32_t autotune;
    /* With autotune: also load/store the cache in this file (NULL: memory only). */
    const char *autotune_cache_file;
    /* With autotune, for convnd_plan_create: device memory of at least
     * convnd_plan_autotune_scratch_size bytes holding the operands the candidates are timed on
     * (overwritten; the library never allocates it). NULL when no winner is cached is an error. */
    void *autotune_scratch;
    size_t autotune_scratch_bytes;
} convnd_options;

/* A workspace given to conv_nd (non-NULL with workspace_bytes > 0) must start at a multiple of
 * this many bytes, as cudaMalloc's and convnd_malloc's memory does, and must not overlap x, w,
 * bias, z or y (CONVND_ERR_INVALID_ARGUMENT / CONVND_ERR_ALIASING). */
#define CONVND_WORKSPACE_ALIGNMENT 256

/* Workspace bytes that conv_nd needs for this problem and options. */
convnd_status convnd_workspace_size(const convnd_problem *p, const convnd_options *opts,
                                    size_t *bytes);

/* The schedule and configuration conv_nd would run, as "schedule:config". */
convnd_status convnd_plan_name(const convnd_problem *p, const convnd_options *opts, char *buf,
                               size_t buf_len);
/* Why the planner picks what it picks for p: one line per schedule:configuration in planner
 * order ("refuses: REASON", "supports, worth routing", "supports, not worth routing"; the chosen
 * one marked), then "chosen: schedule:config (how)". Autotune is left out. *needed (when not
 * NULL) gets the whole text's size with its NUL (buf NULL, len 0: only that); a buf of fewer
 * bytes is filled as far as it goes and CONVND_ERR_INVALID_ARGUMENT returned. `convnd-bench
 * --why` prints it. */
convnd_status convnd_plan_explain(const convnd_problem *p, const convnd_options *opts, char *buf,
                                  size_t len, size_t *needed);

/* y = act(alpha * conv(x, w) + bias + beta * z). All pointers are device pointers (memory from
 * convnd_malloc works on either device), aligned to the element size. bias and z may be NULL
 * when the problem does not use them. z may equal y; no other overlap with y is allowed. The
 * workspace: see CONVND_WORKSPACE_ALIGNMENT. opts may be NULL. A one-shot plan: create,
 * execute, without the heap.
 *
 * Errors: every status but CONVND_ERR_DEVICE is decided before any launch, and then nothing is
 * written to y (nor to the workspace). CONVND_ERR_DEVICE: on the emulated device, a launch
 * acquires everything it needs (fiber stacks, copy queues) before its first block runs, so a
 * launch that fails for lack of resources writes nothing; but a kernel that fails while it runs
 * (a bug the emulator detects, such as a divergent barrier) and, on a GPU, a launch failure or
 * a fault inside a kernel (which CUDA may report only at a later call) can leave y partly
 * written, as can a schedule's second launch failing after its first. */
convnd_status conv_nd(const convnd_problem *p, const void *x, const void *w, const void *bias,
                      const void *z, void *y, void *workspace, size_t workspace_bytes, void *stream,
                      const convnd_options *opts);

/* ---- plans: validate and choose once, execute many times ------------------------------------ */

/* A plan holds the validated problem, its chosen schedule and configuration, the launch
 * parameters and the workspace size. It is immutable: one plan may be executed from many host
 * threads at once. */
typedef struct convnd_plan convnd_plan_t;

/* Validates p, resolves its layouts, chooses the schedule (forced, autotuned or planned) and
 * precomputes the launch. A forced schedule that does not support p fails here with its reason.
 * Autotune, when asked for, runs here on opts->autotune_scratch. On error *plan is NULL. */
convnd_status convnd_plan_create(convnd_plan_t **plan, const convnd_problem *p,
                                 const convnd_options *opts);
/* What convnd_plan_create's autotune needs in opts->autotune_scratch (0 when it will not time:
 * no autotune, a forced schedule, a cached winner, or the emulated device). */
convnd_status convnd_plan_autotune_scratch_size(const convnd_problem *p, const convnd_options *opts,
                                                size_t *bytes);
/* Checks the pointers (NULL, alignment, aliasing) and the workspace, then launches: no
 * validation, no planning, no allocation, no host synchronisation, never autotunes. Same
 * pointer rules and results as conv_nd. */
convnd_status convnd_plan_execute(const convnd_plan_t *plan, const void *x, const void *w,
                                  const void *bias, const void *z, void *y, void *workspace,
                                  size_t workspace_bytes, void *stream);
/* Every tensor of a call, for problems with a prefix input or a state output (SPEC §12):
 * x_prefix is read when prefix_size > 0, state written when state_size > 0 (it must overlap no
 * other tensor: ping-pong two buffers across chunks). The other fields as convnd_plan_execute. */
typedef struct convnd_io {
    const void *x, *x_prefix, *w, *bias, *z;
    void *y, *state;
    const void *x_suffix; /* SPEC §14: read when suffix_size > 0 */
    /* SPEC §13 (problem.sequences): the int32 index tensors of a stateful causal conv1d */
    const int32_t *seq_idx, *query_start_loc, *cache_seqlens, *state_indices;
    /* SPEC §15 (problem.prologue): the f32 operands its steps read */
    const float *pro_r, *pro_a, *pro_b;
} convnd_io;
/* convnd_plan_execute with every tensor of convnd_io; convnd_plan_execute and conv_nd pass NULL
 * for x_prefix and state, so a problem that reads or writes them needs this entry. */
convnd_status convnd_plan_execute_io(const convnd_plan_t *plan, const convnd_io *io,
                                     void *workspace, size_t workspace_bytes, void *stream);
convnd_status convnd_plan_workspace_size(const convnd_plan_t *plan, size_t *bytes);
/* "schedule:config (why it was chosen)" */
convnd_status convnd_plan_describe(const convnd_plan_t *plan, char *buf, size_t len);
/* convnd_tensor_describe and convnd_output_size of the plan's problem (y_layout resolved), from
 * what convnd_plan_create validated: nothing is validated again. */
convnd_status convnd_plan_tensor_describe(const convnd_plan_t *plan, convnd_tensor which,
                                          convnd_tensor_desc *out);
convnd_status convnd_plan_output_size(const convnd_plan_t *plan, int64_t out[CONVND_MAX_DIMS]);
void convnd_plan_destroy(convnd_plan_t *plan);

/* ---- counters ------------------------------------------------------------------------------ */

/* Process-wide counts since the library was loaded, all threads together: problem validations
 * (convnd_validate and every call that checks a problem: conv_nd, convnd_plan_create,
 * convnd_tensor_describe, ...) and planner runs (choosing a schedule: conv_nd, convnd_plan_create,
 * convnd_plan_name, ...). For tests and overhead checks: executing a plan adds to neither. */
typedef struct convnd_counters {
    uint64_t validations;
    uint64_t plans;
} convnd_counters;
void convnd_get_counters(convnd_counters *out);

/* ---- schedules ------------------------------------------------------------------------------ */

/* Number of schedules; name and configurations of schedule i (NULL past the end). */
int32_t convnd_schedule_count(void);
const char *convnd_schedule_name(int32_t i);
int32_t convnd_schedule_config_count(int32_t i);
const char *convnd_schedule_config_name(int32_t i, int32_t config);
/* 1 if "schedule[:config]" supports p, else 0 and the reason in buf. */
int32_t convnd_schedule_supports(const char *schedule, const convnd_problem *p, char *reason,
                                 size_t reason_len);

/* ---- errata: configurations the planner never routes to on a device (docs/errata.md) ------ */

/* The errata file the planner reads now: $CONVND_ERRATA, "" when CONVND_ERRATA=off, else
 * $XDG_CACHE_HOME/convnd/errata or ~/.cache/convnd/errata. A missing file excludes nothing. */
convnd_status convnd_errata_path(char *buf, size_t len);
/* The active device as an errata line's device fields:
 * device="NAME" cc=MAJOR.MINOR sms=N driver=N convnd=VERSION (what convnd-selftest writes). */
convnd_status convnd_errata_device_key(char *buf, size_t len);
/* Reads the errata file now: CONVND_ERR_INVALID_ARGUMENT naming the file and the line when it is
 * malformed (plan creation fails the same way while it is). */
convnd_status convnd_errata_check(void);

/* ---- devices: a real GPU, or the emulated device ("interpret mode") ------------------------ */

typedef enum convnd_device {
    CONVND_DEVICE_AUTO = 0, /* the GPU when built with CUDA and one is present, else emulated */
    CONVND_DEVICE_GPU = 1,
    CONVND_DEVICE_EMULATED = 2 /* kernels run on the CPU from the same .cu source */
} convnd_device;

/* Select the device for this process (also: environment CONVND_DEVICE=gpu|emulated). Call
 * before allocating. Asking for the GPU where there is none returns CONVND_ERR_DEVICE. */
convnd_status convnd_set_device(convnd_device d);
/* Overrides the device for the calls made by this host thread only (CONVND_DEVICE_AUTO removes
 * the override): how a binding runs each call where its tensors live, e.g. CPU tensors on the
 * emulated device and CUDA tensors on the GPU in one process. Asking for the GPU where there is
 * none returns CONVND_ERR_DEVICE and leaves the override unchanged. */
convnd_status convnd_set_thread_device(convnd_device d);
/* The device in use on this thread (never AUTO): the thread's override, else the process's. */
convnd_device convnd_active_device(void);
const char *convnd_device_name(void);

/* Memory on the active device (host memory on the emulated device). */
convnd_status convnd_malloc(void **ptr, size_t bytes);
convnd_status convnd_free(void *ptr);
convnd_status convnd_memcpy_h2d(void *dst, const void *src, size_t bytes);
convnd_status convnd_memcpy_d2h(void *dst, const void *src, size_t bytes);
convnd_status convnd_memcpy_d2d(void *dst, const void *src, size_t bytes);
convnd_status convnd_memset(void *dst, int value, size_t bytes);
convnd_status convnd_synchronize(void *stream);

/* Emulated device controls. Thread order between barriers: races show up as wrong results
 * when a case runs in two orders (also: environment
 * CONVND_EMU_ORDER=forward|reverse|shuffle|warp_ahead, CONVND_EMU_SEED, CONVND_EMU_THREADS for
 * host worker threads). WARP_AHEAD runs one warp at a time (warps in a seeded order) from one
 * barrier to the next, so a warp reaches the next barrier before the others start the phase,
 * even in kernels whose warp-wide operations would otherwise make the warps advance together. */
typedef enum convnd_emu_order {
    CONVND_EMU_FORWARD = 0,
    CONVND_EMU_REVERSE = 1,
    CONVND_EMU_SHUFFLE = 2,
    CONVND_EMU_WARP_AHEAD = 3
} convnd_emu_order;
void convnd_emu_set_order(convnd_emu_order order, uint64_t seed);
/* Host worker threads, 1..1024 (larger values are capped at 1024; 0 or less: the default). */
void convnd_emu_set_host_threads(int32_t n);
/* When a cp.async copy lands (also: environment CONVND_EMU_COPIES=late|early|mixed, seeded by
 * CONVND_EMU_SEED): LATE at the wait that covers it (a read before the wait sees poison), EARLY
 * at issue (a prefetch into a stage other threads still read shows up), MIXED a seeded choice
 * per copy. A GPU may do any of these. */
typedef enum convnd_emu_copies {
    CONVND_EMU_COPIES_LATE = 0,
    CONVND_EMU_COPIES_EARLY = 1,
    CONVND_EMU_COPIES_MIXED = 2
} convnd_emu_copies;
void convnd_emu_set_copies(convnd_emu_copies mode, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* CONVND_H */
