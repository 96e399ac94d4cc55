"""The operator itself: torch.library.opcheck, autograd (gradcheck and against PyTorch's own
autograd in float64), torch.compile(fullgraph=True), and bad input."""
import pytest
import torch
import torch.nn.functional as F

import convnd
import convnd.torch as cf
from conftest import SEED, assert_close_to_reference

OP = torch.ops.convnd.conv_nd.default
WGRAD = torch.ops.convnd.conv_nd_wgrad.default

# (x shape, w shape, bias, z, stride, dilation, pb, pa, groups, mode, alpha, beta, activation)
OPCHECK_CASES = {
    "fwd1d_bias": ([2, 4, 9], [6, 2, 3], True, False, [2], [1], [1], [2], 2, 0, 1.0, 0.0, 0),
    "fwd2d_z_relu": ([1, 3, 6, 5], [4, 3, 3, 2], True, True, [1, 1], [2, 1], [2, 0], [1, 1], 1,
                     0, 0.5, 1.5, 1),
    "fwd3d_crop": ([1, 2, 4, 5, 4], [2, 1, 2, 2, 1], False, False, [1, 2, 1], [1, 1, 1],
                   [0, -1, 1], [1, 0, 0], 2, 0, 1.0, 0.0, 0),
    "convT2d_silu": ([2, 4, 3, 4], [4, 3, 3, 2], True, False, [2, 1], [1, 2], [1, 0], [0, 1], 1,
                     1, 1.0, 0.0, 2),
    "convT1d_groups": ([1, 4, 5], [4, 1, 4], False, True, [3], [1], [2], [1], 2, 1, 2.0, 1.0, 0),
}


def op_args(case, dtype=torch.float32, requires_grad=False, channels_last=False):
    xs, ws, has_b, has_z, s, d, pb, pa, g, mode, alpha, beta, act = case
    x = torch.randn(xs, dtype=dtype)
    w = torch.randn(ws, dtype=dtype)
    if channels_last and x.dim() == 4:
        x = x.to(memory_format=torch.channels_last)
    c_out = ws[0] if mode == 0 else ws[1] * g
    b = torch.randn(c_out, dtype=dtype) if has_b else None
    y = OP(x, w, b, None, s, d, pb, pa, g, mode, alpha, 0.0, 0, None)
    z = torch.randn(y.shape, dtype=dtype) if has_z else None
    ts = [t.requires_grad_(requires_grad) if t is not None else None for t in (x, w, b, z)]
    return tuple(ts) + (s, d, pb, pa, g, mode, alpha, beta if has_z else 0.0, act, None)


@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_opcheck(name):
    torch.manual_seed(SEED)
    for requires_grad in (False, True):
        torch.library.opcheck(OP, op_args(OPCHECK_CASES[name], requires_grad=requires_grad))


def test_opcheck_channels_last():
    torch.manual_seed(SEED)
    args = op_args(OPCHECK_CASES["fwd2d_z_relu"], requires_grad=True, channels_last=True)
    torch.library.opcheck(OP, args)
    assert OP(*args).is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("name", ["fwd1d_bias", "fwd3d_crop", "convT1d_groups"])
def test_gradcheck_float32(name):
    """convnd has no float64, so gradcheck runs in float32. The op is bilinear in (x, w) and
    affine in bias and z with no activation, so central differences are exact for any step in
    exact arithmetic: a large eps (0.5) keeps the f32 rounding of the two evaluations
    (~reduction * 2^-24 * |y|) small against 2*eps, and 2e-3 bounds it for these sizes."""
    torch.manual_seed(SEED)
    args = op_args(OPCHECK_CASES[name], requires_grad=True)
    assert torch.autograd.gradcheck(OP, args, eps=0.5, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_gradients_match_torch_autograd_float64(name, emu_order):
    """Every input's gradient (activations included) against PyTorch's autograd of the same
    function in float64, within the float32 accumulation bound."""
    torch.manual_seed(SEED)
    args = op_args(OPCHECK_CASES[name], requires_grad=True)
    x, w, b, z, s, d, pb, pa, g, mode, alpha, beta, act, _ = args
    y = OP(*args)
    gy = torch.randn(y.shape)
    grads = torch.autograd.grad(y, [t for t in (x, w, b, z) if t is not None], gy)

    ref_in = [t.detach().double().requires_grad_() if t is not None else None
              for t in (x, w, b, z)]
    y_ref = reference(*ref_in, s, d, pb, pa, g, mode, alpha, beta, act)
    ref_grads = torch.autograd.grad(y_ref, [t for t in ref_in if t is not None], gy.double())
    for got, ref in zip(grads, ref_grads):
        scale = ref.abs().max().item() + 1.0
        # Each gradient sums at most numel(y) products of f32 values (~1e3 here).
        assert (got.double() - ref).abs().max().item() <= y.numel() * 2 ** -24 * 64 * scale, \
            f"CONVND_TEST_SEED={SEED}"


def reference(x, w, b, z, s, d, pb, pa, g, mode, alpha, beta, act):
    """The same function in float64 with PyTorch's own ops (the SPEC's semantics)."""
    dims = x.dim() - 2
    if mode == 0:
        pads = [p for i in reversed(range(dims)) for p in (pb[i], pa[i])]
        acc = getattr(F, f"conv{dims}d")(F.pad(x, pads), w, stride=s, dilation=d, groups=g)
    else:
        # Transposed: pad 0, then crop P0 before and P1 after (negative P1 extends with zeros).
        acc = getattr(F, f"conv_transpose{dims}d")(x, w, stride=s, dilation=d, groups=g)
        pads = [-p for i in reversed(range(dims)) for p in (pb[i], pa[i])]
        acc = F.pad(acc, pads)
    y = alpha * acc
    if b is not None:
        y = y + b.reshape([1, -1] + [1] * dims)
    if z is not None:
        y = y + beta * z
    return {0: y, 1: F.relu(y), 2: F.silu(y), 3: F.gelu(y)}[act]


def wgrad_args(case, channels_last=False, with_z=False, alpha=1.0, beta=0.0):
    """conv_nd_wgrad's arguments for the weight gradient of an OPCHECK_CASES problem."""
    xs, ws, _, _, s, d, pb, pa, g, mode, _, _, _ = case
    x, w = torch.randn(xs), torch.randn(ws)
    if channels_last and x.dim() == 4:
        x = x.to(memory_format=torch.channels_last)
    dy = torch.randn(OP(x, w, None, None, s, d, pb, pa, g, mode, 1.0, 0.0, 0, None).shape)
    z = torch.randn(ws) if with_z else None
    return (x, dy, list(ws), z, s, d, pb, pa, g, mode, alpha, beta if with_z else 0.0, None)


@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_opcheck_wgrad(name):
    torch.manual_seed(SEED)
    torch.library.opcheck(WGRAD, wgrad_args(OPCHECK_CASES[name], with_z=True, alpha=0.5,
                                            beta=2.0))


@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
@pytest.mark.parametrize("channels_last", [False, True], ids=["cf", "cl"])
def test_wgrad_op_matches_torch(name, channels_last, emu_order):
    """conv_nd_wgrad (forward problems in CONVND_WGRAD mode, transposed ones bound to their
    adjoint's) against PyTorch's weight gradient in float64, with alpha and beta * z."""
    torch.manual_seed(SEED)
    x, dy, ws, z, s, d, pb, pa, g, mode, alpha, beta, _ = wgrad_args(
        OPCHECK_CASES[name], channels_last=channels_last, with_z=True, alpha=0.75, beta=-1.5)
    dw = WGRAD(x, dy, ws, z, s, d, pb, pa, g, mode, alpha, beta, None)
    assert list(dw.shape) == ws and dw.dtype == x.dtype
    w_ref = torch.zeros(ws, dtype=torch.float64, requires_grad=True)
    y_ref = reference(x.double(), w_ref, None, None, s, d, pb, pa, g, mode, 1.0, 0.0, 0)
    (gw,) = torch.autograd.grad(y_ref, [w_ref], dy.double())
    ref = alpha * gw + beta * z.double()
    scale = ref.abs().max().item() + 1.0
    assert (dw.double() - ref).abs().max().item() <= dy.numel() * 2 ** -24 * 64 * scale, \
        f"CONVND_TEST_SEED={SEED}"


def test_wgrad_runs_convnd_wgrad_schedules():
    """The weight gradient is convnd's wgrad mode, not a forward conv in disguise: the plan is a
    wgrad schedule for forward and transposed problems alike."""
    torch.manual_seed(SEED)
    for name in ("fwd1d_bias", "convT2d_silu"):
        x, dy, ws, z, s, d, pb, pa, g, mode, alpha, beta, _ = wgrad_args(OPCHECK_CASES[name])
        plan = convnd.wgrad_plan_name(x, dy, ws, z, stride=s, dilation=d, padding_before=pb,
                                      padding_after=pa, groups=g, mode=mode)
        assert plan.startswith("wgrad"), plan


def test_wgrad_empty_batch_gives_beta_z():
    torch.manual_seed(SEED)
    x, w = torch.randn(0, 4, 7), torch.randn(6, 2, 3)
    dy, z = torch.randn(0, 6, 5), torch.randn(6, 2, 3)
    dw = WGRAD(x, dy, list(w.shape), z, [1], [1], [0], [0], 2, 0, 1.0, 0.5, None)
    torch.testing.assert_close(dw, 0.5 * z)


def test_wgrad_bad_input_raises_with_convnd_message():
    x, dy = torch.randn(1, 3, 6, 6), torch.randn(1, 4, 4, 4)
    with pytest.raises(ValueError,
                       match=r"dy has shape \[1, 4, 4, 4\].*output of shape \[1, 4, 2, 2\]"):
        WGRAD(x, dy, [4, 3, 5, 5], None, [1, 1], [1, 1], [0, 0], [0, 0], 1, 0, 1.0, 0.0, None)
    with pytest.raises(ValueError, match="groups=2 does not divide C_in=3"):
        WGRAD(x, dy, [4, 1, 3, 3], None, [1, 1], [1, 1], [0, 0], [0, 0], 2, 0, 1.0, 0.0, None)
    with pytest.raises(ValueError, match="mode=2"):
        WGRAD(x, dy, [4, 3, 3, 3], None, [1, 1], [1, 1], [0, 0], [0, 0], 1, 2, 1.0, 0.0, None)
    with pytest.raises(ValueError, match="conv_nd_wgrad"):
        OP(x, torch.randn(4, 3, 3, 3), None, None, [1, 1], [1, 1], [0, 0], [0, 0], 1, 2, 1.0,
           0.0, 0, None)


def test_torch_compile_fullgraph():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding="same")
            self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)

        def forward(self, x):
            return self.up(F.relu(self.conv(x))) + cf.causal_conv(x[:, :, :, :1].squeeze(-1),
                                                                  self.w1).mean()

    torch.manual_seed(SEED)
    m = Block()
    m.w1 = torch.nn.Parameter(torch.randn(2, 3, 3))
    convnd.nn.convert(m)
    x = torch.randn(2, 3, 6, 5)
    eager = m(x)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(m)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    code = "".join(g.code for g in explained.graphs)
    assert code.count("convnd.conv_nd") == 3, code  # both modules and causal_conv, in the graph
    compiled = torch.compile(m, fullgraph=True)
    got = compiled(x)
    torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
    got.sum().backward()  # the backward graph runs through the op's autograd too
    assert m.conv.weight.grad is not None


# (x shape builder over a size n, w shape, stride, dilation, pb, pa, groups, mode)
SYMBOLIC_CASES = {
    "fwd1d_strided_dilated": (lambda n: [2, 4, n], [6, 4, 3], [2], [2], [1], [2], 1, 0),
    "fwd2d_crop": (lambda n: [1, 2, n, n + 3], [3, 2, 2, 3], [1, 2], [1, 1], [-1, 0], [0, -1], 1,
                   0),
    "convT1d_stride3": (lambda n: [1, 4, n], [4, 2, 4], [3], [1], [2], [1], 2, 1),
    "convT2d": (lambda n: [2, 3, n, 5], [3, 2, 3, 2], [2, 1], [1, 2], [1, 0], [0, 1], 1, 1),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC_CASES))
def test_symbolic_output_size_is_the_c_rule(name):
    """The Meta kernel on symbolic sizes (FakeTensor over a ShapeEnv, as torch.compile's dynamic
    shapes give it) works out y's shape with the C library's rule (convnd_shape_rule.h) on
    SymInts: every spatial size is an expression of x's symbols, and evaluated at x's real sizes
    it equals the shape of the eager op's result (the C library's convnd_output_size)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (DimDynamic, ShapeEnv,
                                                       StatelessSymbolicContext)
    xs, ws, s, d, pb, pa, g, mode = SYMBOLIC_CASES[name]
    torch.manual_seed(SEED)
    w = torch.randn(ws)
    for n in (7, 8, 11, 16):
        x = torch.randn(xs(n))
        eager = OP(x, w, None, None, s, d, pb, pa, g, mode, 1.0, 0.0, 0, None)
        with FakeTensorMode(shape_env=ShapeEnv()) as fake:
            context = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * x.dim())
            fx = fake.from_tensor(x, symbolic_context=context)
            y = OP(fx, fake.from_tensor(w), None, None, s, d, pb, pa, g, mode, 1.0, 0.0, 0, None)
        spatial = list(y.shape[2:])
        assert all(isinstance(v, torch.SymInt) and v.node.expr.free_symbols for v in spatial), \
            f"{name} n={n}: spatial sizes {spatial} are not symbolic"
        got = [int(v.node.hint) if isinstance(v, torch.SymInt) else v for v in y.shape]
        assert got == list(eager.shape), (name, n, got, list(eager.shape))


BAD = [
    # (description, call, exception, words the message must contain)
    ("groups not dividing C_in",
     lambda x, w: cf.conv2d(x, torch.randn(6, 2, 3, 3), groups=4), ValueError,
     ["groups=4", "does not divide C_in=3"]),
    ("weight channels", lambda x, w: cf.conv2d(x, torch.randn(4, 2, 3, 3)), ValueError,
     ["w has shape [4, 2, 3, 3]", "expects [4, 3, 3, 3]"]),
    ("float64", lambda x, w: cf.conv2d(x.double(), w.double()), ValueError,
     ["float32, float16 and bfloat16"]),
    ("kernel larger than input", lambda x, w: cf.conv2d(x, torch.randn(4, 3, 9, 1)), ValueError,
     ["O[0]", "< 1"]),
    ("same with stride", lambda x, w: cf.conv2d(x, w, stride=2, padding="same"), ValueError,
     ["padding='same'", "stride=[2, 2]"]),
    ("bias length", lambda x, w: cf.conv2d(x, w, torch.randn(5)), ValueError,
     ["bias has shape [5]", "expects [4]"]),
    ("unknown schedule",
     lambda x, w: convnd.conv_nd(x, w, stride=[1, 1], dilation=[1, 1], padding_before=[0, 0],
                                 padding_after=[0, 0], schedule="no_such_schedule"),
     ValueError, ["no_such_schedule", "unknown schedule"]),
    ("forced schedule refusing",
     lambda x, w: convnd.conv_nd(x, w, stride=[1, 1], dilation=[1, 1], padding_before=[0, 0],
                                 padding_after=[0, 0], schedule="depthwise"),
     NotImplementedError, ["depthwise", "does not support"]),
    ("stride list length", lambda x, w: cf.conv2d(x, w, stride=(1, 2, 3)), ValueError,
     ["expected stride to be a single integer value or a list of 2 values", "stride=[1, 2, 3]"]),
    ("w dtype differs from x",
     lambda x, w: torch.ops.convnd.conv_nd(x, w.half(), None, None, [1, 1], [1, 1], [0, 0],
                                           [0, 0]),
     ValueError, ["x has dtype Float but w has dtype Half"]),
    ("wgrad dy dtype differs from x",
     lambda x, w: torch.ops.convnd.conv_nd_wgrad(x, torch.randn(1, 4, 4, 4).bfloat16(),
                                                 [4, 3, 3, 3], None, [1, 1], [1, 1], [0, 0],
                                                 [0, 0]),
     ValueError, ["x has dtype Float but dy has dtype BFloat16"]),
    ("wgrad padding list length",
     lambda x, w: torch.ops.convnd.conv_nd_wgrad(x, torch.randn(1, 4, 4, 4), [4, 3, 3, 3], None,
                                                 [1, 1], [1, 1], [0], [0, 0]),
     ValueError, ["padding_before", "expected 2"]),
]


@pytest.mark.parametrize("desc,call,exc,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_with_convnd_message(desc, call, exc, words):
    x, w = torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3)
    before = (x.clone(), w.clone())
    with pytest.raises(exc) as e:
        call(x, w)
    for word in words:
        assert word in str(e.value), str(e.value)
    # Nothing written: the inputs are untouched (the op only ever writes its own fresh output).
    assert torch.equal(x, before[0]) and torch.equal(w, before[1])


def test_bad_input_raises_at_trace_time_too():
    """The meta kernel validates with the library, so torch.compile reports convnd's error."""
    torch._dynamo.reset()
    f = torch.compile(lambda x, w: cf.conv2d(x, w, groups=4), fullgraph=True)
    with pytest.raises(Exception) as e:
        f(torch.randn(1, 3, 6, 6), torch.randn(6, 2, 3, 3))
    assert "groups=4 does not divide C_in=3" in str(e.value)


def test_mixed_devices_refused_clearly():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: mixing needs one")
    with pytest.raises(ValueError, match="is on"):
        cf.conv2d(torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3, device="cuda"))



# x views PyTorch makes without a copy: name -> (base shape, the view of a base tensor)
X_VIEWS = {
    "channel_slice_cf": ([2, 10, 9, 8], lambda b: b[:, 3:7]),
    "channel_slice_cl": ([2, 9, 8, 10], lambda b: b.permute(0, 3, 1, 2)[:, 2:6]),
    "row_pitch": ([2, 4, 9, 12], lambda b: b[..., :8]),
    "batch_broadcast": ([1, 4, 9, 8], lambda b: b.expand(3, -1, -1, -1)),
    "strided_rows": ([2, 4, 18, 8], lambda b: b[:, :, ::2]),
}


@pytest.mark.parametrize("name", sorted(X_VIEWS))
def test_x_views_are_read_in_place(name, emu_order):
    """A non-contiguous x reaches convnd as a view (SPEC §11), not a copy: a schedule that reads
    packed tensors only refuses it naming x's strides; schedules that read views run it in place
    and match PyTorch in float64, and the gradient flows back into the viewed tensor."""
    torch.manual_seed(SEED)
    shape, view = X_VIEWS[name]
    base = torch.randn(shape)
    x = view(base)
    assert not x.is_contiguous() and not x.is_contiguous(memory_format=torch.channels_last)
    w = torch.randn(5, 4, 3, 3)
    geo = ([1, 1], [1, 1], [1, 0], [1, 2])
    kw = dict(stride=geo[0], dilation=geo[1], padding_before=geo[2], padding_after=geo[3])
    strides = ", ".join(str(s) for s in x.stride())
    with pytest.raises(NotImplementedError, match=rf"x has strides \[{strides}\]"):
        convnd.conv_nd(x, w, schedule="cublas_im2col", **kw)
    ref = reference(x.double(), w.double(), None, None, *geo, 1, 0, 1.0, 0.0, 0)
    ref_abs = reference(x.double().abs(), w.double().abs(), None, None, *geo, 1, 0, 1.0, 0.0, 0)
    for schedule in ("igemm_simt", "direct", None):
        y = convnd.conv_nd(x, w, schedule=schedule, **kw)
        assert_close_to_reference(y, ref, ref_abs, 4 * 9, torch.float32)
    # autograd through the view, against PyTorch's in float64
    b32 = base.clone().requires_grad_()
    y = convnd.conv_nd(view(b32), w, **kw)
    gy = torch.randn(y.shape)
    (g32,) = torch.autograd.grad(y, [b32], gy)
    b64 = base.double().requires_grad_()
    y64 = reference(view(b64), w.double(), None, None, *geo, 1, 0, 1.0, 0.0, 0)
    (g64,) = torch.autograd.grad(y64, [b64], gy.double())
    assert (g32.double() - g64).abs().max().item() <= y.numel() * 2 ** -24 * 64 * (
        g64.abs().max().item() + 1.0), f"CONVND_TEST_SEED={SEED}"


# the same kinds of view with GEMM-sized channels (16 in, 16 out)
GEMM_VIEWS = {
    "channel_slice_cl": ([2, 9, 8, 32], lambda b: b.permute(0, 3, 1, 2)[:, 8:24]),
    "row_pitch": ([2, 16, 9, 12], lambda b: b[..., :8]),
    "batch_broadcast": ([1, 16, 9, 8], lambda b: b.expand(3, -1, -1, -1)),
}


@pytest.mark.parametrize("name", sorted(GEMM_VIEWS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_views_plan_the_implicit_gemms(name, dtype):
    """The planner sends GEMM-shaped problems whose x is a view to the implicit GEMMs, which
    read it in place (igemm_simt for exact f32, igemm_tc for f16), not to `direct`."""
    shape, view = GEMM_VIEWS[name]
    x = view(torch.randn(shape, dtype=dtype))
    w = torch.randn(16, 16, 3, 3, dtype=dtype)
    kw = dict(stride=[1, 1], dilation=[1, 1], padding_before=[1, 1], padding_after=[1, 1])
    want = "igemm_simt:" if dtype == torch.float32 else "igemm_tc:"
    assert convnd.plan_name(x, w, **kw).startswith(want), convnd.plan_name(x, w, **kw)


# Weight-gradient problems of the channels-last vector path (wgrad_vec_tc: f16/bf16, channels per
# group multiples of 8): (x shape, w shape, stride, dilation, pb, pa, groups, x a channel view)
VEC_WGRAD_CASES = {
    "2d_asym_dilated": ((2, 16, 9, 8), (24, 16, 3, 3), [1, 1], [1, 2], [1, 0], [1, 2], 1, False),
    "2d_strided_negative": ((1, 8, 12, 11), (16, 8, 3, 3), [2, 1], [1, 1], [-1, 1], [2, -1], 1,
                            False),
    "2d_grouped": ((2, 32, 7, 6), (32, 16, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], 2, False),
    "2d_channel_view": ((2, 8, 6, 7), (16, 8, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], 1, True),
    "3d_strided": ((1, 8, 5, 6, 7), (16, 8, 3, 2, 3), [2, 1, 2], [1, 1, 1], [1, 0, 1],
                   [1, 0, 1], 1, False),
}


def channels_last(t):
    return t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", sorted(VEC_WGRAD_CASES))
def test_wgrad_vector_path_through_autograd(name, dtype, emu_order):
    """The op's backward on channels-last 16-bit x and dy with channels in 16-byte chunks runs
    wgrad_vec_tc (convnd.wgrad_plan_name), and dL/dw equals PyTorch's float64 autograd: groups,
    stride, dilation, asymmetric and negative padding, 3-D, x a channel slice of a wider tensor.
    Channels-first x and dy take the gather path (wgrad_igemm_tc) with the same result."""
    torch.manual_seed(SEED)
    xs, ws, s, d, pb, pa, g, view = VEC_WGRAD_CASES[name]
    if view:  # 8 of 16 channels of a channels-last tensor: strides stay 16-byte multiples
        wide = channels_last(torch.randn((xs[0], 2 * xs[1]) + xs[2:]).to(dtype))
        x_cl = wide[:, :xs[1]]
    else:
        x_cl = channels_last(torch.randn(xs).to(dtype))
    w = torch.randn(ws).to(dtype)
    x_ref = x_cl.double().requires_grad_(False)
    w_ref = w.double().requires_grad_(True)
    y_ref = reference(x_ref, w_ref, None, None, s, d, pb, pa, g, 0, 1.0, 0.0, 0)
    dy = channels_last(torch.randn(y_ref.shape).to(dtype))
    (gw_ref,) = torch.autograd.grad(y_ref, [w_ref], dy.double())
    for x in (x_cl, x_cl.contiguous()):
        dyx = dy if x is x_cl else dy.contiguous()
        plan = convnd.wgrad_plan_name(x, dyx, list(ws), None, stride=s, dilation=d,
                                      padding_before=pb, padding_after=pa, groups=g)
        expected = "wgrad_vec_tc:" if x is x_cl else "wgrad_igemm_tc:"
        assert plan.startswith(expected), (name, plan)
        wp = w.clone().requires_grad_(True)
        y = OP(x, wp, None, None, s, d, pb, pa, g, 0, 1.0, 0.0, 0, None)
        (gw,) = torch.autograd.grad(y, [wp], dyx)
        scale = gw_ref.abs().max().item() + 1.0
        # dw rounded once to the 16-bit dtype; f32 accumulation far below that
        bound = scale * (2 ** -10 if dtype == torch.float16 else 2 ** -7)
        err = (gw.double() - gw_ref).abs().max().item()
        assert err <= bound, f"{name} {plan}: {err} > {bound} (CONVND_TEST_SEED={SEED})"
