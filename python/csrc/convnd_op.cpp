// torch.ops.convnd.conv_nd: the canonical convnd call as a PyTorch operator,
// torch.ops.convnd.conv_nd_wgrad: the weight gradient of such a call (convnd's CONVND_WGRAD mode,
// transposed problems through convnd_bind_wgrad), and torch.ops.convnd.conv_nd_halo(_out): a
// forward conv over cat(prefix, x, suffix) along one spatial axis without the copy (SPEC §14, the
// shard of convnd.distributed).
//
// One problem builder per op serves the real kernel (CPU tensors on convnd's emulated device,
// CUDA tensors on the GPU), the Meta kernel (shapes for FakeTensor / torch.compile) and the plan
// name. Autograd is registered from Python (convnd/_ops.py) on top of conv_nd.
//
// The real kernels run convnd plans from a process-wide cache (PlanCache below) keyed by the
// problem's bytes, the device and the schedule: the first call with a problem validates it,
// checks every tensor against it and creates the plan; a repeated call fills the problem from
// the tensors, finds the plan, compares the tensors' shapes, dtypes and devices with the ones the
// plan was made for, and executes it: no validation, no planning (convnd_get_counters).
#include <torch/extension.h>
#include <torch/library.h>

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <tuple>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

extern "C" {
#include "convnd.h"
#include "convnd_bind.h"
#include "convnd_shape_rule.h"
}

namespace {

std::string shape_text(c10::IntArrayRef s) {
    std::ostringstream o;
    o << "[";
    for (size_t i = 0; i < s.size(); ++i)
        o << (i ? ", " : "") << s[i];
    o << "]";
    return o.str();
}

// A convnd status as the matching Python exception: invalid arguments as ValueError,
// unsupported as NotImplementedError, everything else as RuntimeError; convnd's own message.
[[noreturn]] void raise_status(convnd_status st, const std::string &what) {
    const std::string msg =
        "convnd: " + what + ": " + convnd_status_string(st) + ": " + convnd_last_error();
    if (st == CONVND_ERR_INVALID_ARGUMENT) TORCH_CHECK_VALUE(false, msg);
    if (st == CONVND_ERR_UNSUPPORTED) TORCH_CHECK_NOT_IMPLEMENTED(false, msg);
    TORCH_CHECK(false, msg);
}

void check(convnd_status st, const std::string &what) {
    if (st != CONVND_OK) raise_status(st, what);
}

convnd_dtype dtype_of(const at::Tensor &t, const char *name) {
    switch (t.scalar_type()) {
    case at::kFloat:
        return CONVND_F32;
    case at::kHalf:
        return CONVND_F16;
    case at::kBFloat16:
        return CONVND_BF16;
    default:
        TORCH_CHECK_VALUE(false, "convnd: ", name, " has dtype ", t.scalar_type(),
                          "; convnd supports float32, float16 and bfloat16");
    }
}

// The permutation that lists a tensor's dims channels-last: [0, 2, ..., rank-1, 1].
std::vector<int64_t> channels_last_order(int64_t rank) {
    std::vector<int64_t> order{0};
    for (int64_t d = 2; d < rank; ++d)
        order.push_back(d);
    order.push_back(1);
    return order;
}

// Whether torch calls t contiguous in layout's memory order (sizes-1 dims aside).
bool tensor_is_contiguous_in(const at::Tensor &t, convnd_layout layout) {
    return layout == CONVND_CHANNELS_FIRST
               ? t.is_contiguous()
               : t.permute(channels_last_order(t.dim())).is_contiguous();
}

// Whether t has exactly the strides a packed tensor of its sizes has in `layout`.
bool has_packed_strides(const at::Tensor &t, convnd_layout layout) {
    const int64_t rank = t.dim();
    std::vector<int64_t> order(rank);
    for (int64_t i = 0; i < rank; ++i)
        order[i] = i;
    if (layout == CONVND_CHANNELS_LAST) order = channels_last_order(rank);
    c10::SymInt expect = 1;
    for (int64_t i = rank - 1; i >= 0; --i) {
        if (t.sym_stride(order[i]) != expect) return false;
        expect = expect * t.sym_size(order[i]);
    }
    return true;
}

// The layout of a tensor from its memory, as ATen's suggest_memory_format reads it: exact
// channels-first strides, then exact channels-last strides (which tells the two apart when
// size-1 dims make a tensor packed both ways), then any packed channels-first or channels-last
// tensor; anything else is copied packed in the layout its strides come closest to
// (view_layout_of: a channel slice of a channels-last tensor stays channels-last, so the weight
// gradient's vector path still reads it). Any rank, so 1-D convs too. (The forward op's x is read
// in place instead: x_layout_and_view below.)
convnd_layout view_layout_of(const at::Tensor &t);
at::Tensor empty_in_layout(c10::IntArrayRef shape, convnd_layout layout,
                           const at::TensorOptions &options);
convnd_layout layout_of(at::Tensor &t) {
    if (has_packed_strides(t, CONVND_CHANNELS_FIRST)) return CONVND_CHANNELS_FIRST;
    if (has_packed_strides(t, CONVND_CHANNELS_LAST)) return CONVND_CHANNELS_LAST;
    if (t.is_contiguous()) return CONVND_CHANNELS_FIRST;
    if (tensor_is_contiguous_in(t, CONVND_CHANNELS_LAST)) return CONVND_CHANNELS_LAST;
    const convnd_layout layout = view_layout_of(t);
    t = empty_in_layout(t.sizes(), layout, t.options()).copy_(t);
    return layout;
}

// x's layout without copying it: a tensor packed either way is that layout (as layout_of reads
// it); any other is a view (SPEC §11) whose layout is the one its strides come closest to:
// channels-last when C has the smallest stride (a channel slice of a channels-last buffer),
// else channels-first (a channel slice, a padded pitch, a broadcast batch).
convnd_layout view_layout_of(const at::Tensor &t) {
    if (has_packed_strides(t, CONVND_CHANNELS_FIRST)) return CONVND_CHANNELS_FIRST;
    if (has_packed_strides(t, CONVND_CHANNELS_LAST)) return CONVND_CHANNELS_LAST;
    if (t.is_contiguous()) return CONVND_CHANNELS_FIRST;
    if (tensor_is_contiguous_in(t, CONVND_CHANNELS_LAST)) return CONVND_CHANNELS_LAST;
    for (int64_t d = 2; d < t.dim(); ++d)
        if (t.size(d) > 1 && t.sym_stride(d) <= t.sym_stride(1)) return CONVND_CHANNELS_FIRST;
    return t.size(1) > 1 ? CONVND_CHANNELS_LAST : CONVND_CHANNELS_FIRST;
}

// x read in place: its layout, and its strides as a view when it is packed in neither layout,
// bounded by what its storage holds from x's first element.
convnd_layout x_layout_and_view(const at::Tensor &t, convnd_view *view) {
    const convnd_layout layout = view_layout_of(t);
    if (has_packed_strides(t, layout) || tensor_is_contiguous_in(t, layout)) return layout;
    view->custom = 1;
    for (int64_t d = 0; d < t.dim(); ++d)
        view->strides[d] = t.stride(d);
    view->extent = (int64_t)(t.storage().nbytes() / t.itemsize()) - t.storage_offset();
    return layout;
}

// A tensor of `shape` ([N, C, spatial...], symbolic sizes allowed) stored in `layout`.
at::Tensor empty_in_layout(c10::SymIntArrayRef shape, convnd_layout layout,
                           const at::TensorOptions &opts) {
    if (layout == CONVND_CHANNELS_FIRST) return at::empty_symint(shape, opts);
    const auto order = channels_last_order((int64_t)shape.size());
    std::vector<c10::SymInt> stored;
    for (int64_t d : order)
        stored.push_back(shape[d]);
    std::vector<int64_t> back(order.size());
    for (size_t i = 0; i < order.size(); ++i)
        back[order[i]] = (int64_t)i;
    return at::empty_symint(stored, opts).permute(back);
}

at::Tensor empty_in_layout(c10::IntArrayRef shape, convnd_layout layout,
                           const at::TensorOptions &opts) {
    return empty_in_layout(c10::fromIntArrayRefSlow(shape), layout, opts);
}

void check_list(c10::IntArrayRef v, int64_t dims, const char *name) {
    TORCH_CHECK_VALUE((int64_t)v.size() == dims, "convnd: ", name, "=", shape_text(v), " has ",
                      v.size(), " entries; expected ", dims, " (one per spatial dim)");
}

// The checks conv_nd and conv_nd_wgrad share: one entry per spatial dim in each geometry list,
// and the second tensor (w or dy, named `other`) of x's dtype and device.
void check_geometry_and_pair(c10::IntArrayRef stride, c10::IntArrayRef dilation,
                             c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                             int64_t dims, const at::Tensor &x, const at::Tensor &t,
                             const char *other) {
    check_list(stride, dims, "stride");
    check_list(dilation, dims, "dilation");
    check_list(padding_before, dims, "padding_before");
    check_list(padding_after, dims, "padding_after");
    TORCH_CHECK_VALUE(x.scalar_type() == t.scalar_type(), "convnd: x has dtype ", x.scalar_type(),
                      " but ", other, " has dtype ", t.scalar_type());
    TORCH_CHECK_VALUE(x.device() == t.device(), "convnd: x is on ", x.device(), " but ", other,
                      " is on ", t.device());
}

struct Call {
    convnd_problem p;
    at::Tensor x, w, bias, z; // bias/z undefined when absent
};

// The problem for the op's arguments, filled from the tensors without validating it; x and w may
// be replaced by packed copies (need_memory_layout: the real kernel's), bias made contiguous and
// z packed in y's layout. check_call validates it and checks every tensor against it.
Call make_call(const at::Tensor &x_in, const at::Tensor &w_in,
               const std::optional<at::Tensor> &bias, const std::optional<at::Tensor> &z,
               c10::IntArrayRef stride, c10::IntArrayRef dilation, c10::IntArrayRef padding_before,
               c10::IntArrayRef padding_after, int64_t groups, int64_t mode, double alpha,
               double beta, int64_t activation, bool need_memory_layout) {
    Call c;
    c.x = x_in;
    c.w = w_in;
    const int64_t dims = x_in.dim() - 2;
    TORCH_CHECK_VALUE(dims >= 1 && dims <= 3, "convnd: x of shape ", shape_text(x_in.sizes()),
                      " has ", x_in.dim(), " dims; expected 3, 4 or 5 ([N, C, spatial...])");
    TORCH_CHECK_VALUE(w_in.dim() == x_in.dim(), "convnd: w of shape ", shape_text(w_in.sizes()),
                      " has ", w_in.dim(), " dims; expected ", x_in.dim(), " like x");
    TORCH_CHECK_VALUE(mode == CONVND_FORWARD || mode == CONVND_TRANSPOSED, "convnd: mode=", mode,
                      " must be 0 (forward) or 1 (transposed); the weight gradient (mode 2) is "
                      "torch.ops.convnd.conv_nd_wgrad");
    check_geometry_and_pair(stride, dilation, padding_before, padding_after, dims, x_in, w_in, "w");

    convnd_problem &p = c.p;
    convnd_problem_init(&p, (int32_t)dims);
    p.mode = (convnd_mode)mode;
    p.dtype = dtype_of(x_in, "x");
    p.N = x_in.size(0);
    p.C_in = x_in.size(1);
    p.groups = groups;
    // Forward w is [C_out, C_in/g, K...]; transposed w is [C_in, C_out/g, K...].
    p.C_out = mode == CONVND_FORWARD ? w_in.size(0) : w_in.size(1) * groups;
    for (int64_t d = 0; d < dims; ++d) {
        p.input[d] = x_in.size(2 + d);
        p.kernel[d] = w_in.size(2 + d);
        p.stride[d] = stride[d];
        p.dilation[d] = dilation[d];
        p.pad_before[d] = padding_before[d];
        p.pad_after[d] = padding_after[d];
    }
    p.alpha = (float)alpha;
    p.beta = (float)beta;
    p.activation = (convnd_activation)activation;
    p.has_bias = bias.has_value() ? 1 : 0;
    p.has_z = z.has_value() ? 1 : 0;
    if (need_memory_layout) {
        p.x_layout = x_layout_and_view(c.x, &p.x_view); // read in place, a view if need be
        p.w_layout = layout_of(c.w);
    }
    p.y_layout = convnd_default_output_layout(p.x_layout, p.w_layout);
    if (bias) c.bias = need_memory_layout ? bias->contiguous() : *bias;
    if (z) {
        c.z = *z;
        if (need_memory_layout && !tensor_is_contiguous_in(*z, p.y_layout)) // z shares y's layout
            c.z = empty_in_layout(z->sizes(), p.y_layout, z->options()).copy_(*z);
    }
    return c;
}

// The shapes a validated problem reads and writes (convnd_tensor_describe).
std::vector<int64_t> described_shape(const convnd_problem &p, convnd_tensor which,
                                     const char *what) {
    convnd_tensor_desc d;
    check(convnd_tensor_describe(&p, which, &d), what);
    return std::vector<int64_t>(d.shape, d.shape + d.rank);
}

// Checks w, bias and z against the shapes shape_of(which) gives (shape, and x's dtype and
// device), with messages that name the tensor and both shapes.
template <class ShapeOf>
void check_operands(const Call &c, const at::Tensor &x, const std::optional<at::Tensor> &bias,
                    const std::optional<at::Tensor> &z, ShapeOf shape_of) {
    auto expect = [&](const at::Tensor &t, convnd_tensor which, const char *name) {
        const std::vector<int64_t> want = shape_of(which);
        TORCH_CHECK_VALUE(t.sizes() == c10::IntArrayRef(want), "convnd: ", name, " has shape ",
                          shape_text(t.sizes()), " but the problem (mode=", (int)c.p.mode,
                          ", groups=", c.p.groups, ") expects ", shape_text(want));
        TORCH_CHECK_VALUE(t.scalar_type() == x.scalar_type(), "convnd: ", name, " has dtype ",
                          t.scalar_type(), " but x has dtype ", x.scalar_type());
        TORCH_CHECK_VALUE(t.device() == x.device(), "convnd: ", name, " is on ", t.device(),
                          " but x is on ", x.device());
    };
    expect(c.w, CONVND_W, "w");
    if (bias) expect(*bias, CONVND_BIAS, "bias");
    if (z) expect(*z, CONVND_Z, "z");
}

// Validates c's problem and checks w, bias and z against it.
void check_call(const Call &c, const at::Tensor &x, const std::optional<at::Tensor> &bias,
                const std::optional<at::Tensor> &z) {
    check(convnd_validate(&c.p), "conv_nd");
    check_operands(c, x, bias, z,
                   [&](convnd_tensor which) { return described_shape(c.p, which, "conv_nd"); });
}

// make_call, then check_call: the problem of a call that is not run from a cached plan.
Call build(const at::Tensor &x_in, const at::Tensor &w_in, const std::optional<at::Tensor> &bias,
           const std::optional<at::Tensor> &z, c10::IntArrayRef stride, c10::IntArrayRef dilation,
           c10::IntArrayRef padding_before, c10::IntArrayRef padding_after, int64_t groups,
           int64_t mode, double alpha, double beta, int64_t activation, bool need_memory_layout) {
    Call c = make_call(x_in, w_in, bias, z, stride, dilation, padding_before, padding_after, groups,
                       mode, alpha, beta, activation, need_memory_layout);
    check_call(c, x_in, bias, z);
    return c;
}

// The weight gradient of conv_nd(x, w, ..., mode) for a w of shape weight_size, given dy (the
// gradient of that call's output), as one CONVND_WGRAD problem: a forward problem runs in wgrad
// mode as it is; a transposed one as the wgrad problem of its adjoint forward conv (from O back
// to I), with x and dy trading places (convnd_bind_wgrad's swap_operands).
struct WgradCall {
    convnd_problem q; // the CONVND_WGRAD problem conv_nd runs
    at::Tensor a, b;  // its x and dy operands: (x, dy), or (dy, x) for a transposed source
    at::Tensor z;     // dw_prev in dw's layout, undefined when absent
    int32_t swap = 0; // 1: (a, b) = (dy, x)
};

// The problem whose weight gradient is asked for, with dy in its y's place, filled from the
// tensors without validating it (x and dy may be replaced by packed copies).
struct WgradSource {
    convnd_problem p;
    at::Tensor x, dy;
};

WgradSource wgrad_source(const at::Tensor &x_in, const at::Tensor &dy_in,
                         c10::IntArrayRef weight_size, c10::IntArrayRef stride,
                         c10::IntArrayRef dilation, c10::IntArrayRef padding_before,
                         c10::IntArrayRef padding_after, int64_t groups, int64_t mode) {
    WgradSource src;
    at::Tensor &x = src.x, &dy = src.dy;
    x = x_in;
    dy = dy_in;
    const int64_t dims = x.dim() - 2;
    TORCH_CHECK_VALUE(dims >= 1 && dims <= 3, "convnd: x of shape ", shape_text(x.sizes()), " has ",
                      x.dim(), " dims; expected 3, 4 or 5 ([N, C, spatial...])");
    TORCH_CHECK_VALUE(dy.dim() == x.dim(), "convnd: dy of shape ", shape_text(dy.sizes()), " has ",
                      dy.dim(), " dims; expected ", x.dim(), " like x");
    TORCH_CHECK_VALUE((int64_t)weight_size.size() == x.dim(),
                      "convnd: weight_size=", shape_text(weight_size), " has ", weight_size.size(),
                      " entries; expected ", x.dim(), " like x");
    TORCH_CHECK_VALUE(mode == CONVND_FORWARD || mode == CONVND_TRANSPOSED, "convnd: mode=", mode,
                      " must be 0 (the weight gradient of a forward conv) or 1 (of a transposed "
                      "conv)");
    check_geometry_and_pair(stride, dilation, padding_before, padding_after, dims, x, dy, "dy");

    convnd_problem &p = src.p;
    convnd_problem_init(&p, (int32_t)dims);
    p.mode = (convnd_mode)mode;
    p.dtype = dtype_of(x, "x");
    p.N = x.size(0);
    p.C_in = x.size(1);
    p.groups = groups;
    p.C_out = mode == CONVND_FORWARD ? weight_size[0] : weight_size[1] * groups;
    for (int64_t d = 0; d < dims; ++d) {
        p.input[d] = x.size(2 + d);
        p.kernel[d] = weight_size[2 + d];
        p.stride[d] = stride[d];
        p.dilation[d] = dilation[d];
        p.pad_before[d] = padding_before[d];
        p.pad_after[d] = padding_after[d];
    }
    p.x_layout = layout_of(x);
    p.y_layout = layout_of(dy);
    // dw as ATen makes it: channels-last when either operand is.
    p.w_layout = convnd_default_output_layout(p.x_layout, p.y_layout);
    return src;
}

// z (dw_prev) checked against dw and packed in dw's layout.
at::Tensor wgrad_z(const std::optional<at::Tensor> &z, c10::IntArrayRef weight_size,
                   convnd_layout w_layout, const at::Tensor &x) {
    if (!z) return at::Tensor();
    TORCH_CHECK_VALUE(z->sizes() == weight_size, "convnd: z has shape ", shape_text(z->sizes()),
                      " but dw has shape ", shape_text(weight_size));
    TORCH_CHECK_VALUE(z->scalar_type() == x.scalar_type(), "convnd: z has dtype ", z->scalar_type(),
                      " but x has dtype ", x.scalar_type());
    TORCH_CHECK_VALUE(z->device() == x.device(), "convnd: z is on ", z->device(), " but x is on ",
                      x.device());
    if (tensor_is_contiguous_in(*z, w_layout)) return *z; // z shares dw's layout
    return empty_in_layout(z->sizes(), w_layout, z->options()).copy_(*z);
}

// The CONVND_WGRAD problem of src, validated, with every tensor checked against it.
WgradCall finish_wgrad(const WgradSource &src, c10::IntArrayRef weight_size,
                       const std::optional<at::Tensor> &z, double alpha, double beta) {
    const convnd_problem &p = src.p;
    const at::Tensor &x = src.x, &dy = src.dy;
    const int mode = (int)p.mode;
    const int64_t groups = p.groups;
    check(convnd_validate(&p), "conv_nd_wgrad");
    convnd_tensor_desc d;
    check(convnd_tensor_describe(&p, CONVND_W, &d), "conv_nd_wgrad");
    TORCH_CHECK_VALUE(weight_size == c10::IntArrayRef(d.shape, d.rank),
                      "convnd: weight_size=", shape_text(weight_size),
                      " but the problem (mode=", mode, ", groups=", groups,
                      ") has a weight of shape ", shape_text(c10::IntArrayRef(d.shape, d.rank)));
    check(convnd_tensor_describe(&p, CONVND_Y, &d), "conv_nd_wgrad");
    TORCH_CHECK_VALUE(dy.sizes() == c10::IntArrayRef(d.shape, d.rank), "convnd: dy has shape ",
                      shape_text(dy.sizes()), " but the problem (mode=", mode, ", groups=", groups,
                      ") has an output of shape ", shape_text(c10::IntArrayRef(d.shape, d.rank)));

    WgradCall c;
    check(convnd_bind_wgrad(&p, &c.q, &c.swap), "conv_nd_wgrad");
    const int32_t swap = c.swap;
    c.a = swap ? dy : x;
    c.b = swap ? x : dy;
    // The operands' own layouts (bind already carries them over; stated, not assumed).
    c.q.x_layout = swap ? p.y_layout : p.x_layout;
    c.q.y_layout = swap ? p.x_layout : p.y_layout;
    c.q.w_layout = p.w_layout;
    c.q.alpha = (float)alpha;
    c.q.beta = (float)beta;
    c.q.has_z = z.has_value() ? 1 : 0;
    check(convnd_validate(&c.q), "conv_nd_wgrad");
    // What the bound problem reads and writes is exactly (a, b) -> dw of weight_size.
    const std::pair<convnd_tensor, const at::Tensor *> reads[] = {{CONVND_X, &c.a},
                                                                  {CONVND_Y, &c.b}};
    for (const auto &r : reads) {
        check(convnd_tensor_describe(&c.q, r.first, &d), "conv_nd_wgrad");
        TORCH_CHECK(r.second->sizes() == c10::IntArrayRef(d.shape, d.rank),
                    "convnd: internal: the wgrad problem reads ",
                    shape_text(c10::IntArrayRef(d.shape, d.rank)), " where the operand is ",
                    shape_text(r.second->sizes()));
    }
    check(convnd_tensor_describe(&c.q, CONVND_W, &d), "conv_nd_wgrad");
    TORCH_CHECK(weight_size == c10::IntArrayRef(d.shape, d.rank),
                "convnd: internal: the wgrad problem writes dw of shape ",
                shape_text(c10::IntArrayRef(d.shape, d.rank)), ", not ", shape_text(weight_size));
    c.z = wgrad_z(z, weight_size, c.q.w_layout, x);
    return c;
}

WgradCall build_wgrad(const at::Tensor &x_in, const at::Tensor &dy_in, c10::IntArrayRef weight_size,
                      const std::optional<at::Tensor> &z, c10::IntArrayRef stride,
                      c10::IntArrayRef dilation, c10::IntArrayRef padding_before,
                      c10::IntArrayRef padding_after, int64_t groups, int64_t mode, double alpha,
                      double beta) {
    return finish_wgrad(wgrad_source(x_in, dy_in, weight_size, stride, dilation, padding_before,
                                     padding_after, groups, mode),
                        weight_size, z, alpha, beta);
}

convnd_options options_for(const std::optional<c10::string_view> &schedule, std::string &keep) {
    convnd_options o{};
    if (schedule) {
        keep = std::string(schedule->data(), schedule->size());
        o.schedule = keep.c_str();
    }
    o.autotune = 0; // never time candidates inside a call (CUDA-graph capture safe)
    return o;
}

// Runs this thread's convnd calls on the tensors' device, restoring the process's choice after.
struct ThreadDevice {
    explicit ThreadDevice(const at::Device &dev) {
        check(convnd_set_thread_device(dev.is_cuda() ? CONVND_DEVICE_GPU : CONVND_DEVICE_EMULATED),
              std::string("running on ") + dev.str());
    }
    ~ThreadDevice() { (void)convnd_set_thread_device(CONVND_DEVICE_AUTO); }
};

void *stream_of(const at::Device &dev) {
    if (!dev.is_cuda()) return nullptr;
    // PyTorch's current stream on that device, without CUDA headers.
    return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(dev).native_handle();
}

void check_device(const at::Tensor &x) {
    TORCH_CHECK_VALUE(x.device().is_cpu() || x.device().is_cuda(), "convnd: x is on ", x.device(),
                      "; convnd runs CPU tensors (emulated device) and CUDA tensors");
}

const void *ptr_or_null(const at::Tensor &t) {
    return t.defined() ? t.data_ptr() : nullptr;
}

// Test hook (convnd._C._set_workspace_offset): the workspace's raw allocation is read from its
// first byte at this offset modulo CONVND_WORKSPACE_ALIGNMENT, so a test can place it at every
// offset whatever address the allocator returns. -1 (off) outside tests.
std::atomic<int64_t> workspace_offset{-1};
std::atomic<uintptr_t> last_ws_raw{0}, last_ws_ptr{0};
std::atomic<size_t> last_ws_bytes{0};
std::atomic<uint64_t> ws_count{0};

// `bytes` of workspace from PyTorch's allocator starting at a multiple of
// CONVND_WORKSPACE_ALIGNMENT, as conv_nd requires: PyTorch's CPU allocator aligns to 64 bytes only
// (CUDA's caching allocator to 512), so the allocation is over-sized by the alignment and the
// start rounded up inside it. `keep` holds the allocation for the call.
void *aligned_workspace(size_t bytes, const at::TensorOptions &opts, at::Tensor &keep) {
    if (bytes == 0) {
        last_ws_raw = last_ws_ptr = 0;
        last_ws_bytes = 0;
        return nullptr;
    }
    constexpr size_t align = CONVND_WORKSPACE_ALIGNMENT;
    static_assert((align & (align - 1)) == 0, "CONVND_WORKSPACE_ALIGNMENT is a power of two");
    const int64_t offset = workspace_offset.load();
    const size_t slack = offset < 0 ? 0 : align; // room to move the raw start to the offset
    TORCH_CHECK(bytes <= (size_t)INT64_MAX - 2 * align, "convnd: a workspace of ", bytes,
                " bytes is too large to allocate");
    keep = at::empty({(int64_t)(bytes + align - 1 + slack)}, opts.dtype(at::kByte));
    uintptr_t raw = (uintptr_t)keep.data_ptr();
    if (offset >= 0) raw += ((uintptr_t)offset - raw % align + align) % align;
    const uintptr_t start = (raw + align - 1) & ~(uintptr_t)(align - 1);
    last_ws_raw = raw;
    last_ws_ptr = start;
    last_ws_bytes = bytes;
    ++ws_count;
    return (void *)start;
}

// ---- plans: created once per problem, device and schedule, executed by every later call ----

// A plan and what it was made for: the shapes of the operands the problem does not fix by itself
// (checked on every hit) and, for a weight gradient, which operand is the bound problem's x.
struct CachedPlan {
    convnd_plan_t *plan = nullptr;
    size_t workspace_bytes = 0;
    std::vector<int64_t> out_shape;                   // y (dw for a weight gradient)
    std::vector<std::vector<int64_t>> operand_shapes; // conv_nd: w, bias, z; wgrad: dy, dw
    int32_t swap = 0;                                 // wgrad: (a, b) = (dy, x)
    convnd_problem q{};                               // wgrad: the bound problem (its layouts)
    CachedPlan() = default;
    CachedPlan(const CachedPlan &) = delete;
    CachedPlan &operator=(const CachedPlan &) = delete;
    ~CachedPlan() { convnd_plan_destroy(plan); }
};

// A bounded least-recently-used map, one per process, safe from many threads: the lock covers
// the lookup and the insertion; a plan is executed outside it (convnd plans are read-only after
// creation), and a shared_ptr keeps an evicted plan alive while a call still runs it. Two threads
// missing the same key at once both create a plan; the later insertion replaces the earlier.
class PlanCache {
  public:
    std::shared_ptr<const CachedPlan> find(const std::string &key) {
        std::lock_guard<std::mutex> lock(mu_);
        const auto it = index_.find(key);
        if (it == index_.end()) {
            ++misses_;
            return nullptr;
        }
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
    }
    void insert(const std::string &key, std::shared_ptr<const CachedPlan> plan) {
        std::lock_guard<std::mutex> lock(mu_);
        const auto it = index_.find(key);
        if (it != index_.end()) {
            lru_.erase(it->second);
            index_.erase(it);
        }
        if (capacity_ == 0) return;
        lru_.emplace_front(key, std::move(plan));
        index_[key] = lru_.begin();
        trim();
    }
    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        lru_.clear();
        index_.clear();
        hits_ = misses_ = 0;
    }
    void set_capacity(size_t capacity) {
        std::lock_guard<std::mutex> lock(mu_);
        capacity_ = capacity;
        trim();
    }
    // (entries, capacity, hits, misses)
    std::tuple<int64_t, int64_t, int64_t, int64_t> info() {
        std::lock_guard<std::mutex> lock(mu_);
        return {(int64_t)lru_.size(), (int64_t)capacity_, (int64_t)hits_, (int64_t)misses_};
    }

  private:
    void trim() {
        while (lru_.size() > capacity_) {
            index_.erase(lru_.back().first);
            lru_.pop_back();
        }
    }
    using Entry = std::pair<std::string, std::shared_ptr<const CachedPlan>>;
    std::mutex mu_;
    std::list<Entry> lru_; // most recently used first
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
    size_t capacity_ = 1024;
    uint64_t hits_ = 0, misses_ = 0;
};

PlanCache &plan_cache() {
    static PlanCache cache;
    return cache;
}

// The cache key: which op, the problem's bytes (convnd_problem_init zeroes the whole struct, so
// padding bytes are zero too), the device, the forced schedule (the argument, and CONVND_SCHEDULE,
// which the planner also reads) and the op's own extra values.
std::string plan_key(char op, const convnd_problem &p, const at::Device &dev,
                     const std::optional<c10::string_view> &schedule, const void *extra = nullptr,
                     size_t extra_bytes = 0) {
    std::string key(1, op);
    key.append(reinterpret_cast<const char *>(&p), sizeof p);
    key.push_back((char)dev.type());
    key.push_back((char)dev.index());
    if (extra_bytes) key.append(static_cast<const char *>(extra), extra_bytes);
    if (schedule) key.append("\1").append(schedule->data(), schedule->size());
    if (const char *env = std::getenv("CONVND_SCHEDULE")) key.append("\2").append(env);
    return key;
}

// Creates the plan of a validated problem on x's device.
std::shared_ptr<CachedPlan> make_plan(const convnd_problem &p, const at::Tensor &x,
                                      const std::optional<c10::string_view> &schedule,
                                      const std::string &what) {
    const c10::DeviceGuard guard(x.device());
    const ThreadDevice on(x.device());
    std::string keep;
    const convnd_options opts = options_for(schedule, keep);
    auto e = std::make_shared<CachedPlan>();
    check(convnd_plan_create(&e->plan, &p, &opts), what);
    check(convnd_plan_workspace_size(e->plan, &e->workspace_bytes), what + " workspace");
    return e;
}

// Executes a plan into a new tensor of the plan's output shape in out_layout on x's device: on
// its current stream, with the workspace from PyTorch's allocator (the caching allocator for
// CUDA), aligned as convnd requires. Every tensor handed over is an ATen allocation or a view
// into one, so aligned to its element size, which is what convnd asks of tensors.
at::Tensor run_plan(const CachedPlan &plan, const at::Tensor &x, convnd_layout out_layout,
                    const at::Tensor &a, const at::Tensor &b, const at::Tensor &bias,
                    const at::Tensor &z, const char *what) {
    const c10::DeviceGuard guard(x.device());
    const ThreadDevice on(x.device());
    at::Tensor out = empty_in_layout(plan.out_shape, out_layout, x.options());
    at::Tensor ws;
    void *workspace = aligned_workspace(plan.workspace_bytes, x.options(), ws);
    check(convnd_plan_execute(plan.plan, a.data_ptr(), b.data_ptr(), ptr_or_null(bias),
                              ptr_or_null(z), out.data_ptr(), workspace, plan.workspace_bytes,
                              stream_of(x.device())),
          what);
    return out;
}

bool same_shape(const at::Tensor &t, const std::vector<int64_t> &shape) {
    return t.sizes() == c10::IntArrayRef(shape);
}

// Whether t matches what a plan was made for: the shape, and x's dtype and device (an absent
// operand matches an empty shape list).
bool operand_matches(const at::Tensor &t, const std::vector<int64_t> &shape, const at::Tensor &x) {
    if (!t.defined()) return shape.empty();
    return same_shape(t, shape) && t.scalar_type() == x.scalar_type() && t.device() == x.device();
}

// "schedule:config" that conv_nd would run for p on x's device.
std::string plan_text(const convnd_problem &p, const at::Tensor &x,
                      const std::optional<std::string> &schedule, const char *what) {
    const c10::DeviceGuard guard(x.device());
    const ThreadDevice on(x.device());
    std::string keep;
    std::optional<c10::string_view> forced;
    if (schedule) forced = c10::string_view(*schedule);
    const convnd_options opts = options_for(forced, keep);
    char buf[256];
    check(convnd_plan_name(&p, &opts, buf, sizeof buf), what);
    return buf;
}

// Whether every size of a and b is a concrete integer (not symbolic).
bool concrete_sizes(const at::Tensor &a, const at::Tensor &b) {
    bool concrete = true;
    for (const auto &s : a.sym_sizes())
        concrete = concrete && s.maybe_as_int().has_value();
    for (const auto &s : b.sym_sizes())
        concrete = concrete && s.maybe_as_int().has_value();
    return concrete;
}

at::Tensor conv_nd_impl(const at::Tensor &x, const at::Tensor &w,
                        const std::optional<at::Tensor> &bias, const std::optional<at::Tensor> &z,
                        c10::IntArrayRef stride, c10::IntArrayRef dilation,
                        c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                        int64_t groups, int64_t mode, double alpha, double beta, int64_t activation,
                        std::optional<c10::string_view> schedule) {
    check_device(x);
    Call c = make_call(x, w, bias, z, stride, dilation, padding_before, padding_after, groups, mode,
                       alpha, beta, activation, true);
    const std::string key = plan_key('f', c.p, x.device(), schedule);
    std::shared_ptr<const CachedPlan> plan = plan_cache().find(key);
    // The key fixes x, the geometry and the epilogue; w's C_in/g and the operands' shapes,
    // dtypes and devices are the tensors' own (an absent bias/z has an empty shape there).
    if (!plan || !operand_matches(c.w, plan->operand_shapes[0], x) ||
        !operand_matches(c.bias, plan->operand_shapes[1], x) ||
        !operand_matches(c.z, plan->operand_shapes[2], x)) {
        // the plan validates the problem once; every shape below is the plan's (no validation)
        auto made = make_plan(c.p, x, schedule, "conv_nd");
        auto shape_of = [&](convnd_tensor which) {
            convnd_tensor_desc d;
            check(convnd_plan_tensor_describe(made->plan, which, &d), "conv_nd");
            return std::vector<int64_t>(d.shape, d.shape + d.rank);
        };
        check_operands(c, x, bias, z, shape_of);
        made->out_shape = shape_of(CONVND_Y);
        made->operand_shapes = {shape_of(CONVND_W),
                                bias ? shape_of(CONVND_BIAS) : std::vector<int64_t>{},
                                z ? shape_of(CONVND_Z) : std::vector<int64_t>{}};
        plan_cache().insert(key, made);
        plan = made;
    }
    return run_plan(*plan, x, c.p.y_layout, c.x, c.w, c.bias, c.z, "conv_nd");
}

// y of a problem with symbolic sizes: the C library's output-size rule (convnd_shape_rule.h) on
// SymInts, `extra` rows added to x's extent along spatial dim `axis` (a halo, SPEC §12 and §14;
// axis < 0: none), in the SPEC's default output layout.
at::Tensor symbolic_output(const at::Tensor &x, const at::Tensor &w, c10::IntArrayRef stride,
                           c10::IntArrayRef dilation, c10::IntArrayRef padding_before,
                           c10::IntArrayRef padding_after, int64_t groups, int64_t mode,
                           int64_t axis, const c10::SymInt &extra) {
    const int64_t dims = x.dim() - 2;
    TORCH_CHECK_VALUE(dims >= 1 && dims <= 3 && w.dim() == x.dim(), "convnd: x of rank ", x.dim(),
                      " and w of rank ", w.dim(), ": expected equal ranks 3, 4 or 5");
    TORCH_CHECK_VALUE(
        (int64_t)stride.size() == dims && (int64_t)dilation.size() == dims &&
            (int64_t)padding_before.size() == dims && (int64_t)padding_after.size() == dims,
        "convnd: stride, dilation, padding_before and padding_after need ", dims, " entries each");
    std::vector<c10::SymInt> shape{x.sym_size(0),
                                   mode == CONVND_FORWARD ? w.sym_size(0) : w.sym_size(1) * groups};
    // a valid problem's span is >= 0, where SymInt's division is the floor division the rule
    // asks for
    const auto floor_div = [](const c10::SymInt &a, int64_t b) { return a / b; };
    for (int64_t d = 0; d < dims; ++d) {
        const c10::SymInt I = d == axis ? x.sym_size(2 + d) + extra : x.sym_size(2 + d);
        const c10::SymInt E = CONVND_EFFECTIVE_KERNEL(w.sym_size(2 + d), dilation[d]);
        const int64_t S = stride[d], P0 = padding_before[d], P1 = padding_after[d];
        shape.push_back(mode == CONVND_FORWARD ? CONVND_FORWARD_OUTPUT(I, E, S, P0, P1, floor_div)
                                               : CONVND_TRANSPOSED_OUTPUT(I, E, S, P0, P1));
    }
    at::Tensor ww = w;
    return empty_in_layout(c10::SymIntArrayRef(shape),
                           convnd_default_output_layout(view_layout_of(x), layout_of(ww)),
                           x.options());
}

// Shapes only (FakeTensor, torch.compile, meta tensors), strides as the real kernel makes them.
// With concrete sizes the library validates the problem, so bad input fails at trace time with
// convnd's message; symbolic sizes get the SPEC's output-size formula on SymInts.
at::Tensor conv_nd_meta(const at::Tensor &x, const at::Tensor &w,
                        const std::optional<at::Tensor> &bias, const std::optional<at::Tensor> &z,
                        c10::IntArrayRef stride, c10::IntArrayRef dilation,
                        c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                        int64_t groups, int64_t mode, double alpha, double beta, int64_t activation,
                        std::optional<c10::string_view> schedule) {
    (void)schedule;
    if (concrete_sizes(x, w)) {
        Call c = build(x, w, bias, z, stride, dilation, padding_before, padding_after, groups, mode,
                       alpha, beta, activation, true);
        return empty_in_layout(described_shape(c.p, CONVND_Y, "conv_nd"), c.p.y_layout,
                               x.options());
    }
    return symbolic_output(x, w, stride, dilation, padding_before, padding_after, groups, mode, -1,
                           0);
}

// The schedule and configuration conv_nd would run for these arguments ("schedule:config").
std::string plan_name(const at::Tensor &x, const at::Tensor &w,
                      const std::optional<at::Tensor> &bias, const std::optional<at::Tensor> &z,
                      std::vector<int64_t> stride, std::vector<int64_t> dilation,
                      std::vector<int64_t> padding_before, std::vector<int64_t> padding_after,
                      int64_t groups, int64_t mode, double alpha, double beta, int64_t activation,
                      std::optional<std::string> schedule) {
    Call c = build(x, w, bias, z, stride, dilation, padding_before, padding_after, groups, mode,
                   alpha, beta, activation, true);
    return plan_text(c.p, x, schedule, "plan_name");
}

// dw = alpha * (the weight gradient of conv_nd(x, w, ..., mode) for dy) + beta * z, with w of
// shape weight_size: convnd's CONVND_WGRAD mode.
at::Tensor conv_nd_wgrad_impl(const at::Tensor &x, const at::Tensor &dy,
                              c10::IntArrayRef weight_size, const std::optional<at::Tensor> &z,
                              c10::IntArrayRef stride, c10::IntArrayRef dilation,
                              c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                              int64_t groups, int64_t mode, double alpha, double beta,
                              std::optional<c10::string_view> schedule) {
    check_device(x);
    WgradSource src = wgrad_source(x, dy, weight_size, stride, dilation, padding_before,
                                   padding_after, groups, mode);
    // The key: the source problem (dy's sizes and weight_size[1] are not in it: checked on a
    // hit), alpha, beta and whether z is read.
    const struct {
        double alpha, beta;
        int64_t has_z;
    } extra = {alpha, beta, z.has_value() ? 1 : 0};
    const std::string key = plan_key('w', src.p, x.device(), schedule, &extra, sizeof extra);
    std::shared_ptr<const CachedPlan> plan = plan_cache().find(key);
    if (plan && same_shape(src.dy, plan->operand_shapes[0]) &&
        c10::IntArrayRef(plan->operand_shapes[1]) == weight_size) {
        const at::Tensor a = plan->swap ? src.dy : src.x, b = plan->swap ? src.x : src.dy;
        return run_plan(*plan, x, plan->q.w_layout, a, b, at::Tensor(),
                        wgrad_z(z, weight_size, plan->q.w_layout, x), "conv_nd_wgrad");
    }
    WgradCall c = finish_wgrad(src, weight_size, z, alpha, beta);
    auto made = make_plan(c.q, x, schedule, "conv_nd_wgrad");
    made->out_shape.assign(weight_size.begin(), weight_size.end());
    made->operand_shapes = {std::vector<int64_t>(src.dy.sizes().begin(), src.dy.sizes().end()),
                            made->out_shape};
    made->swap = c.swap;
    made->q = c.q;
    plan_cache().insert(key, made);
    return run_plan(*made, x, c.q.w_layout, c.a, c.b, at::Tensor(), c.z, "conv_nd_wgrad");
}

// dw's shape is weight_size; with concrete sizes the library validates the problem (trace-time
// errors carry convnd's message); with symbolic sizes only the layout is worked out.
at::Tensor conv_nd_wgrad_meta(const at::Tensor &x, const at::Tensor &dy,
                              c10::IntArrayRef weight_size, const std::optional<at::Tensor> &z,
                              c10::IntArrayRef stride, c10::IntArrayRef dilation,
                              c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                              int64_t groups, int64_t mode, double alpha, double beta,
                              std::optional<c10::string_view> schedule) {
    (void)schedule;
    if (concrete_sizes(x, dy)) {
        WgradCall c = build_wgrad(x, dy, weight_size, z, stride, dilation, padding_before,
                                  padding_after, groups, mode, alpha, beta);
        return empty_in_layout(weight_size, c.q.w_layout, x.options());
    }
    TORCH_CHECK_VALUE(x.dim() >= 3 && x.dim() <= 5 && dy.dim() == x.dim() &&
                          (int64_t)weight_size.size() == x.dim(),
                      "convnd: x of rank ", x.dim(), ", dy of rank ", dy.dim(), " and weight_size ",
                      shape_text(weight_size), ": expected equal ranks 3, 4 or 5");
    at::Tensor xx = x, dd = dy;
    return empty_in_layout(weight_size, convnd_default_output_layout(layout_of(xx), layout_of(dd)),
                           x.options());
}

// The "schedule:config" conv_nd_wgrad would run for these arguments.
std::string wgrad_plan_name(const at::Tensor &x, const at::Tensor &dy,
                            std::vector<int64_t> weight_size, const std::optional<at::Tensor> &z,
                            std::vector<int64_t> stride, std::vector<int64_t> dilation,
                            std::vector<int64_t> padding_before, std::vector<int64_t> padding_after,
                            int64_t groups, int64_t mode, double alpha, double beta,
                            std::optional<std::string> schedule) {
    WgradCall c = build_wgrad(x, dy, weight_size, z, stride, dilation, padding_before,
                              padding_after, groups, mode, alpha, beta);
    return plan_text(c.q, x, schedule, "wgrad_plan_name");
}

// ---- SPEC §14: a shard with its halo (convnd.distributed) ------------------------------------

// A halo tensor read in place: x's rank, dtype and device; packed in x's layout, or else a view
// (SPEC §14: prefix_view / suffix_view), so a received halo or a slice of a bigger buffer is
// never copied.
void halo_view(const at::Tensor &t, convnd_layout layout, const at::Tensor &x, const char *name,
               convnd_view *view) {
    TORCH_CHECK_VALUE(t.dim() == x.dim(), "convnd: ", name, " of shape ", shape_text(t.sizes()),
                      " has ", t.dim(), " dims; expected ", x.dim(), " like x");
    TORCH_CHECK_VALUE(t.scalar_type() == x.scalar_type(), "convnd: ", name, " has dtype ",
                      t.scalar_type(), " but x has dtype ", x.scalar_type());
    TORCH_CHECK_VALUE(t.device() == x.device(), "convnd: ", name, " is on ", t.device(),
                      " but x is on ", x.device());
    if (has_packed_strides(t, layout)) return;
    view->custom = 1;
    for (int64_t d = 0; d < t.dim(); ++d)
        view->strides[d] = t.stride(d);
    view->extent = (int64_t)(t.storage().nbytes() / t.itemsize()) - t.storage_offset();
}

struct HaloCall {
    Call c;
    at::Tensor prefix, suffix; // undefined when absent (or empty along the axis)
};

// The problem of a shard: forward conv_nd over x with a prefix and a suffix on spatial dim `axis`
// (0-based over the spatial dims) and, when out is given, y a view of out (SPEC §11).
HaloCall make_halo_call(const at::Tensor &x, const at::Tensor &w,
                        const std::optional<at::Tensor> &bias,
                        const std::optional<at::Tensor> &prefix,
                        const std::optional<at::Tensor> &suffix, int64_t axis,
                        c10::IntArrayRef stride, c10::IntArrayRef dilation,
                        c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                        int64_t groups, int64_t activation, const at::Tensor *out) {
    HaloCall h;
    h.c = make_call(x, w, bias, std::nullopt, stride, dilation, padding_before, padding_after,
                    groups, CONVND_FORWARD, 1.0, 0.0, activation, true);
    convnd_problem &p = h.c.p;
    TORCH_CHECK_VALUE(axis >= 0 && axis < p.dims, "convnd: axis=", axis,
                      " must name a spatial dim 0..", p.dims - 1, " (x has ", x.dim(), " dims)");
    p.io_axis = (int32_t)axis;
    if (prefix && prefix->size(2 + axis) > 0) {
        halo_view(*prefix, p.x_layout, x, "prefix", &p.prefix_view);
        h.prefix = *prefix;
        p.prefix_size = prefix->size(2 + axis);
    }
    if (suffix && suffix->size(2 + axis) > 0) {
        halo_view(*suffix, p.x_layout, x, "suffix", &p.suffix_view);
        h.suffix = *suffix;
        p.suffix_size = suffix->size(2 + axis);
    }
    if (out) { // y is written in place: out's strides as y's view
        TORCH_CHECK_VALUE(out->scalar_type() == x.scalar_type() && out->device() == x.device(),
                          "convnd: out has dtype ", out->scalar_type(), " on ", out->device(),
                          " but x has dtype ", x.scalar_type(), " on ", x.device());
        TORCH_CHECK_VALUE(out->dim() == x.dim(), "convnd: out of shape ", shape_text(out->sizes()),
                          " has ", out->dim(), " dims; expected ", x.dim());
        p.y_view.custom = 1;
        for (int64_t d = 0; d < out->dim(); ++d)
            p.y_view.strides[d] = out->stride(d);
        p.y_view.extent =
            (int64_t)(out->storage().nbytes() / out->itemsize()) - out->storage_offset();
    }
    return h;
}

// Checks the halo tensors and out against the shapes shape_of(which) gives.
template <class ShapeOf>
void check_halo_operands(const HaloCall &h, const at::Tensor *out, ShapeOf shape_of) {
    auto expect = [&](const at::Tensor &t, convnd_tensor which, const char *name) {
        if (!t.defined()) return;
        const std::vector<int64_t> want = shape_of(which);
        TORCH_CHECK_VALUE(t.sizes() == c10::IntArrayRef(want), "convnd: ", name, " has shape ",
                          shape_text(t.sizes()), " but the problem (axis=", h.c.p.io_axis,
                          ") expects ", shape_text(want));
    };
    expect(h.prefix, CONVND_X_PREFIX, "prefix");
    expect(h.suffix, CONVND_X_SUFFIX, "suffix");
    if (out) expect(*out, CONVND_Y, "out");
}

// Runs the call make_halo_call made of x and bias (with out when given): y, or out written.
at::Tensor conv_nd_halo_run(const HaloCall &h, const at::Tensor &x,
                            const std::optional<at::Tensor> &bias,
                            std::optional<c10::string_view> schedule, const at::Tensor *out) {
    const Call &c = h.c;
    const std::string key = plan_key('h', c.p, x.device(), schedule);
    std::shared_ptr<const CachedPlan> plan = plan_cache().find(key);
    // the key fixes x, the halo sizes, out's strides and the geometry; the rest is checked
    if (!plan || !operand_matches(c.w, plan->operand_shapes[0], x) ||
        !operand_matches(c.bias, plan->operand_shapes[1], x) ||
        !operand_matches(h.prefix, plan->operand_shapes[2], x) ||
        !operand_matches(h.suffix, plan->operand_shapes[3], x) ||
        (out && !same_shape(*out, plan->out_shape))) {
        auto made = make_plan(c.p, x, schedule, "conv_nd_halo");
        auto shape_of = [&](convnd_tensor which) {
            convnd_tensor_desc d;
            check(convnd_plan_tensor_describe(made->plan, which, &d), "conv_nd_halo");
            return std::vector<int64_t>(d.shape, d.shape + d.rank);
        };
        check_operands(c, x, bias, std::nullopt, shape_of);
        check_halo_operands(h, out, shape_of);
        made->out_shape = shape_of(CONVND_Y);
        made->operand_shapes = {
            shape_of(CONVND_W), bias ? shape_of(CONVND_BIAS) : std::vector<int64_t>{},
            h.prefix.defined() ? shape_of(CONVND_X_PREFIX) : std::vector<int64_t>{},
            h.suffix.defined() ? shape_of(CONVND_X_SUFFIX) : std::vector<int64_t>{}};
        plan_cache().insert(key, made);
        plan = made;
    }
    const c10::DeviceGuard guard(x.device());
    const ThreadDevice on(x.device());
    at::Tensor y = out ? *out : empty_in_layout(plan->out_shape, c.p.y_layout, x.options());
    at::Tensor ws;
    void *workspace = aligned_workspace(plan->workspace_bytes, x.options(), ws);
    convnd_io io{};
    io.x = c.x.data_ptr();
    io.x_prefix = ptr_or_null(h.prefix);
    io.x_suffix = ptr_or_null(h.suffix);
    io.w = c.w.data_ptr();
    io.bias = ptr_or_null(c.bias);
    io.y = y.data_ptr();
    check(convnd_plan_execute_io(plan->plan, &io, workspace, plan->workspace_bytes,
                                 stream_of(x.device())),
          "conv_nd_halo");
    return y;
}

at::Tensor
conv_nd_halo_impl(const at::Tensor &x, const at::Tensor &w, const std::optional<at::Tensor> &bias,
                  const std::optional<at::Tensor> &prefix, const std::optional<at::Tensor> &suffix,
                  int64_t axis, c10::IntArrayRef stride, c10::IntArrayRef dilation,
                  c10::IntArrayRef padding_before, c10::IntArrayRef padding_after, int64_t groups,
                  int64_t activation, std::optional<c10::string_view> schedule) {
    check_device(x);
    return conv_nd_halo_run(make_halo_call(x, w, bias, prefix, suffix, axis, stride, dilation,
                                           padding_before, padding_after, groups, activation,
                                           nullptr),
                            x, bias, schedule, nullptr);
}

void conv_nd_halo_out_impl(const at::Tensor &x, const at::Tensor &w,
                           const std::optional<at::Tensor> &bias,
                           const std::optional<at::Tensor> &prefix,
                           const std::optional<at::Tensor> &suffix, int64_t axis,
                           c10::IntArrayRef stride, c10::IntArrayRef dilation,
                           c10::IntArrayRef padding_before, c10::IntArrayRef padding_after,
                           int64_t groups, int64_t activation,
                           std::optional<c10::string_view> schedule, const at::Tensor &out) {
    check_device(x);
    conv_nd_halo_run(make_halo_call(x, w, bias, prefix, suffix, axis, stride, dilation,
                                    padding_before, padding_after, groups, activation, &out),
                     x, bias, schedule, &out);
}

// Shapes only: with concrete sizes the library validates the problem (bad input fails at trace
// time with convnd's message); symbolic sizes get the output-size rule over x's extent plus the
// halos' along the axis.
at::Tensor
conv_nd_halo_meta(const at::Tensor &x, const at::Tensor &w, const std::optional<at::Tensor> &bias,
                  const std::optional<at::Tensor> &prefix, const std::optional<at::Tensor> &suffix,
                  int64_t axis, c10::IntArrayRef stride, c10::IntArrayRef dilation,
                  c10::IntArrayRef padding_before, c10::IntArrayRef padding_after, int64_t groups,
                  int64_t activation, std::optional<c10::string_view> schedule) {
    (void)schedule;
    const auto rows = [&](const std::optional<at::Tensor> &t) {
        return t && t->dim() == x.dim() && axis >= 0 && axis < x.dim() - 2 ? t->sym_size(2 + axis)
                                                                           : c10::SymInt(0);
    };
    if (!concrete_sizes(x, w) || (prefix && !concrete_sizes(*prefix, *prefix)) ||
        (suffix && !concrete_sizes(*suffix, *suffix))) {
        TORCH_CHECK_VALUE(axis >= 0 && axis < x.dim() - 2, "convnd: axis=", axis,
                          " must name a spatial dim 0..", x.dim() - 3);
        return symbolic_output(x, w, stride, dilation, padding_before, padding_after, groups,
                               CONVND_FORWARD, axis, rows(prefix) + rows(suffix));
    }
    HaloCall h = make_halo_call(x, w, bias, prefix, suffix, axis, stride, dilation, padding_before,
                                padding_after, groups, activation, nullptr);
    check_call(h.c, x, bias, std::nullopt);
    check_halo_operands(h, nullptr, [&](convnd_tensor which) {
        return described_shape(h.c.p, which, "conv_nd_halo");
    });
    return empty_in_layout(described_shape(h.c.p, CONVND_Y, "conv_nd_halo"), h.c.p.y_layout,
                           x.options());
}

// The schedule and configuration conv_nd_halo would run for these arguments.
std::string
halo_plan_name(const at::Tensor &x, const at::Tensor &w, const std::optional<at::Tensor> &bias,
               const std::optional<at::Tensor> &prefix, const std::optional<at::Tensor> &suffix,
               int64_t axis, std::vector<int64_t> stride, std::vector<int64_t> dilation,
               std::vector<int64_t> padding_before, std::vector<int64_t> padding_after,
               int64_t groups, int64_t activation, std::optional<std::string> schedule) {
    HaloCall h = make_halo_call(x, w, bias, prefix, suffix, axis, stride, dilation, padding_before,
                                padding_after, groups, activation, nullptr);
    return plan_text(h.c.p, x, schedule, "halo_plan_name");
}

// SPEC §14's rule (convnd_shard_rows / convnd_shard_part) along one axis, as a dict: a 1-D
// problem carries the axis' figures (the rule reads nothing else).
py::dict shard_dict(const convnd_shard &s) {
    py::dict d;
    d["out_begin"] = s.out_begin, d["out_end"] = s.out_end;
    d["in_begin"] = s.in_begin, d["in_end"] = s.in_end;
    d["x_begin"] = s.x_begin, d["x_end"] = s.x_end;
    d["prefix"] = s.prefix_size, d["suffix"] = s.suffix_size;
    d["pad_before"] = s.pad_before, d["pad_after"] = s.pad_after;
    d["interior_begin"] = s.interior_begin, d["interior_end"] = s.interior_end;
    return d;
}

convnd_problem axis_problem(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                            int64_t pad_before, int64_t pad_after) {
    convnd_problem p;
    convnd_problem_init(&p, 1);
    p.C_in = p.C_out = 1;
    p.input[0] = input, p.kernel[0] = kernel, p.stride[0] = stride, p.dilation[0] = dilation;
    p.pad_before[0] = pad_before, p.pad_after[0] = pad_after;
    return p;
}

py::dict shard_rows(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t pad_before, int64_t pad_after, int64_t begin, int64_t size,
                    bool aligned) {
    const convnd_problem p = axis_problem(input, kernel, stride, dilation, pad_before, pad_after);
    convnd_shard s;
    check(aligned ? convnd_shard_rows_aligned(&p, 0, begin, size, &s)
                  : convnd_shard_rows(&p, 0, begin, size, &s),
          "shard_rows");
    return shard_dict(s);
}

py::dict shard_part(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                    int64_t pad_before, int64_t pad_after, int64_t begin, int64_t size,
                    int64_t out_begin, int64_t out_end) {
    const convnd_problem p = axis_problem(input, kernel, stride, dilation, pad_before, pad_after);
    convnd_shard s;
    check(convnd_shard_part(&p, 0, begin, size, out_begin, out_end, &s), "shard_part");
    return shard_dict(s);
}

} // namespace

TORCH_LIBRARY(convnd, m) {
    m.def("conv_nd(Tensor x, Tensor w, Tensor? bias, Tensor? z, int[] stride, int[] dilation, "
          "int[] padding_before, int[] padding_after, int groups=1, int mode=0, float alpha=1., "
          "float beta=0., int activation=0, str? schedule=None) -> Tensor");
    m.def("conv_nd_wgrad(Tensor x, Tensor dy, int[] weight_size, Tensor? z, int[] stride, "
          "int[] dilation, int[] padding_before, int[] padding_after, int groups=1, int mode=0, "
          "float alpha=1., float beta=0., str? schedule=None) -> Tensor");
    m.def("conv_nd_halo(Tensor x, Tensor w, Tensor? bias, Tensor? prefix, Tensor? suffix, "
          "int axis, int[] stride, int[] dilation, int[] padding_before, int[] padding_after, "
          "int groups=1, int activation=0, str? schedule=None) -> Tensor");
    m.def("conv_nd_halo_out(Tensor x, Tensor w, Tensor? bias, Tensor? prefix, Tensor? suffix, "
          "int axis, int[] stride, int[] dilation, int[] padding_before, int[] padding_after, "
          "int groups, int activation, str? schedule, Tensor(a!) out) -> ()");
}

TORCH_LIBRARY_IMPL(convnd, CPU, m) {
    m.impl("conv_nd", &conv_nd_impl);
    m.impl("conv_nd_wgrad", &conv_nd_wgrad_impl);
    m.impl("conv_nd_halo", &conv_nd_halo_impl);
    m.impl("conv_nd_halo_out", &conv_nd_halo_out_impl);
}
TORCH_LIBRARY_IMPL(convnd, CUDA, m) {
    m.impl("conv_nd", &conv_nd_impl);
    m.impl("conv_nd_wgrad", &conv_nd_wgrad_impl);
    m.impl("conv_nd_halo", &conv_nd_halo_impl);
    m.impl("conv_nd_halo_out", &conv_nd_halo_out_impl);
}
TORCH_LIBRARY_IMPL(convnd, Meta, m) {
    m.impl("conv_nd", &conv_nd_meta);
    m.impl("conv_nd_wgrad", &conv_nd_wgrad_meta);
    m.impl("conv_nd_halo", &conv_nd_halo_meta);
}

namespace {

// ---- ONNX (convnd.onnx): the C bindings decide, the canonical op runs -----------------------

convnd_shape shape_of_list(const std::vector<int64_t> &v, const char *name) {
    TORCH_CHECK_VALUE(v.size() <= CONVND_MAX_RANK, "convnd: ", name, " has rank ", v.size(),
                      "; at most ", CONVND_MAX_RANK);
    convnd_shape s{};
    s.rank = (int32_t)v.size();
    std::copy(v.begin(), v.end(), s.v);
    return s;
}

convnd_ints ints_of(const std::vector<int64_t> &v, const char *name) {
    TORCH_CHECK_VALUE(v.size() <= CONVND_MAX_RANK, "convnd: ", name, " has ", v.size(),
                      " entries; at most ", CONVND_MAX_RANK);
    convnd_ints r{};
    r.len = (int32_t)v.size();
    std::copy(v.begin(), v.end(), r.v);
    return r;
}

convnd_onnx_auto_pad auto_pad_of(const std::string &a) {
    if (a == "NOTSET") return CONVND_ONNX_NOTSET;
    if (a == "VALID") return CONVND_ONNX_VALID;
    if (a == "SAME_UPPER") return CONVND_ONNX_SAME_UPPER;
    if (a == "SAME_LOWER") return CONVND_ONNX_SAME_LOWER;
    TORCH_CHECK_VALUE(false, "convnd.onnx: auto_pad='", a,
                      "' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
}

// The geometry ONNX Conv (transposed=false) or ConvTranspose gives these shapes and attributes
// (convnd_bind_onnx_conv / _conv_transpose; an absent attribute is None): the arguments of
// torch.ops.convnd.conv_nd as a dict.
py::dict onnx_conv_geometry(bool transposed, const std::vector<int64_t> &x_shape,
                            const std::vector<int64_t> &w_shape, int64_t bias_len,
                            const std::string &auto_pad,
                            const std::optional<std::vector<int64_t>> &dilations, int64_t group,
                            const std::optional<std::vector<int64_t>> &kernel_shape,
                            const std::optional<std::vector<int64_t>> &pads,
                            const std::optional<std::vector<int64_t>> &strides,
                            const std::optional<std::vector<int64_t>> &output_padding,
                            const std::optional<std::vector<int64_t>> &output_shape,
                            bool onnxruntime_same) {
    const convnd_shape X = shape_of_list(x_shape, "X"), W = shape_of_list(w_shape, "W");
    const convnd_onnx_auto_pad ap = auto_pad_of(auto_pad);
    convnd_ints d{}, k{}, s{}, op{}, os{};
    convnd_pads pd{};
    if (dilations) d = ints_of(*dilations, "dilations");
    if (kernel_shape) k = ints_of(*kernel_shape, "kernel_shape");
    if (strides) s = ints_of(*strides, "strides");
    if (output_padding) op = ints_of(*output_padding, "output_padding");
    if (output_shape) os = ints_of(*output_shape, "output_shape");
    if (pads) {
        TORCH_CHECK_VALUE(pads->size() <= 2 * CONVND_MAX_RANK, "convnd.onnx: pads has ",
                          pads->size(), " entries");
        pd.len = (int32_t)pads->size();
        std::copy(pads->begin(), pads->end(), pd.v);
    }
    convnd_problem p;
    const convnd_status st =
        transposed
            ? (onnxruntime_same ? convnd_bind_onnx_conv_transpose_ort
                                : convnd_bind_onnx_conv_transpose)(
                  &X, &W, bias_len, ap, dilations ? &d : nullptr, group,
                  kernel_shape ? &k : nullptr, output_padding ? &op : nullptr,
                  output_shape ? &os : nullptr, pads ? &pd : nullptr, strides ? &s : nullptr, &p)
            : convnd_bind_onnx_conv(&X, &W, bias_len, ap, dilations ? &d : nullptr, group,
                                    kernel_shape ? &k : nullptr, pads ? &pd : nullptr,
                                    strides ? &s : nullptr, &p);
    check(st, transposed ? "ONNX ConvTranspose" : "ONNX Conv");
    auto list = [&](const int64_t *v) { return std::vector<int64_t>(v, v + p.dims); };
    py::dict g;
    g["stride"] = list(p.stride);
    g["dilation"] = list(p.dilation);
    g["padding_before"] = list(p.pad_before);
    g["padding_after"] = list(p.pad_after);
    g["groups"] = p.groups;
    g["mode"] = (int64_t)p.mode;
    return g;
}

// ONNX CausalConvWithState (convnd_bind_onnx_causal_conv_with_state, then convnd_causal_conv1d):
// (output, present_state) for packed (B, C, L) input, weight (C, 1, k), optional bias and
// past_state, on the input's device.
std::tuple<at::Tensor, at::Tensor> onnx_causal_conv_with_state(
    const at::Tensor &input, const at::Tensor &weight, const std::optional<at::Tensor> &bias,
    const std::optional<at::Tensor> &past_state, const std::string &activation) {
    check_device(input);
    auto elem_type = [](const at::Tensor &t) -> int32_t {
        switch (t.scalar_type()) {
        case at::kFloat:
            return CONVND_ONNX_FLOAT;
        case at::kHalf:
            return CONVND_ONNX_FLOAT16;
        case at::kBFloat16:
            return CONVND_ONNX_BFLOAT16;
        case at::kDouble:
            return CONVND_ONNX_DOUBLE;
        default:
            return -1;
        }
    };
    const std::vector<int64_t> xs = input.sizes().vec(), ws = weight.sizes().vec();
    const convnd_shape X = shape_of_list(xs, "input"), W = shape_of_list(ws, "weight");
    convnd_shape S{};
    if (past_state) S = shape_of_list(past_state->sizes().vec(), "past_state");
    const int64_t bias_len = bias ? (bias->dim() == 1 ? bias->size(0) : -2) : -1;
    TORCH_CHECK_VALUE(bias_len != -2, "convnd.onnx: bias of shape ", bias->sizes(),
                      " must have rank 1 (channels)");
    convnd_causal_problem p;
    check(convnd_bind_onnx_causal_conv_with_state(&X, &W, bias_len, past_state ? &S : nullptr,
                                                  activation.c_str(), elem_type(input), &p),
          "ONNX CausalConvWithState");
    for (const auto &t :
         {weight, bias ? *bias : at::Tensor(), past_state ? *past_state : at::Tensor()})
        TORCH_CHECK_VALUE(!t.defined() || (t.scalar_type() == input.scalar_type() &&
                                           t.device() == input.device()),
                          "convnd.onnx: CausalConvWithState's tensors must share input's dtype ",
                          input.scalar_type(), " and device ", input.device());
    const at::Tensor x = input.contiguous(), w = weight.contiguous();
    const at::Tensor b = bias ? bias->contiguous() : at::Tensor();
    const at::Tensor s = past_state ? past_state->contiguous() : at::Tensor();
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    at::Tensor present = at::empty({p.batch, p.dim, (int64_t)p.width - 1}, x.options());
    convnd_causal_tensors t{};
    t.x = x.data_ptr();
    t.weight = w.data_ptr();
    t.bias = ptr_or_null(b);
    t.initial_states = ptr_or_null(s);
    t.final_states = present.numel() ? present.data_ptr() : nullptr;
    t.y = y.data_ptr();
    const c10::DeviceGuard guard(x.device());
    const ThreadDevice on(x.device());
    check(convnd_causal_conv1d(&p, &t, stream_of(x.device())), "ONNX CausalConvWithState");
    return {y, present};
}

// The geometry PyTorch's functional front-ends give a conv (convnd_bind_torch_geometry: the C
// binding's rules and checks): (stride, dilation, pad_before, pad_after), one entry per spatial
// dim of w. Empty lists are arguments not given.
std::tuple<std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>
torch_geometry(int64_t rule, const std::vector<int64_t> &w_shape,
               const std::vector<int64_t> &stride, const std::vector<int64_t> &padding,
               const std::vector<int64_t> &dilation, const std::vector<int64_t> &output_padding) {
    const convnd_shape W = shape_of_list(w_shape, "weight");
    const convnd_ints s = ints_of(stride, "stride"), p = ints_of(padding, "padding"),
                      d = ints_of(dilation, "dilation"),
                      op = ints_of(output_padding, "output_padding");
    convnd_torch_geometry g;
    check(convnd_bind_torch_geometry((convnd_torch_padding_rule)rule, &W,
                                     stride.empty() ? nullptr : &s, padding.empty() ? nullptr : &p,
                                     dilation.empty() ? nullptr : &d,
                                     output_padding.empty() ? nullptr : &op, &g),
          "torch geometry");
    auto list = [&](const int64_t *v) { return std::vector<int64_t>(v, v + g.dims); };
    return {list(g.stride), list(g.dilation), list(g.pad_before), list(g.pad_after)};
}

// The data gradient's P1 (SPEC §10; convnd_shape_rule.h, as bind/bind_backward.c computes it),
// on SymInts: autograd traces the backward with symbolic sizes under torch.compile.
std::vector<c10::SymInt>
dgrad_pad_after(const std::vector<c10::SymInt> &x_size, const std::vector<c10::SymInt> &dy_size,
                const std::vector<c10::SymInt> &kernel, const std::vector<int64_t> &stride,
                const std::vector<int64_t> &dilation, const std::vector<int64_t> &pad_before) {
    const size_t dims = kernel.size();
    TORCH_CHECK_VALUE(x_size.size() == dims && dy_size.size() == dims && stride.size() == dims &&
                          dilation.size() == dims && pad_before.size() == dims,
                      "convnd: dgrad_pad_after needs ", dims, " entries in every list");
    std::vector<c10::SymInt> pa;
    for (size_t t = 0; t < dims; ++t) {
        const c10::SymInt E = CONVND_EFFECTIVE_KERNEL(kernel[t], dilation[t]);
        pa.push_back(CONVND_DGRAD_PAD_AFTER(x_size[t], dy_size[t], E, stride[t], pad_before[t]));
    }
    return pa;
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("plan_name", &plan_name, "The schedule:config conv_nd would run for these arguments");
    m.def("wgrad_plan_name", &wgrad_plan_name,
          "The schedule:config conv_nd_wgrad would run for these arguments");
    m.def("halo_plan_name", &halo_plan_name,
          "The schedule:config conv_nd_halo would run for these arguments");
    m.def(
        "device_name", []() { return std::string(convnd_device_name()); },
        "The process's convnd device (CPU tensors always run on the emulated device)");
    m.def(
        "schedule_names",
        []() {
            std::vector<std::string> names;
            for (int32_t i = 0; i < convnd_schedule_count(); ++i)
                names.push_back(convnd_schedule_name(i));
            return names;
        },
        "Every convnd schedule's name");
    m.attr("workspace_alignment") = (int64_t)CONVND_WORKSPACE_ALIGNMENT;
    m.def("shard_rows", &shard_rows,
          "SPEC 14: the rows a shard [begin, begin+size) of one axis (input, kernel, stride, "
          "dilation, pad_before, pad_after) computes and reads (convnd_shard_rows, or "
          "convnd_shard_rows_aligned when aligned)");
    m.def("shard_part", &shard_part,
          "SPEC 14: output rows [out_begin, out_end) of a shard as their own problem "
          "(convnd_shard_part)");
    m.def(
        "plan_cache_info", []() { return plan_cache().info(); },
        "The ops' plan cache: (entries, capacity, hits, misses)");
    m.def(
        "clear_plan_cache", []() { plan_cache().clear(); },
        "Drops every cached plan and zeroes the hit and miss counts");
    m.def(
        "set_plan_cache_capacity",
        [](int64_t capacity) {
            TORCH_CHECK_VALUE(capacity >= 0, "convnd: plan cache capacity=", capacity,
                              " must be >= 0 (0: no caching)");
            plan_cache().set_capacity((size_t)capacity);
        },
        "At most this many plans are kept (least recently used dropped first); 0 turns caching "
        "off");
    m.def(
        "counters",
        []() {
            convnd_counters c;
            convnd_get_counters(&c);
            return std::make_tuple(c.validations, c.plans);
        },
        "The library's process-wide counts: (problem validations, planner runs)");
    m.def(
        "_set_workspace_offset",
        [](int64_t offset) {
            TORCH_CHECK_VALUE(offset >= -1 && offset < (int64_t)CONVND_WORKSPACE_ALIGNMENT,
                              "convnd: workspace offset=", offset, " must be -1 (off) or in [0, ",
                              CONVND_WORKSPACE_ALIGNMENT, ")");
            workspace_offset = offset;
        },
        "Test hook: start each workspace allocation at this offset modulo the alignment "
        "(-1: where the allocator puts it)");
    m.def(
        "_last_workspace",
        []() {
            return std::make_tuple((uint64_t)last_ws_raw.load(), (uint64_t)last_ws_ptr.load(),
                                   (uint64_t)last_ws_bytes.load(), ws_count.load());
        },
        "Test hook: (raw start, aligned start, bytes) of the last workspace handed to conv_nd, "
        "and how many workspaces were handed out so far");
    m.def(
        "emu_set_order",
        [](int64_t order, uint64_t seed) { convnd_emu_set_order((convnd_emu_order)order, seed); },
        "Emulated device: thread order between barriers (0 forward, 1 reverse, 2 shuffle)");
    m.def("torch_geometry", &torch_geometry,
          "PyTorch conv arguments -> (stride, dilation, pad_before, pad_after) (the C binding)");
    m.def("dgrad_pad_after", &dgrad_pad_after,
          "The data gradient's P1 on (symbolic) sizes (convnd_shape_rule.h)");
    m.def("onnx_conv_geometry", &onnx_conv_geometry,
          "ONNX Conv / ConvTranspose shapes and attributes -> conv_nd's geometry (the C binding)");
    m.def("onnx_causal_conv_with_state", &onnx_causal_conv_with_state,
          "ONNX CausalConvWithState -> (output, present_state) (the C binding, causal conv1d)");
}
