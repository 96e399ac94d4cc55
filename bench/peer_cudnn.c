/* The cuDNN peer: the fastest algorithm cuDNN's legacy convolution API finds for the problem
 * (cudnnFind*AlgorithmEx, which times every algorithm on the real buffers), then timed by the
 * harness like every other row. Forward is cudnnConvolutionForward; transposed mode is
 * cudnnConvolutionBackwardData, the data gradient of the forward convolution whose filter is our
 * transposed weight [C_in, C_out/g, K...]. Weight-gradient mode is cudnnConvolutionBackwardFilter
 * (operands x and dy, output dw); data-gradient rows are transposed problems (convnd_bind_dgrad),
 * so they run on cudnnConvolutionBackwardData.
 *
 * cuDNN pads symmetrically (one non-negative pad per dim). Where our padding is not expressible
 * that way (asymmetric or negative) a forward problem runs after a materialized pad copy, the
 * row saying so; a transposed one is skipped with the reason. Math: f16/bf16 on tensor cores
 * with f32 accumulation; f32 with FMA only (CUDNN_FMA_MATH), as convnd's default, or TF32 when
 * the problem allows it. 1-D problems run as 2-D with a height of 1. GPU only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidate.h"
#include "materialized_pad.h"

#ifdef CONVND_BENCH_HAVE_CUDNN
#include <cuda_runtime_api.h>
#include <cudnn.h>

int32_t bench_have_cudnn(void) {
    return 1;
}

typedef struct cudnn_state {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int transposed, wgrad, padded;
    cudnnConvolutionFwdAlgo_t fwd_algo;
    cudnnConvolutionBwdDataAlgo_t bwd_algo;
    cudnnConvolutionBwdFilterAlgo_t bwf_algo;
} cudnn_state;

/* One handle for the process (the harness is single-threaded), created on first use. */
static cudnnHandle_t cudnn_handle;

static const char *const fwd_algo_names[] = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};
static const char *const bwd_algo_names[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                             "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwf_algo_names[] = {"FILTER_ALGO_0",    "FILTER_ALGO_1",
                                             "FILTER_FFT",       "FILTER_ALGO_3",
                                             "FILTER_WINOGRAD",  "FILTER_WINOGRAD_NONFUSED",
                                             "FILTER_FFT_TILING"};

#define CUDNN_TRY(call)                                                                            \
    do {                                                                                           \
        const cudnnStatus_t st_ = (call);                                                          \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                         \
            snprintf(why, why_len, "%s: %s", #call, cudnnGetErrorString(st_));                     \
            return CONVND_ERR_DEVICE;                                                              \
        }                                                                                          \
    } while (0)

static cudnnDataType_t cudnn_type(convnd_dtype dt) {
    return dt == CONVND_F16    ? CUDNN_DATA_HALF
           : dt == CONVND_BF16 ? CUDNN_DATA_BFLOAT16
                               : CUDNN_DATA_FLOAT;
}

/* Effective kernel extent of dim t. */
static int64_t extent(const convnd_problem *p, int32_t t) {
    return p->dilation[t] * (p->kernel[t] - 1) + 1;
}

static int64_t floor_div(int64_t a, int64_t d) {
    return a >= 0 ? a / d : -((-a + d - 1) / d);
}

/* 1 when cuDNN's symmetric padding P0 gives exactly our result: P0 >= 0, and cuDNN's own
 * output-size rule (forward) or its data-gradient shape check (transposed) agrees with ours, so
 * the positions where our P1 differs from P0 are never read. */
static int expressible(const convnd_problem *p) {
    int64_t out[CONVND_MAX_DIMS];
    if (convnd_output_size(p, out) != CONVND_OK) return 0;
    for (int32_t t = 0; t < p->dims; ++t) {
        const int64_t P0 = p->pad_before[t], S = p->stride[t], E = extent(p, t);
        if (P0 < 0 || P0 > 1000000) return 0;
        const int forward = p->mode != CONVND_TRANSPOSED; /* wgrad: the forward geometry */
        const int64_t big = forward ? p->input[t] : out[t];
        const int64_t small = forward ? out[t] : p->input[t];
        if (big + 2 * P0 - E < 0 || floor_div(big + 2 * P0 - E, S) + 1 != small) return 0;
    }
    return 1;
}

/* A tensor descriptor from convnd's shape and strides, 1-D lifted to 2-D (height 1). */
static convnd_status set_tensor(cudnnTensorDescriptor_t d, const convnd_problem *p,
                                convnd_tensor which, char *why, size_t why_len) {
    convnd_tensor_desc td;
    if (convnd_tensor_describe(p, which, &td) != CONVND_OK) {
        snprintf(why, why_len, "%s", convnd_last_error());
        return CONVND_ERR_INVALID_ARGUMENT;
    }
    int dims[CONVND_MAX_RANK + 1], strides[CONVND_MAX_RANK + 1], n = 0;
    for (int32_t r = 0; r < td.rank; ++r) {
        if (r == 2 && p->dims == 1) { /* the height of a 1-D problem */
            dims[n] = 1;
            strides[n++] = (int)(td.shape[2] * td.strides[2]);
        }
        dims[n] = (int)td.shape[r];
        strides[n++] = (int)td.strides[r];
    }
    CUDNN_TRY(cudnnSetTensorNdDescriptor(d, cudnn_type(p->dtype), n, dims, strides));
    return CONVND_OK;
}

static convnd_status set_descriptors(cudnn_state *st, const convnd_problem *p, char *why,
                                     size_t why_len) {
    convnd_status s = set_tensor(st->x, p, CONVND_X, why, why_len);
    if (s == CONVND_OK) s = set_tensor(st->y, p, CONVND_Y, why, why_len);
    if (s != CONVND_OK) return s;
    const int lift = p->dims == 1;
    const int nd = p->dims + lift;
    int fdims[CONVND_MAX_RANK + 1], pad[CONVND_MAX_DIMS + 1], stride[CONVND_MAX_DIMS + 1],
        dil[CONVND_MAX_DIMS + 1];
    const int transposed = p->mode == CONVND_TRANSPOSED;
    fdims[0] = (int)(transposed ? p->C_in : p->C_out);
    fdims[1] = (int)((transposed ? p->C_out : p->C_in) / p->groups);
    if (lift) {
        fdims[2] = 1;
        pad[0] = 0, stride[0] = 1, dil[0] = 1;
    }
    for (int32_t t = 0; t < p->dims; ++t) {
        fdims[2 + lift + t] = (int)p->kernel[t];
        pad[lift + t] = (int)p->pad_before[t];
        stride[lift + t] = (int)p->stride[t];
        dil[lift + t] = (int)p->dilation[t];
    }
    const cudnnTensorFormat_t fmt =
        p->w_layout == CONVND_CHANNELS_LAST ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_TRY(cudnnSetFilterNdDescriptor(st->w, cudnn_type(p->dtype), fmt, nd + 2, fdims));
    CUDNN_TRY(cudnnSetConvolutionNdDescriptor(st->conv, nd, pad, stride, dil,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_TRY(cudnnSetConvolutionGroupCount(st->conv, (int)p->groups));
    const cudnnMathType_t math = p->dtype != CONVND_F32              ? CUDNN_TENSOR_OP_MATH
                                 : p->math == CONVND_MATH_ALLOW_TF32 ? CUDNN_DEFAULT_MATH
                                                                     : CUDNN_FMA_MATH;
    CUDNN_TRY(cudnnSetConvolutionMathType(st->conv, math));
    return CONVND_OK;
}

/* cudnnFind*Ex's scratch: as much as a GiB, so that no algorithm is ruled out by a small
 * buffer; the chosen algorithm then gets exactly what it needs. */
static void *find_workspace(size_t *bytes) {
    for (size_t b = (size_t)1 << 30; b >= ((size_t)1 << 24); b /= 4) {
        void *ptr = NULL;
        if (bench_alloc(&ptr, b) == CONVND_OK) {
            *bytes = b;
            return ptr;
        }
    }
    *bytes = 0;
    return NULL;
}

static convnd_status find_algorithm(bench_instance *in, cudnn_state *st, const void *x,
                                    const void *w, void *y, char *why, size_t why_len) {
    size_t find_bytes = 0;
    void *find_ws = find_workspace(&find_bytes);
    int returned = 0;
    size_t need = 0;
    cudnnStatus_t fs;
    const char *name = "?";
    if (st->wgrad) { /* x, w = dy, y = dw */
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        fs = cudnnFindConvolutionBackwardFilterAlgorithmEx(
            cudnn_handle, st->x, x, st->y, w, st->conv, st->w, y,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf, find_ws, find_bytes);
        int best = -1;
        for (int i = 0; i < returned && best < 0 && fs == CUDNN_STATUS_SUCCESS; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) best = i;
        if (best >= 0) {
            st->bwf_algo = perf[best].algo;
            need = perf[best].memory;
            if ((int)st->bwf_algo < (int)(sizeof bwf_algo_names / sizeof *bwf_algo_names))
                name = bwf_algo_names[st->bwf_algo];
        } else {
            returned = 0;
        }
    } else if (!st->transposed) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        fs = cudnnFindConvolutionForwardAlgorithmEx(cudnn_handle, st->x, x, st->w, w, st->conv,
                                                    st->y, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                    &returned, perf, find_ws, find_bytes);
        int best = -1;
        for (int i = 0; i < returned && best < 0 && fs == CUDNN_STATUS_SUCCESS; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) best = i;
        if (best >= 0) {
            st->fwd_algo = perf[best].algo;
            need = perf[best].memory;
            if ((int)st->fwd_algo < (int)(sizeof fwd_algo_names / sizeof *fwd_algo_names))
                name = fwd_algo_names[st->fwd_algo];
        } else {
            returned = 0;
        }
    } else {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        fs = cudnnFindConvolutionBackwardDataAlgorithmEx(
            cudnn_handle, st->w, w, st->x, x, st->conv, st->y, y,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf, find_ws, find_bytes);
        int best = -1;
        for (int i = 0; i < returned && best < 0 && fs == CUDNN_STATUS_SUCCESS; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) best = i;
        if (best >= 0) {
            st->bwd_algo = perf[best].algo;
            need = perf[best].memory;
            if ((int)st->bwd_algo < (int)(sizeof bwd_algo_names / sizeof *bwd_algo_names))
                name = bwd_algo_names[st->bwd_algo];
        } else {
            returned = 0;
        }
    }
    bench_free(&find_ws);
    if (fs != CUDNN_STATUS_SUCCESS) {
        snprintf(why, why_len, "cudnnFind: %s", cudnnGetErrorString(fs));
        return CONVND_ERR_UNSUPPORTED;
    }
    if (returned == 0) {
        snprintf(why, why_len, "cuDNN has no algorithm for this problem");
        return CONVND_ERR_UNSUPPORTED;
    }
    snprintf(in->plan, sizeof in->plan, "%s%s", st->padded ? "pad copy + " : "", name);
    in->workspace_bytes = need;
    const convnd_status s = bench_alloc(&in->workspace, need);
    if (s != CONVND_OK) snprintf(why, why_len, "%s", convnd_last_error());
    return s;
}

static void cudnn_release(bench_instance *in) {
    cudnn_state *st = in->state;
    if (!st) return;
    if (st->x) cudnnDestroyTensorDescriptor(st->x);
    if (st->y) cudnnDestroyTensorDescriptor(st->y);
    if (st->w) cudnnDestroyFilterDescriptor(st->w);
    if (st->conv) cudnnDestroyConvolutionDescriptor(st->conv);
    free(st);
    in->state = NULL;
}

static convnd_status cudnn_prepare(bench_instance *in, const convnd_problem *p, const void *x,
                                   const void *w, void *y, char *why, size_t why_len) {
    if (convnd_active_device() != CONVND_DEVICE_GPU) {
        snprintf(why, why_len, "cuDNN runs on the GPU only");
        return CONVND_ERR_UNSUPPORTED;
    }
    if (p->has_bias || p->has_z || p->activation != CONVND_ACT_NONE || p->alpha != 1.0f) {
        snprintf(why, why_len, "the peer runs the plain convolution only (no epilogue)");
        return CONVND_ERR_UNSUPPORTED;
    }
    const int direct = expressible(p);
    if (!direct && p->mode != CONVND_FORWARD) {
        snprintf(why, why_len, "cuDNN's symmetric padding cannot express pad_before/pad_after");
        return CONVND_ERR_UNSUPPORTED;
    }
    if (!cudnn_handle) CUDNN_TRY(cudnnCreate(&cudnn_handle));
    cudnn_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(why, why_len, "out of memory");
        return CONVND_ERR_OUT_OF_MEMORY;
    }
    in->state = st;
    st->transposed = p->mode == CONVND_TRANSPOSED;
    st->wgrad = p->mode == CONVND_WGRAD;
    st->padded = !direct;
    CUDNN_TRY(cudnnCreateTensorDescriptor(&st->x));
    CUDNN_TRY(cudnnCreateTensorDescriptor(&st->y));
    CUDNN_TRY(cudnnCreateFilterDescriptor(&st->w));
    CUDNN_TRY(cudnnCreateConvolutionDescriptor(&st->conv));
    const void *xin = x;
    if (st->padded) {
        bench_padded_problem(p, &in->inner);
        snprintf(in->note, sizeof in->note, "after a materialized pad copy");
        convnd_tensor_desc xd;
        convnd_status s = convnd_tensor_describe(&in->inner, CONVND_X, &xd);
        if (s == CONVND_OK) s = bench_alloc(&in->scratch, (size_t)xd.bytes);
        if (s == CONVND_OK) s = bench_pad_copy(p, x, in->scratch, NULL);
        if (s != CONVND_OK) {
            snprintf(why, why_len, "%s", convnd_last_error());
            return s;
        }
        xin = in->scratch;
    }
    const convnd_status s = set_descriptors(st, &in->inner, why, why_len);
    if (s != CONVND_OK) return s;
    return find_algorithm(in, st, xin, w, y, why, why_len);
}

static convnd_status cudnn_run(bench_instance *in, const void *x, const void *w, void *y,
                               void *stream) {
    cudnn_state *st = in->state;
    const float one = 1.0f, zero = 0.0f;
    if (cudnnSetStream(cudnn_handle, (cudaStream_t)stream) != CUDNN_STATUS_SUCCESS)
        return CONVND_ERR_DEVICE;
    if (st->padded) {
        const convnd_status s = bench_pad_copy(&in->problem, x, in->scratch, stream);
        if (s != CONVND_OK) return s;
        x = in->scratch;
    }
    cudnnStatus_t cs;
    if (st->wgrad)
        cs = cudnnConvolutionBackwardFilter(cudnn_handle, &one, st->x, x, st->y, w, st->conv,
                                            st->bwf_algo, in->workspace, in->workspace_bytes, &zero,
                                            st->w, y);
    else if (!st->transposed)
        cs = cudnnConvolutionForward(cudnn_handle, &one, st->x, x, st->w, w, st->conv, st->fwd_algo,
                                     in->workspace, in->workspace_bytes, &zero, st->y, y);
    else
        cs = cudnnConvolutionBackwardData(cudnn_handle, &one, st->w, w, st->x, x, st->conv,
                                          st->bwd_algo, in->workspace, in->workspace_bytes, &zero,
                                          st->y, y);
    return cs == CUDNN_STATUS_SUCCESS ? CONVND_OK : CONVND_ERR_DEVICE;
}

const bench_candidate_ops bench_cudnn_ops = {cudnn_prepare, cudnn_run, cudnn_release};

#else /* no cuDNN in this build */

int32_t bench_have_cudnn(void) {
    return 0;
}

static convnd_status cudnn_unavailable(bench_instance *in, const convnd_problem *p, const void *x,
                                       const void *w, void *y, char *why, size_t why_len) {
    (void)in, (void)p, (void)x, (void)w, (void)y;
    snprintf(why, why_len, "built without cuDNN");
    return CONVND_ERR_UNSUPPORTED;
}

static convnd_status cudnn_never(bench_instance *in, const void *x, const void *w, void *y,
                                 void *stream) {
    (void)in, (void)x, (void)w, (void)y, (void)stream;
    return CONVND_ERR_UNSUPPORTED;
}

const bench_candidate_ops bench_cudnn_ops = {cudnn_unavailable, cudnn_never, NULL};

#endif
