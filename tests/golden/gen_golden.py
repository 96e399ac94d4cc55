#!/usr/bin/env python3
"""Generates the golden PyTorch fixtures of tests/test_golden.c.

Each case is one front-end call as a user would write it (PyTorch conv/conv_transpose/
convolution/_convolution, F.pad folded into a conv, ONNX Conv/ConvTranspose, TensorFlow
SAME/VALID/causal, causal video convs), small random inputs, and PyTorch's output computed in
float64. ONNX and TensorFlow have no PyTorch call of their own: their padding rules are
written out here from the ONNX reference implementation and the TensorFlow docs, and the
result is computed by PyTorch as F.pad + conv (or a cropped/extended conv_transpose), which is
what those rules mean. A few calls that PyTorch rejects are recorded as expected errors.

Outputs, all deterministic (fixed seed, one thread):
  cases.txt     one case per line: `name key=value ...` (format below)
  inputs.f32    little-endian float32: x, w, bias, z of every case
  expected.f64  little-endian float64: PyTorch's output of every case

cases.txt keys (lists are comma-separated; `-` means "argument not given", i.e. NULL):
  fe        front-end: torch_conv torch_conv_mode torch_conv_transpose torch_convolution
            torch__convolution torch_pad_conv causal_conv onnx_conv onnx_conv_transpose tf_conv
  dims      spatial dims
  dtype     f32 f16 bf16 (inputs are exactly representable in it; outputs are f64, unrounded)
  x, w      shapes exactly as passed to the front-end (framework order)
  bias      bias length or -1
  xl wl yl  convnd layout of the stored x, w, y data: cf (N C spatial) or cl (N spatial C;
            weight [O][K...][I]); yl is also the layout the binding must resolve y to
  y         output shape, logical convnd order [N, C_out, O...]
  alpha beta act z   epilogue: y = act(alpha*conv + bias + beta*z); z=1 when z is given
  expect    ok, or error when the front-end must reject the call (PyTorch raised `err`)
  xo wo bo zo yo     element offsets of x, w, bias, z in inputs.f32 and of y in expected.f64
                     (-1: absent)
front-end arguments: stride padding dilation groups output_padding transposed allow_tf32
  (torch), pad (F.pad list, torch order) and foldable (0: a crop meets the conv's own padding
  on the same side, which no single conv padding expresses: the binding must refuse), auto_pad pads strides dilations group kernel_shape
  output_padding output_shape (ONNX), strides padding dilations data_format (TensorFlow).

Run: python3 tests/golden/gen_golden.py   (writes next to this script)
"""
import os
import random
import struct
import sys
import warnings

import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore", message="Using padding='same'")

SEED = 20240611
MAX_ELEMS = 600  # per tensor, keeps the fixtures small

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
ACTS = {
    "none": lambda v: v,
    "relu": torch.relu,
    "silu": F.silu,
    "gelu": lambda v: F.gelu(v, approximate="none"),
}
TORCH_DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


class Skip(Exception):
    """The drawn parameters make no valid case (too big, empty output): draw again."""


def lst(v):
    """Records an argument: None -> '-', int -> 'v', list -> 'a,b,c'."""
    if v is None:
        return "-"
    if isinstance(v, (list, tuple)):
        return ",".join(str(int(a)) for a in v)
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def to_layout_order(t, layout):
    """Flattens a logical [A, B, spatial...] tensor in the memory order of `layout`."""
    if layout == "cl":
        t = t.permute(0, *range(2, t.dim()), 1)
    return t.contiguous().flatten()


class Writer:
    def __init__(self, rng):
        self.rng = rng
        self.gen = torch.Generator().manual_seed(SEED)
        self.lines = []
        self.inputs = []  # float32 values
        self.expected = []  # float64 values
        self.names = set()
        self.count = {}

    def rand(self, shape, dtype="f32", scale=1.0):
        """Random values exactly representable in `dtype`, as float64."""
        t = torch.randn(*shape, generator=self.gen, dtype=torch.float32) * scale
        return t.to(TORCH_DTYPE[dtype]).to(torch.float64)

    def put_input(self, flat):
        off = len(self.inputs)
        self.inputs.extend(float(v) for v in flat.to(torch.float32).tolist())
        return off

    def add(self, fe, name, args, *, x, w, xl, wl, yl, dims, dtype="f32", xshape=None,
            wshape=None, bias=None, z=None, y=None, alpha=1.0, beta=0.0, act="none",
            expect="ok", err=None, x_store=None, w_store=None):
        """x, w, bias, z, y: logical float64 tensors ([N, C, spatial...]; weights in their
        convnd logical order). xshape/wshape: the shapes as passed to the front-end."""
        for t in (x, w, z, y):
            if t is not None and t.numel() > MAX_ELEMS:
                raise Skip()
        assert name not in self.names, name
        self.names.add(name)
        rec = {
            "fe": fe,
            "dims": dims,
            "dtype": dtype,
            "x": lst(list(xshape if xshape is not None else x.shape)),
            "w": lst(list(wshape if wshape is not None else w.shape)),
            "bias": -1 if bias is None else bias.numel(),
            "xl": xl,
            "wl": wl,
            "yl": yl,
        }
        rec.update(args)
        rec["alpha"] = repr(float(alpha))
        rec["beta"] = repr(float(beta))
        rec["act"] = act
        rec["z"] = int(z is not None)
        rec["expect"] = expect
        rec["y"] = lst(list(y.shape)) if y is not None else "-"
        rec["xo"] = self.put_input(x_store if x_store is not None else to_layout_order(x, xl))
        rec["wo"] = self.put_input(w_store if w_store is not None else to_layout_order(w, wl))
        rec["bo"] = self.put_input(bias) if bias is not None else -1
        rec["zo"] = self.put_input(to_layout_order(z, yl)) if z is not None else -1
        if y is not None:
            rec["yo"] = len(self.expected)
            self.expected.extend(to_layout_order(y, yl).tolist())
        else:
            rec["yo"] = -1
        if err is not None:
            rec["err"] = err.split("\n")[0].replace(" ", "_")[:80]
        self.lines.append(name + " " + " ".join(f"{k}={v}" for k, v in rec.items()))
        self.count[fe] = self.count.get(fe, 0) + 1


# ---- random geometry -----------------------------------------------------------------------

MAX_SIZE = {1: 12, 2: 7, 3: 4}


def draw_channels(rng):
    groups = rng.choice([1, 1, 1, 2, 3])
    cin_g = rng.randint(1, 3)
    cout_g = rng.randint(1, 3)
    return rng.choice([1, 1, 2]), groups * cin_g, groups * cout_g, groups


def per_dim(rng, dims, lo, hi):
    return [rng.randint(lo, hi) for _ in range(dims)]


def as_user_list(rng, vals, default):
    """How a user might pass a per-dim argument: omitted (when it is the default), one int,
    a length-1 list (ATen broadcasts), or the full list."""
    if all(v == default for v in vals) and rng.random() < 0.3:
        return None, vals
    if all(v == vals[0] for v in vals) and rng.random() < 0.5:
        return (vals[0] if rng.random() < 0.5 else [vals[0]]), vals
    return list(vals), vals


def epilogue_draw(rng, force=False):
    if not force:
        return 1.0, 0.0, "none", False
    alpha = rng.choice([1.0, 0.5, -1.25, 2.0, 0.75])
    beta = rng.choice([0.0, 1.0, -0.5, 1.5])
    act = rng.choice(list(ACTS))
    return alpha, beta, act, beta != 0.0 or rng.random() < 0.3


def finish(t_conv_nobias, bias, z, alpha, beta, act, dims):
    """act(alpha * conv + bias + beta * z) in float64."""
    v = alpha * t_conv_nobias
    if bias is not None:
        v = v + bias.view(1, -1, *([1] * dims))
    if z is not None:
        v = v + beta * z
    return ACTS[act](v)


def default_y_layout(xl, wl):
    return "cl" if "cl" in (xl, wl) else "cf"


def check_torch_layout(y, x, w, dims, yl, name):
    """PyTorch CPU's own output layout; SPEC §6 follows ATen's CUDA rule, which CPU shares for
    2-D (for 3-D CPU returns contiguous outputs, so it is not compared). A tensor with one
    channel is both layouts at once; ATen then calls it contiguous, convnd goes by the layout
    the caller declares, so those are not compared either."""
    if dims == 2 and x.shape[1] > 1 and w.shape[1] > 1:
        torch_cl = y.is_contiguous(memory_format=torch.channels_last) and not y.is_contiguous()
        if torch_cl != (yl == "cl") and y.shape[1] > 1 and y.shape[2] * y.shape[3] > 1:
            print(f"warning: {name}: torch output layout differs from {yl}", file=sys.stderr)


def memory_format(t, layout, dims):
    if layout != "cl" or dims == 1:
        return t
    return t.contiguous(memory_format=torch.channels_last if dims == 2 else torch.channels_last_3d)


# ---- families --------------------------------------------------------------------------------


def family_torch_conv(W, rng, name, dims, *, dtype="f32", layouts=False, epi=False,
                      with_bias=None, unbatched=False):
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    S = per_dim(rng, dims, 1, 3)
    D = per_dim(rng, dims, 1, 3)
    P = per_dim(rng, dims, 0, 3)
    I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    if unbatched:
        N = 1
    xl = rng.choice(["cf", "cl"]) if layouts else "cf"
    wl = rng.choice(["cf", "cl"]) if layouts else "cf"
    x = W.rand([N, cin] + I, dtype)
    w = W.rand([cout, cin // groups] + K, dtype)
    has_bias = rng.random() < 0.5 if with_bias is None else with_bias
    bias = W.rand([cout], dtype) if has_bias else None
    s_user, _ = as_user_list(rng, S, 1)
    p_user, _ = as_user_list(rng, P, 0)
    d_user, _ = as_user_list(rng, D, 1)
    kw = {"groups": groups}
    if s_user is not None:
        kw["stride"] = s_user
    if p_user is not None:
        kw["padding"] = p_user
    if d_user is not None:
        kw["dilation"] = d_user
    xin = x[0] if unbatched else x
    try:
        y0 = CONV[dims](memory_format(xin, xl, dims) if not unbatched else xin,
                        memory_format(w, wl, dims), None, **kw)
    except RuntimeError:
        raise Skip()
    if unbatched:
        y0 = y0.unsqueeze(0)
    yl = default_y_layout(xl, wl)
    alpha, beta, act, has_z = epilogue_draw(rng, epi)
    z = W.rand(list(y0.shape), dtype) if has_z else None
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    if not epi:
        check_torch_layout(y0, x, w, dims, yl, name)
    y = finish(y0, bias, z, alpha, beta, act, dims)
    args = {"stride": lst(s_user), "padding": lst(p_user), "dilation": lst(d_user),
            "groups": groups}
    W.add("torch_conv", name, args, x=x, w=w, xl=xl, wl=wl, yl=yl, dims=dims, dtype=dtype,
          xshape=list(xin.shape), bias=bias, z=z, y=y, alpha=alpha, beta=beta, act=act)


def family_torch_conv_mode(W, rng, name, dims, mode, layouts=False):
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 5)
    if mode == "same":
        # even kernels and dilation are the interesting part: the odd extra goes after
        if rng.random() < 0.7:
            K[rng.randrange(dims)] = rng.choice([2, 4])
        S = [1] * dims
    else:
        S = per_dim(rng, dims, 1, 3)
    D = per_dim(rng, dims, 1, 3)
    I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    xl = rng.choice(["cf", "cl"]) if layouts else "cf"
    wl = "cf"
    x = W.rand([N, cin] + I)
    w = W.rand([cout, cin // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    s_user, _ = as_user_list(rng, S, 1)
    d_user, _ = as_user_list(rng, D, 1)
    kw = {"groups": groups, "padding": mode}
    if s_user is not None:
        kw["stride"] = s_user
    if d_user is not None:
        kw["dilation"] = d_user
    try:
        y0 = CONV[dims](memory_format(x, xl, dims), w, None, **kw)
    except RuntimeError:
        raise Skip()
    yl = default_y_layout(xl, wl)
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"stride": lst(s_user), "padding": mode, "dilation": lst(d_user), "groups": groups}
    W.add("torch_conv_mode", name, args, x=x, w=w, xl=xl, wl=wl, yl=yl, dims=dims, bias=bias,
          y=y)


def draw_transposed(rng, dims):
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    S = per_dim(rng, dims, 1, 3)
    D = per_dim(rng, dims, 1, 3)
    P = per_dim(rng, dims, 0, 3)
    OP = [rng.randrange(max(s, d)) for s, d in zip(S, D)]
    I = per_dim(rng, dims, 1, max(2, MAX_SIZE[dims] // 2))
    return N, cin, cout, groups, K, S, D, P, OP, I


def family_torch_conv_transpose(W, rng, name, dims, *, dtype="f32", layouts=False, epi=False):
    N, cin, cout, groups, K, S, D, P, OP, I = draw_transposed(rng, dims)
    xl = rng.choice(["cf", "cl"]) if layouts else "cf"
    wl = rng.choice(["cf", "cl"]) if layouts else "cf"
    x = W.rand([N, cin] + I, dtype)
    w = W.rand([cin, cout // groups] + K, dtype)
    bias = W.rand([cout], dtype) if (epi or rng.random() < 0.5) else None
    s_user, _ = as_user_list(rng, S, 1)
    p_user, _ = as_user_list(rng, P, 0)
    op_user, _ = as_user_list(rng, OP, 0)
    d_user, _ = as_user_list(rng, D, 1)
    kw = {"groups": groups}
    for k, v in (("stride", s_user), ("padding", p_user), ("output_padding", op_user),
                 ("dilation", d_user)):
        if v is not None:
            kw[k] = v
    try:
        y0 = CONV_T[dims](memory_format(x, xl, dims), memory_format(w, wl, dims), None, **kw)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    yl = default_y_layout(xl, wl)
    alpha, beta, act, has_z = epilogue_draw(rng, epi)
    z = W.rand(list(y0.shape), dtype) if has_z else None
    y = finish(y0, bias, z, alpha, beta, act, dims)
    args = {"stride": lst(s_user), "padding": lst(p_user), "output_padding": lst(op_user),
            "groups": groups, "dilation": lst(d_user)}
    W.add("torch_conv_transpose", name, args, x=x, w=w, xl=xl, wl=wl, yl=yl, dims=dims,
          dtype=dtype, bias=bias, z=z, y=y, alpha=alpha, beta=beta, act=act)


def family_torch_convolution(W, rng, name, dims, underscore=False):
    transposed = rng.random() < 0.5
    if transposed:
        N, cin, cout, groups, K, S, D, P, OP, I = draw_transposed(rng, dims)
    else:
        N, cin, cout, groups = draw_channels(rng)
        K, S, D, P = (per_dim(rng, dims, 1, 4), per_dim(rng, dims, 1, 3),
                      per_dim(rng, dims, 1, 3), per_dim(rng, dims, 0, 2))
        OP = [0] * dims  # ATen ignores it (it must not be negative)
        I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    layouts = rng.random() < 0.3
    xl = rng.choice(["cf", "cl"]) if layouts else "cf"
    wl = "cf"
    x = W.rand([N, cin] + I)
    w = W.rand(([cin, cout // groups] if transposed else [cout, cin // groups]) + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    # torch.convolution takes lists; ATen broadcasts length-1 lists
    def user(vals):
        return [vals[0]] if all(v == vals[0] for v in vals) and rng.random() < 0.5 else vals
    su, pu, du, opu = user(S), user(P), user(D), user(OP)
    allow_tf32 = rng.random() < 0.5
    try:
        if underscore:
            y0 = torch._convolution(memory_format(x, xl, dims), w, None, su, pu, du, transposed,
                                    opu, groups, False, True, True, allow_tf32)
        else:
            y0 = torch.convolution(memory_format(x, xl, dims), w, None, su, pu, du, transposed,
                                   opu, groups)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    yl = default_y_layout(xl, wl)
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"stride": lst(su), "padding": lst(pu), "dilation": lst(du),
            "transposed": int(transposed), "output_padding": lst(opu), "groups": groups}
    if underscore:
        args["allow_tf32"] = int(allow_tf32)
    W.add("torch__convolution" if underscore else "torch_convolution", name, args, x=x, w=w,
          xl=xl, wl=wl, yl=yl, dims=dims, bias=bias, y=y)


def family_pad_conv(W, rng, name, dims):
    """y = conv(F.pad(x, pad)) with zero fill and negative (cropping) entries.

    A crop followed by the conv's own zero padding on the same side (pad before < 0 with the
    conv's P0 > 0, or after < 0 with P1 > 0) is not a conv of x with any single padding: the
    cropped values are replaced by zeros. Such cases are recorded with foldable=0 (the binding
    must refuse them); the values are PyTorch's either way."""
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    S = per_dim(rng, dims, 1, 3)
    D = per_dim(rng, dims, 1, 2)
    P = per_dim(rng, dims, 0, 2)
    I = per_dim(rng, dims, 2, MAX_SIZE[dims])
    # pad list in torch order (last dim first), possibly covering fewer dims than all
    n_padded = rng.randint(1, dims)
    pad = []
    for _ in range(n_padded):
        pad += [rng.randint(-2, 3), rng.randint(-2, 3)]
    if rng.random() < 0.15:
        pad += [0, 0] * (dims - n_padded + (2 if rng.random() < 0.5 else 0))  # zero N/C entries
    before, after = [0] * dims, [0] * dims
    for j in range(min(n_padded, dims)):
        before[dims - 1 - j], after[dims - 1 - j] = pad[2 * j], pad[2 * j + 1]
    conv_mode = rng.random()
    if conv_mode >= 0.3 and rng.random() < 0.7:
        # mostly foldable: no conv padding on a dim the pad crops
        P = [0 if b < 0 or a < 0 else p for p, b, a in zip(P, before, after)]
    xl = rng.choice(["cf", "cl"]) if rng.random() < 0.3 else "cf"
    x = W.rand([N, cin] + I)
    w = W.rand([cout, cin // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    try:
        xp = F.pad(x, pad)
        if conv_mode < 0.15:
            padding, P0, P1 = "valid", [0] * dims, [0] * dims
            y0 = CONV[dims](xp, w, None, stride=S, padding="valid", dilation=D, groups=groups)
        elif conv_mode < 0.3:
            padding, S = "same", [1] * dims
            P0 = [d * (k - 1) // 2 for k, d in zip(K, D)]
            P1 = [d * (k - 1) - p0 for k, d, p0 in zip(K, D, P0)]
            y0 = CONV[dims](xp, w, None, padding="same", dilation=D, groups=groups)
        else:
            padding, P0, P1 = P, P, P
            y0 = CONV[dims](xp, w, None, stride=S, padding=P, dilation=D, groups=groups)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS or min(xp.shape) < 1:
        raise Skip()
    foldable = all(not (b < 0 and p0 > 0) and not (a < 0 and p1 > 0)
                   for b, a, p0, p1 in zip(before, after, P0, P1))
    yl = default_y_layout(xl, "cf")
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"pad": lst(pad), "stride": lst(S), "padding": lst(padding), "dilation": lst(D),
            "groups": groups, "foldable": int(foldable)}
    W.add("torch_pad_conv", name, args, x=x, w=w, xl=xl, wl="cf", yl=yl, dims=dims, bias=bias,
          y=y)


def family_causal(W, rng, name, dims):
    """Causal conv in PyTorch layout: time (outermost spatial dim) padded D(K-1) before, 0 after;
    the other dims padded symmetrically."""
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    S = per_dim(rng, dims, 1, 2)
    D = per_dim(rng, dims, 1, 3)
    I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    other = per_dim(rng, dims - 1, 0, 2) if dims > 1 else []
    p_user = None
    if dims > 1 and (any(other) or rng.random() < 0.5):
        p_user = [other[0]] if all(v == other[0] for v in other) and rng.random() < 0.5 else other
    x = W.rand([N, cin] + I)
    w = W.rand([cout, cin // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    pad = []
    for t in reversed(range(dims)):  # torch order: last dim first
        if t == 0:
            pad += [D[0] * (K[0] - 1), 0]
        else:
            pad += [other[t - 1], other[t - 1]]
    try:
        y0 = CONV[dims](F.pad(x, pad), w, None, stride=S, dilation=D, groups=groups)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"stride": lst(S), "padding": lst(p_user), "dilation": lst(D), "groups": groups}
    W.add("causal_conv", name, args, x=x, w=w, xl="cf", wl="cf", yl="cf", dims=dims,
          bias=bias, y=y)


def onnx_same_pads(I, K, S, D, upper):
    before, after = [], []
    for i, k, s, d in zip(I, K, S, D):
        e = d * (k - 1) + 1
        out = -(-i // s)
        total = max(0, (out - 1) * s + e - i)
        small, big = total // 2, total - total // 2
        before.append(small if upper else big)
        after.append(big if upper else small)
    return before, after


def family_onnx_conv(W, rng, name, dims):
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    S = per_dim(rng, dims, 1, 3)
    D = per_dim(rng, dims, 1, 3)
    I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    auto_pad = rng.choice(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    pads = None
    if auto_pad == "NOTSET":
        if rng.random() < 0.8:
            pads = per_dim(rng, dims, 0, 3) + per_dim(rng, dims, 0, 3)
        before, after = (pads[:dims], pads[dims:]) if pads else ([0] * dims, [0] * dims)
    elif auto_pad == "VALID":
        before, after = [0] * dims, [0] * dims
    else:
        before, after = onnx_same_pads(I, K, S, D, auto_pad == "SAME_UPPER")
    x = W.rand([N, cin] + I)
    w = W.rand([cout, cin // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    tpad = []
    for t in reversed(range(dims)):
        tpad += [before[t], after[t]]
    try:
        y0 = CONV[dims](F.pad(x, tpad), w, None, stride=S, dilation=D, groups=groups)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"auto_pad": auto_pad,
            "dilations": lst(D if rng.random() < 0.7 or any(d != 1 for d in D) else None),
            "group": groups,
            "kernel_shape": lst(K if rng.random() < 0.5 else None),
            "pads": lst(pads),
            "strides": lst(S if rng.random() < 0.7 or any(s != 1 for s in S) else None)}
    W.add("onnx_conv", name, args, x=x, w=w, xl="cf", wl="cf", yl="cf", dims=dims, bias=bias,
          y=y)


def crop_extend(t, begin, end, dims):
    """Removes `begin`/`end` positions from each spatial side (negative: appends zeros)."""
    tpad = []
    for i in reversed(range(dims)):
        tpad += [-begin[i], -end[i]]
    return F.pad(t, tpad)


def family_onnx_conv_transpose(W, rng, name, dims):
    N, cin, cout, groups, K, S, D, P, OP, I = draw_transposed(rng, dims)
    OP = [rng.randrange(s) for s in S]  # ONNX: output_padding < stride
    auto_pad = rng.choice(["NOTSET", "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"])
    E = [d * (k - 1) + 1 for k, d in zip(K, D)]
    full = [s * (i - 1) + op + e for i, s, op, e in zip(I, S, OP, E)]
    pads = output_shape = None
    if auto_pad in ("NOTSET", "VALID") and rng.random() < 0.7:
        if auto_pad == "NOTSET" and rng.random() < 0.8:
            pads = per_dim(rng, dims, 0, 2) + per_dim(rng, dims, 0, 2)
        before = pads[:dims] if pads else [0] * dims
        end = pads[dims:] if pads else [0] * dims
    else:
        if auto_pad in ("SAME_UPPER", "SAME_LOWER") and rng.random() < 0.5:
            out = [i * s for i, s in zip(I, S)]  # the spec's default output_shape
        else:
            out = [max(1, f - rng.randint(0, 3)) for f in full]
            output_shape = out
            if auto_pad == "NOTSET" and rng.random() < 0.3:
                pads = per_dim(rng, dims, 0, 2) + per_dim(rng, dims, 0, 2)  # ignored
        total = [f - o for f, o in zip(full, out)]
        if min(total) < 0:
            # pads < 0 (output_shape past the full result): the ONNX reference implementation
            # and onnxruntime disagree there, so no golden case claims either
            raise Skip()
        if auto_pad == "SAME_UPPER":
            before = [t // 2 for t in total]
            end = [t - t // 2 for t in total]
        else:
            end = [t // 2 for t in total]
            before = [t - t // 2 for t in total]
    x = W.rand([N, cin] + I)
    w = W.rand([cin, cout // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    y_full = CONV_T[dims](x, w, None, stride=S, dilation=D, groups=groups)  # size S(I-1)+E
    y_full = crop_extend(y_full, [0] * dims, [-op for op in OP], dims)  # + output_padding
    if any(b + e >= f for b, e, f in zip(before, end, full)):
        raise Skip()
    y0 = crop_extend(y_full, before, end, dims)
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    args = {"auto_pad": auto_pad, "dilations": lst(D), "group": groups,
            "kernel_shape": lst(K if rng.random() < 0.5 else None),
            "output_padding": lst(OP if any(OP) or rng.random() < 0.5 else None),
            "output_shape": lst(output_shape), "pads": lst(pads), "strides": lst(S)}
    W.add("onnx_conv_transpose", name, args, x=x, w=w, xl="cf", wl="cf", yl="cf", dims=dims,
          bias=bias, y=y)


def family_tf_conv(W, rng, name, dims, padding):
    """tf.nn.convolution / Keras: input in data_format order, filter [K..., C_in/g, C_out]."""
    N, cin, cout, groups = draw_channels(rng)
    K = per_dim(rng, dims, 1, 4)
    assert padding != "CAUSAL" or dims == 1
    if rng.random() < 0.6:
        S, D = per_dim(rng, dims, 1, 3), [1] * dims
    else:
        S, D = [1] * dims, per_dim(rng, dims, 1, 3)
    I = per_dim(rng, dims, 1, MAX_SIZE[dims])
    data_format = rng.choice(["NHWC", "NHWC", "NCHW"])
    layout = "cl" if data_format == "NHWC" else "cf"
    wl = rng.choice(["cf", "cl"])
    if padding == "SAME":
        before, after = onnx_same_pads(I, K, S, D, True)
    elif padding == "CAUSAL":
        before, after = [D[0] * (K[0] - 1)], [0]
    else:
        before, after = [0] * dims, [0] * dims
    x = W.rand([N, cin] + I)
    w = W.rand([cout, cin // groups] + K)
    bias = W.rand([cout]) if rng.random() < 0.5 else None
    tpad = []
    for t in reversed(range(dims)):
        tpad += [before[t], after[t]]
    try:
        y0 = CONV[dims](F.pad(x, tpad), w, None, stride=S, dilation=D, groups=groups)
    except RuntimeError:
        raise Skip()
    if y0.numel() > MAX_ELEMS:
        raise Skip()
    y = finish(y0, bias, None, 1.0, 0.0, "none", dims)
    xshape = [N] + I + [cin] if layout == "cl" else [N, cin] + I
    wshape = K + [cin // groups, cout]

    def user(vals, default):
        r = rng.random()
        if all(v == default for v in vals) and r < 0.3:
            return None
        if all(v == vals[0] for v in vals) and r < 0.6:
            return [vals[0]]
        if dims == 1 and r < 0.8:  # the full dims+2 form in data_format order
            return [1, vals[0], 1] if data_format == "NHWC" else [1, 1, vals[0]]
        return vals

    args = {"strides": lst(user(S, 1)), "padding": padding, "dilations": lst(user(D, 1)),
            "data_format": data_format}
    W.add("tf_conv", name, args, x=x, w=w, xl=layout, wl=wl, yl=layout, dims=dims,
          xshape=xshape, wshape=wshape, bias=bias, y=y)


def family_rejection(W, rng, name, kind):
    """Calls PyTorch rejects; the binding must reject them too."""
    dims = rng.randint(1, 3)
    N, cin, cout, groups = 1, 2, 2, 1
    K = per_dim(rng, dims, 2, 3)
    I = per_dim(rng, dims, 4, MAX_SIZE[dims] + 2)
    x = W.rand([N, cin] + I)
    if kind == "same_strided":
        w = W.rand([cout, cin] + K)
        S = [1] * dims
        S[rng.randrange(dims)] = 2
        fe, args = "torch_conv_mode", {"stride": lst(S), "padding": "same", "dilation": "-",
                                       "groups": 1}
        call = lambda: CONV[dims](x, w, stride=S, padding="same")
    elif kind == "negative_padding":
        w = W.rand([cout, cin] + K)
        P = [1] * dims
        P[rng.randrange(dims)] = -1
        fe, args = "torch_conv", {"stride": "-", "padding": lst(P), "dilation": "-", "groups": 1}
        call = lambda: CONV[dims](x, w, padding=P)
    elif kind == "negative_padding_transposed":
        w = W.rand([cin, cout] + K)
        P = [0] * dims
        P[rng.randrange(dims)] = -2
        fe = "torch_conv_transpose"
        args = {"stride": "2", "padding": lst(P), "output_padding": "-", "groups": 1,
                "dilation": "-"}
        call = lambda: CONV_T[dims](x, w, stride=2, padding=P)
    elif kind == "output_padding":
        w = W.rand([cin, cout] + K)
        S = per_dim(rng, dims, 1, 3)
        D = per_dim(rng, dims, 1, 2)
        OP = [0] * dims
        t = rng.randrange(dims)
        OP[t] = max(S[t], D[t]) + rng.randint(0, 1)
        fe = "torch_conv_transpose"
        args = {"stride": lst(S), "padding": "1", "output_padding": lst(OP), "groups": 1,
                "dilation": lst(D)}
        call = lambda: CONV_T[dims](x, w, stride=S, padding=1, output_padding=OP, dilation=D)
    elif kind == "output_padding_convolution":
        w = W.rand([cin, cout] + K)
        S = [2] * dims
        OP = [2] * dims
        fe = "torch_convolution"
        args = {"stride": lst(S), "padding": "0", "dilation": "1", "transposed": 1,
                "output_padding": lst(OP), "groups": 1}
        call = lambda: torch.convolution(x, w, None, S, [0], [1], True, OP, 1)
    elif kind == "groups":
        w = W.rand([3, 1] + K)
        fe, args = "torch_conv", {"stride": "-", "padding": "-", "dilation": "-", "groups": 3}
        call = lambda: CONV[dims](x, w, groups=3)
    elif kind == "empty_output":
        w = W.rand([cout, cin] + [i + 2 for i in I])
        fe, args = "torch_conv", {"stride": "-", "padding": "-", "dilation": "-", "groups": 1}
        call = lambda: CONV[dims](x, w)
    else:
        raise ValueError(kind)
    try:
        call()
    except RuntimeError as e:
        W.add(fe, name, args, x=x, w=w, xl="cf", wl="cf", yl="cf", dims=dims, expect="error",
              err=str(e))
        return
    raise AssertionError(f"{name}: PyTorch accepted a call recorded as rejected")


# ---- the plan --------------------------------------------------------------------------------


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(SEED)
    W = Writer(rng)

    def make(count, prefix, fn, *args, **kw):
        made = 0
        tries = 0
        while made < count:
            tries += 1
            assert tries < 200 * count, prefix
            try:
                fn(W, rng, f"{prefix}_{made:02d}", *args, **kw)
                made += 1
            except Skip:
                pass

    for dims in (1, 2, 3):
        make(20, f"conv{dims}d", family_torch_conv, dims)
        make(15, f"conv{dims}d_same", family_torch_conv_mode, dims, "same", layouts=dims == 2)
        make(5, f"conv{dims}d_valid", family_torch_conv_mode, dims, "valid")
        make(20, f"conv_transpose{dims}d", family_torch_conv_transpose, dims)
        make(8, f"convolution{dims}d", family_torch_convolution, dims)
        make(3, f"_convolution{dims}d", family_torch_convolution, dims, underscore=True)
        make(14, f"pad_conv{dims}d", family_pad_conv, dims)
        make(16, f"onnx_conv{dims}d", family_onnx_conv, dims)
        make(8, f"onnx_conv_transpose{dims}d", family_onnx_conv_transpose, dims)
        make(5, f"tf_valid{dims}d", family_tf_conv, dims, "VALID")
        make(8, f"tf_same{dims}d", family_tf_conv, dims, "SAME")
        make(6, f"conv{dims}d_channels_last", family_torch_conv, dims, layouts=True)
        make(4, f"conv_transpose{dims}d_channels_last", family_torch_conv_transpose, dims,
             layouts=True)
        make(4, f"conv{dims}d_epilogue", family_torch_conv, dims, epi=True, with_bias=True)
        make(3, f"conv_transpose{dims}d_epilogue", family_torch_conv_transpose, dims, epi=True)
        for dt in ("f16", "bf16"):
            make(2, f"conv{dims}d_{dt}", family_torch_conv, dims, dtype=dt, epi=True,
                 layouts=True)
            make(1, f"conv_transpose{dims}d_{dt}", family_torch_conv_transpose, dims, dtype=dt)
    make(4, "conv1d_unbatched", family_torch_conv, 1, unbatched=True)
    make(3, "conv2d_unbatched", family_torch_conv, 2, unbatched=True)
    make(8, "tf_causal1d", family_tf_conv, 1, "CAUSAL")
    make(8, "causal1d", family_causal, 1)
    make(4, "causal2d", family_causal, 2)
    make(8, "causal3d", family_causal, 3)
    for kind, n in (("same_strided", 3), ("negative_padding", 3),
                    ("negative_padding_transposed", 2), ("output_padding", 4),
                    ("output_padding_convolution", 1), ("groups", 2), ("empty_output", 2)):
        make(n, f"reject_{kind}", family_rejection, kind)

    with open(os.path.join(here, "cases.txt"), "w") as f:
        f.write("# generated by gen_golden.py (seed %d, torch %s); format in its docstring\n"
                % (SEED, torch.__version__.split("+")[0]))
        f.write("\n".join(W.lines) + "\n")
    with open(os.path.join(here, "inputs.f32"), "wb") as f:
        f.write(struct.pack(f"<{len(W.inputs)}f", *W.inputs))
    with open(os.path.join(here, "expected.f64"), "wb") as f:
        f.write(struct.pack(f"<{len(W.expected)}d", *W.expected))
    total = len(W.lines)
    print(f"{total} cases; " + ", ".join(f"{k}: {v}" for k, v in sorted(W.count.items())))


if __name__ == "__main__":
    main()
