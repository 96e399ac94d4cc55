/* libFuzzer target over convnd's whole host path (tests/fuzz/run.sh builds and runs it).
 *
 * The first byte picks an entry point: a raw convnd_problem, one of the front-end bindings of
 * convnd_bind.h, or convnd_fold_pad; the rest of the input is its arguments (fuzz_input.h says
 * how bytes become values). Whatever problem comes out (the raw one, or a binding's result)
 * then goes through fuzz_exercise_problem: validation against an independent 128-bit model,
 * shapes, strides, sizes, metrics, kernel params, every schedule's supports(), the planner,
 * and conv_nd's rejections. A crash, a sanitizer report, or a broken expectation (an accepted
 * problem whose counts overflow, an error without a message, an output written on error, ...)
 * aborts: a finding. Kernels are never launched; the target links the real library. */
#include <stdint.h>
#include <string.h>

#include "convnd.h"
#include "convnd_bind.h"
#include "error.h"
#include "fuzz_checks.h"
#include "fuzz_input.h"
#include "size_model.h"

enum entry {
    ENTRY_RAW_PROBLEM,
    ENTRY_TORCH_CONV,
    ENTRY_TORCH_CONV_PADDING_MODE,
    ENTRY_TORCH_CONV_TRANSPOSE,
    ENTRY_TORCH_CONVOLUTION,
    ENTRY_TORCH__CONVOLUTION,
    ENTRY_CAUSAL_CONV,
    ENTRY_ONNX_CONV,
    ENTRY_ONNX_CONV_TRANSPOSE,
    ENTRY_TF_CONV,
    ENTRY_FOLD_PAD,
    ENTRY_COUNT
};

/* ---- arguments ---------------------------------------------------------------------------- */

static void read_problem(fuzz_input *in, convnd_problem *p) {
    memset(p, 0, sizeof *p);
    p->dims = fuzz_i32(in);
    p->mode = (convnd_mode)fuzz_i32(in);
    p->N = fuzz_i64(in);
    p->C_in = fuzz_i64(in);
    p->C_out = fuzz_i64(in);
    p->groups = fuzz_i64(in);
    int64_t *lists[] = {p->input, p->kernel, p->stride, p->dilation, p->pad_before, p->pad_after};
    for (int l = 0; l < 6; ++l)
        for (int t = 0; t < CONVND_MAX_DIMS; ++t)
            lists[l][t] = fuzz_i64(in);
    p->dtype = (convnd_dtype)fuzz_i32(in);
    p->x_layout = (convnd_layout)fuzz_i32(in);
    p->w_layout = (convnd_layout)fuzz_i32(in);
    p->y_layout = (convnd_layout)fuzz_i32(in);
    p->has_bias = fuzz_i32(in);
    p->has_z = fuzz_i32(in);
    p->alpha = fuzz_f32(in);
    p->beta = fuzz_f32(in);
    p->activation = (convnd_activation)fuzz_i32(in);
    p->math = (convnd_math)fuzz_i32(in);
}

/* rank -128 stands for a NULL shape */
static const convnd_shape *read_shape(fuzz_input *in, convnd_shape *s) {
    memset(s, 0, sizeof *s);
    s->rank = fuzz_i32(in);
    if (s->rank == -128) return NULL;
    for (int i = 0; i < CONVND_MAX_RANK; ++i)
        s->v[i] = fuzz_i64(in);
    return s;
}

/* a flag byte: absent (NULL, the framework's default), else len and every entry */
static const convnd_ints *read_ints(fuzz_input *in, convnd_ints *l) {
    memset(l, 0, sizeof *l);
    if (!fuzz_flag(in)) return NULL;
    l->len = fuzz_i32(in);
    for (int i = 0; i < CONVND_MAX_RANK; ++i)
        l->v[i] = fuzz_i64(in);
    return l;
}

static const convnd_pads *read_pads(fuzz_input *in, convnd_pads *l) {
    memset(l, 0, sizeof *l);
    if (!fuzz_flag(in)) return NULL;
    l->len = fuzz_i32(in);
    for (int i = 0; i < 2 * CONVND_MAX_RANK; ++i)
        l->v[i] = fuzz_i64(in);
    return l;
}

/* ---- the bindings -------------------------------------------------------------------------- */

typedef struct binding_args {
    int32_t dims, i0, i1;
    convnd_shape a, b;
    const convnd_shape *x, *w;
    int64_t bias_len, groups;
    convnd_ints l[6];
    const convnd_ints *stride, *padding, *dilation, *extra, *extra2;
    convnd_pads pads_buf;
    const convnd_pads *pads;
} binding_args;

/* Reads the arguments of entry e in its parameter order and calls it. */
static convnd_status call_binding(int e, fuzz_input *in, convnd_problem *out) {
    binding_args a;
    memset(&a, 0, sizeof a);
    switch (e) {
    case ENTRY_TORCH_CONV:
    case ENTRY_CAUSAL_CONV:
        a.dims = fuzz_i32(in);
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.stride = read_ints(in, &a.l[0]), a.padding = read_ints(in, &a.l[1]);
        a.dilation = read_ints(in, &a.l[2]), a.groups = fuzz_i64(in);
        return (e == ENTRY_TORCH_CONV ? convnd_bind_torch_conv : convnd_bind_causal_conv)(
            a.dims, a.x, a.w, a.bias_len, a.stride, a.padding, a.dilation, a.groups, out);
    case ENTRY_TORCH_CONV_PADDING_MODE:
        a.dims = fuzz_i32(in);
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.stride = read_ints(in, &a.l[0]), a.i0 = fuzz_i32(in);
        a.dilation = read_ints(in, &a.l[2]), a.groups = fuzz_i64(in);
        return convnd_bind_torch_conv_padding_mode(a.dims, a.x, a.w, a.bias_len, a.stride,
                                                   (convnd_torch_padding)a.i0, a.dilation, a.groups,
                                                   out);
    case ENTRY_TORCH_CONV_TRANSPOSE:
        a.dims = fuzz_i32(in);
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.stride = read_ints(in, &a.l[0]), a.padding = read_ints(in, &a.l[1]);
        a.extra = read_ints(in, &a.l[3]), a.groups = fuzz_i64(in);
        a.dilation = read_ints(in, &a.l[2]);
        return convnd_bind_torch_conv_transpose(a.dims, a.x, a.w, a.bias_len, a.stride, a.padding,
                                                a.extra, a.groups, a.dilation, out);
    case ENTRY_TORCH_CONVOLUTION:
    case ENTRY_TORCH__CONVOLUTION:
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.stride = read_ints(in, &a.l[0]), a.padding = read_ints(in, &a.l[1]);
        a.dilation = read_ints(in, &a.l[2]), a.i0 = fuzz_i32(in);
        a.extra = read_ints(in, &a.l[3]), a.groups = fuzz_i64(in);
        if (e == ENTRY_TORCH_CONVOLUTION)
            return convnd_bind_torch_convolution(a.x, a.w, a.bias_len, a.stride, a.padding,
                                                 a.dilation, a.i0, a.extra, a.groups, out);
        a.i1 = fuzz_i32(in);
        return convnd_bind_torch__convolution(a.x, a.w, a.bias_len, a.stride, a.padding, a.dilation,
                                              a.i0, a.extra, a.groups, a.i1, out);
    case ENTRY_ONNX_CONV:
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.i0 = fuzz_i32(in), a.dilation = read_ints(in, &a.l[2]), a.groups = fuzz_i64(in);
        a.extra = read_ints(in, &a.l[3]), a.pads = read_pads(in, &a.pads_buf);
        a.stride = read_ints(in, &a.l[0]);
        return convnd_bind_onnx_conv(a.x, a.w, a.bias_len, (convnd_onnx_auto_pad)a.i0, a.dilation,
                                     a.groups, a.extra, a.pads, a.stride, out);
    case ENTRY_ONNX_CONV_TRANSPOSE:
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.i0 = fuzz_i32(in), a.dilation = read_ints(in, &a.l[2]), a.groups = fuzz_i64(in);
        a.extra = read_ints(in, &a.l[3]), a.padding = read_ints(in, &a.l[1]);
        a.extra2 = read_ints(in, &a.l[4]), a.pads = read_pads(in, &a.pads_buf);
        a.stride = read_ints(in, &a.l[0]);
        return convnd_bind_onnx_conv_transpose(a.x, a.w, a.bias_len, (convnd_onnx_auto_pad)a.i0,
                                               a.dilation, a.groups, a.extra, a.padding, a.extra2,
                                               a.pads, a.stride, out);
    case ENTRY_TF_CONV:
        a.x = read_shape(in, &a.a), a.w = read_shape(in, &a.b), a.bias_len = fuzz_i64(in);
        a.stride = read_ints(in, &a.l[0]), a.i0 = fuzz_i32(in);
        a.dilation = read_ints(in, &a.l[2]), a.i1 = fuzz_i32(in);
        return convnd_bind_tf_conv(a.x, a.w, a.bias_len, a.stride, (convnd_tf_padding)a.i0,
                                   a.dilation, (convnd_tf_data_format)a.i1, out);
    }
    return CONVND_ERR_INTERNAL;
}

/* What the caller sets after binding (convnd_bind.h): dtype, layouts, epilogue. */
static void read_caller_fields(fuzz_input *in, convnd_problem *p) {
    if (!fuzz_flag(in)) return;
    p->dtype = (convnd_dtype)fuzz_i32(in);
    p->x_layout = (convnd_layout)fuzz_i32(in);
    p->w_layout = (convnd_layout)fuzz_i32(in);
    p->y_layout = (convnd_layout)fuzz_i32(in);
    p->has_z = fuzz_i32(in);
    p->alpha = fuzz_f32(in);
    p->beta = fuzz_f32(in);
    p->activation = (convnd_activation)fuzz_i32(in);
    p->math = (convnd_math)fuzz_i32(in);
}

/* A binding's promises: on error *out untouched; on success a valid problem with the bias the
 * caller described and the documented defaults. */
static void check_binding_result(int e, convnd_status st, const convnd_problem *out,
                                 const convnd_problem *untouched, int out_is_null) {
    fuzz_expect_message(NULL, st, "binding");
    if (out_is_null) {
        FUZZ_CHECK(NULL, st != CONVND_OK, "binding %d accepted a NULL output problem", e);
        return;
    }
    if (st != CONVND_OK) {
        FUZZ_CHECK(NULL, memcmp(out, untouched, sizeof *out) == 0,
                   "binding %d wrote *out on error '%s'", e, convnd_status_string(st));
        return;
    }
    convnd_clear_error();
    FUZZ_CHECK(out, convnd_validate(out) == CONVND_OK, "binding %d returned an invalid problem", e);
    size_model m;
    size_model_eval(out, &m);
    FUZZ_CHECK(out, m.valid, "binding %d returned a problem the 128-bit model rejects", e);
    FUZZ_CHECK(out,
               out->has_z == 0 && out->alpha == 1.0f && out->beta == 0.0f &&
                   out->activation == CONVND_ACT_NONE && out->dtype == CONVND_F32,
               "binding %d did not start from convnd_problem_init's epilogue and dtype", e);
}

static void run_binding(int e, fuzz_input *in) {
    const int out_is_null = fuzz_byte(in) == 0xee;
    convnd_problem out, untouched;
    memset(&out, 0xa5, sizeof out);
    untouched = out;
    convnd_clear_error();
    const convnd_status st = call_binding(e, in, out_is_null ? NULL : &out);
    check_binding_result(e, st, &out, &untouched, out_is_null);
    if (st != CONVND_OK || out_is_null) return;
    read_caller_fields(in, &out);
    fuzz_exercise_problem(&out, in);
}

static void run_fold_pad(fuzz_input *in) {
    convnd_problem p;
    read_problem(in, &p);
    convnd_pads pads_buf;
    const convnd_pads *pads = read_pads(in, &pads_buf);
    const convnd_pad_mode mode = (convnd_pad_mode)fuzz_i32(in);
    const double value = fuzz_f64(in);
    const convnd_problem before = p;
    convnd_clear_error();
    const convnd_status st = convnd_fold_pad(&p, pads, mode, value);
    fuzz_expect_message(&before, st, "convnd_fold_pad");
    if (st != CONVND_OK) {
        FUZZ_CHECK(&before, memcmp(&p, &before, sizeof p) == 0,
                   "convnd_fold_pad changed the problem on error");
        return;
    }
    size_model m;
    size_model_eval(&p, &m);
    FUZZ_CHECK(&p, m.valid, "convnd_fold_pad returned a problem the 128-bit model rejects");
    fuzz_exercise_problem(&p, in);
}

/* Every public entry point with NULL where a pointer is required: an error, never a crash. */
static void null_arguments(void) {
    convnd_problem p;
    convnd_problem_init(&p, 2);
    const convnd_shape s = convnd_shape_of(4, (const int64_t[]){1, 1, 3, 3});
    int64_t out[CONVND_MAX_DIMS];
    convnd_tensor_desc d;
    double v;
    size_t ws;
    char buf[64];
    const convnd_status sts[] = {
        convnd_validate(NULL),
        convnd_output_size(NULL, out),
        convnd_output_size(&p, NULL),
        convnd_tensor_describe(NULL, CONVND_X, &d),
        convnd_tensor_describe(&p, CONVND_X, NULL),
        convnd_flops(NULL, &v),
        convnd_min_bytes(NULL, &v),
        convnd_min_bytes(&p, NULL),
        convnd_workspace_size(NULL, NULL, &ws),
        convnd_workspace_size(&p, NULL, NULL),
        convnd_plan_name(NULL, NULL, buf, sizeof buf),
        conv_nd(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL),
        convnd_bind_torch_conv(2, NULL, &s, -1, NULL, NULL, NULL, 1, &p),
        convnd_bind_torch_conv(2, &s, NULL, -1, NULL, NULL, NULL, 1, &p),
        convnd_bind_torch_conv(2, &s, &s, -1, NULL, NULL, NULL, 1, NULL),
        convnd_bind_onnx_conv(NULL, &s, -1, CONVND_ONNX_NOTSET, NULL, 1, NULL, NULL, NULL, &p),
        convnd_bind_tf_conv(&s, NULL, -1, NULL, CONVND_TF_VALID, NULL, CONVND_TF_CHANNELS_FIRST,
                            &p),
        convnd_fold_pad(NULL, NULL, CONVND_PAD_CONSTANT, 0.0),
        convnd_fold_pad(&p, NULL, CONVND_PAD_CONSTANT, 0.0),
    };
    for (size_t i = 0; i < sizeof sts / sizeof sts[0]; ++i)
        FUZZ_CHECK(NULL, sts[i] != CONVND_OK, "NULL-argument call %zu returned OK", i);
    FUZZ_CHECK(NULL, !convnd_schedule_supports(NULL, &p, buf, sizeof buf),
               "supports(NULL schedule)");
    FUZZ_CHECK(NULL, !convnd_schedule_supports("direct", NULL, buf, sizeof buf),
               "supports(NULL problem)");
    FUZZ_CHECK(NULL, convnd_problem_string(NULL, buf, sizeof buf) > 0, "problem_string(NULL)");
    FUZZ_CHECK(NULL, convnd_schedule_name(-1) == NULL && convnd_schedule_config_name(0, -1) == NULL,
               "listing past the ends");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int checked_null_arguments;
    if (!checked_null_arguments) {
        checked_null_arguments = 1;
        null_arguments();
    }
    fuzz_input in = {data, size, 0};
    const int e = fuzz_byte(&in) % ENTRY_COUNT;
    if (e == ENTRY_RAW_PROBLEM) {
        convnd_problem p;
        read_problem(&in, &p);
        fuzz_exercise_problem(&p, &in);
    } else if (e == ENTRY_FOLD_PAD) {
        run_fold_pad(&in);
    } else {
        run_binding(e, &in);
    }
    return 0;
}
