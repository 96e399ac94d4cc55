#!/usr/bin/env python3
"""Golden fixtures of views (SPEC §11), a prefix input and a state output (SPEC §12) and halo
inputs (SPEC §14), from the copy-based PyTorch code users write today, in float64
(tests/test_golden_views.c replays them).

Four kinds of case:
  cache    the causal feature cache: X = torch.cat([cache, x], dim=time), F.pad, F.conv3d as
           Wan 2.1's CausalConv3d does it (time padding before only, the cached frames taking the
           place of that much of it), Wan's stride-2 time downsampling over cat(cache[-1:], x),
           and causal conv1d (depthwise and dense) over cat(prefix, x); the new cache is X's last
           T_s positions (zeros in front when X is shorter: SPEC §12).
  slice_y  concat-free output: buf[:, c0:c0+C_out] = F.conv{1,2}d(...) on a bigger random buf
           (channels-first and channels-last, a residual z read from a slice of another buffer,
           `buf[:, c0:c1] += conv` in place, the DenseNet pattern with x a slice of the same
           buffer); expected is the whole buffer.
  slice_x  x read from a view: a channel slice (both layouts) and rows with a padded pitch.
  halo     one shard of a spatially sharded conv (SPEC §14) as the field writes it today:
           F.conv(F.pad(torch.cat([prefix, shard, suffix], dim=axis), pads)) with the shard's
           own (possibly negative: cropping) padding; x is a view of the shard's rows of the whole
           input, the halo rows copies of its neighbours' rows.

Inputs are drawn in float64, rounded to the case's dtype and stored as float32 (exact); PyTorch
computes in float64 on the rounded values.

cases.txt: one case per line, `name key=value ...`:
  kind        cache | slice_y | slice_x
  problem     convnd's problem in tests/support/test_problem_text.h syntax with ';' for spaces.
              A view's strides are PyTorch's .stride() of the view in [N, C, spatial...] order,
              its extent the buffer's elements from the view's storage offset.
  causal_pad  (cache cases the causal-cache binding expresses) the padding of the non-time dims,
              for convnd_bind_causal_conv + convnd_bind_causal_cache; "-" none (conv1d)
  xo xn xat   x's buffer: offset into inputs.f32, elements, x's storage offset in it;
              xo=y: x is a view of y's buffer
  po          x_prefix (packed in x's layout, numel as the problem describes it); -1 none
  fo          (halo cases) x_suffix, as po; absent or -1: none
  wo bo       w (in w's layout) and bias; -1 none
  zo zn zat   z's buffer as x's; zo=y: z is y (in place); zo=-1: no z
  yo yn yat   y's buffer: its contents before the call in inputs.f32 (-1: a fresh tensor, which
              the test poisons), elements, y's storage offset
  eo          offset into expected.f64 of the whole y buffer after the call (yn values)
  so          offset into expected.f64 of the state (numel as described); -1 none
Buffers are stored in their memory order. Run: python3 tests/golden/views/gen_golden_views.py
(writes cases.txt, inputs.f32 and expected.f64 next to it).
"""
import os

import torch
import torch.nn.functional as F

SEED = 20261201
HERE = os.path.dirname(os.path.abspath(__file__))
DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
ACT = {"none": lambda v: v, "relu": torch.relu, "silu": F.silu}
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


# ---- the user code being replaced ------------------------------------------------------------


def wan_causal_conv3d(x, weight, bias, stride, padding, cache_x=None):
    """Wan 2.1 CausalConv3d.forward (wan/modules/vae.py): causal time padding 2*padding[0]
    before only; cached frames are concatenated in front and replace that much of it."""
    _padding = [padding[2], padding[2], padding[1], padding[1], 2 * padding[0], 0]
    if cache_x is not None and _padding[4] > 0:
        x = torch.cat([cache_x, x], dim=2)
        _padding[4] -= cache_x.shape[2]
    x = F.pad(x, _padding)
    return F.conv3d(x, weight, bias, stride)


def wan_new_cache(x, old_cache, cache_t=2):
    """Wan's feat_cache update: the chunk's last CACHE_T frames, topped up from the old cache."""
    cache_x = x[:, :, -cache_t:].clone()
    if cache_x.shape[2] < 2 and old_cache is not None:
        cache_x = torch.cat([old_cache[:, :, -1].unsqueeze(2), cache_x], dim=2)
    return cache_x


def causal_conv1d_cat(x, weight, bias, prefix, dilation, groups):
    """A causal conv1d over cat(prefix, x): zero padding for the taps the prefix does not cover."""
    pad = dilation * (weight.shape[-1] - 1) - (prefix.shape[-1] if prefix is not None else 0)
    xx = torch.cat([prefix, x], dim=-1) if prefix is not None else x
    return F.conv1d(F.pad(xx, (pad, 0)), weight, bias, dilation=dilation, groups=groups)


def last_positions(X, n):
    """SPEC §12's state: X's last n positions along dim 2, zeros before X's start."""
    zeros = torch.zeros(*X.shape[:2], n, *X.shape[3:], dtype=X.dtype)
    return torch.cat([zeros, X], dim=2)[:, :, -n:] if n else X[:, :, :0]


# ---- fixture files ---------------------------------------------------------------------------


def memory(t, layout):
    """A logical [N, C, spatial...] tensor (or weight) flattened in layout's memory order."""
    if layout == "cl":
        t = t.permute(0, *range(2, t.dim()), 1)
    return t.contiguous().reshape(-1)


def strides_text(view, buf):
    """`strides:extent` of a view of buf (PyTorch's strides; extent from its storage offset)."""
    assert view.untyped_storage().data_ptr() == buf.untyped_storage().data_ptr()
    return ",".join(map(str, view.stride())) + f":{buf.numel() - view.storage_offset()}"


class Fixtures:
    def __init__(self):
        self.gen = torch.Generator().manual_seed(SEED)
        self.inputs, self.expected, self.lines = [], [], []
        self.n_in = self.n_ex = 0

    def rand(self, shape, dtype):
        """Uniform in [-1, 1), rounded to dtype, as float64."""
        t = torch.rand(*shape, generator=self.gen, dtype=torch.float64) * 2 - 1
        return t.to(DTYPE[dtype]).to(torch.float64)

    def tensor(self, shape, dtype, layout):
        """A fresh random [N, C, spatial...] tensor stored in layout: (storage, logical view)."""
        if layout == "cf":
            buf = self.rand(shape, dtype)
            return buf, buf
        buf = self.rand([shape[0], *shape[2:], shape[1]], dtype)
        return buf, buf.permute(0, buf.dim() - 1, *range(1, buf.dim() - 1))

    def put_in(self, flat):
        if flat is None:
            return -1
        off = self.n_in
        f32 = flat.reshape(-1).to(torch.float32)
        assert torch.equal(f32.to(torch.float64), flat.reshape(-1)), "not exact in float32"
        self.inputs.append(f32)
        self.n_in += f32.numel()
        return off

    def put_out(self, flat):
        if flat is None:
            return -1
        off = self.n_ex
        self.expected.append(flat.reshape(-1).to(torch.float64))
        self.n_ex += flat.numel()
        return off

    def add(self, name, kind, problem, **fields):
        text = ";".join(problem)
        assert " " not in text
        rest = " ".join(f"{k}={v}" for k, v in fields.items())
        self.lines.append(f"{name} kind={kind} problem={text} {rest}")

    def write(self):
        with open(os.path.join(HERE, "cases.txt"), "w") as fh:
            fh.write(f"# generated by gen_golden_views.py (seed {SEED}, "
                     f"torch {torch.__version__})\n")
            fh.write("\n".join(self.lines) + "\n")
        torch.cat(self.inputs).numpy().astype("<f4").tofile(os.path.join(HERE, "inputs.f32"))
        torch.cat(self.expected).numpy().astype("<f8").tofile(os.path.join(HERE, "expected.f64"))


def lst(v):
    return ",".join(str(int(a)) for a in v)


def problem_text(*, dims, N, Ci, Co, g=1, I, K, S=None, D=None, P0=None, P1=None, dtype, xl="cf",
                 wl="cf", yl="cf", bias=False, z=False, beta=None, act="none", axis=None, pre=0,
                 st=0, suf=0, xs=None, ys=None, zs=None):
    t = ["fwd", f"{dims}d", f"N={N}", f"Ci={Ci}", f"Co={Co}", f"g={g}", f"I={lst(I)}",
         f"K={lst(K)}"]
    for key, v in (("S", S), ("D", D), ("P0", P0), ("P1", P1)):
        if v is not None:
            t.append(f"{key}={lst(v)}")
    t += [dtype, f"x={xl}", f"w={wl}", f"y={yl}"]
    t += ["bias"] if bias else []
    t += ["z", f"beta={beta}"] if z else []
    t += [f"act={act}"] if act != "none" else []
    if axis is not None:
        t += [f"axis={axis}", f"pre={pre}", f"st={st}"]
        t += [f"suf={suf}"] if suf else []
    for key, v in (("xs", xs), ("ys", ys), ("zs", zs)):
        if v is not None:
            t.append(f"{key}={v}")
    return t


# ---- cat + conv: the causal feature cache ------------------------------------------------------


def cache_case(fx, name, *, dims, N, Ci, Co, groups=1, T, spatial=(), K, dtype, layout, bias=True,
               act="none", cache=0, state=2, wan_padding=None, dilation=1, downsample=False,
               whole=None, t0=0):
    """One chunk: x of T steps, `cache` cached steps in front, the next chunk's `state` out.
    3-D: Wan's CausalConv3d with padding wan_padding (or its stride-2 time downsampling over
    cat(cache[-1:], x), no padding); 1-D: a causal conv1d with dilation. whole: x is the time
    slice [t0, t0+T) of a whole sequence of that many steps (a view, as Wan's chunk loop reads
    it) and the cache a copy of the cache steps before it, as the previous chunk left them."""
    if whole:
        x_buf, seq = fx.tensor([N, Ci, whole, *spatial], dtype, layout)
        x = seq[:, :, t0:t0 + T]
        prefix = seq[:, :, t0 - cache:t0].clone() if cache else None
        xs = strides_text(x, x_buf)
    else:
        x_buf, x = fx.tensor([N, Ci, T, *spatial], dtype, layout)
        prefix = fx.tensor([N, Ci, cache, *spatial], dtype, layout)[1] if cache else None
        xs = None
    w_buf, w = fx.tensor([Co, Ci // groups, *K], dtype, layout)
    b = fx.rand([Co], dtype) if bias else None
    X = torch.cat([prefix, x], dim=2) if cache else x
    stride = [1] * dims
    if dims == 3 and downsample:  # Resample('downsample3d').time_conv(cat([cache[-1:], x], 2))
        stride[0] = 2
        y = wan_causal_conv3d(X, w, b, stride, (0, 0, 0))
        pads, causal_pad = [0, 0, 0], None
    elif dims == 3:
        y = wan_causal_conv3d(x, w, b, stride, wan_padding, prefix)
        pads = [2 * wan_padding[0] - (cache if wan_padding[0] > 0 else 0), *wan_padding[1:]]
        assert cache == 0 or wan_padding[0] > 0, "Wan concatenates no cache without time padding"
        causal_pad = list(wan_padding[1:])
        ours = last_positions(X, state)
        wan = wan_new_cache(x, prefix)  # Wan's cache: ours, less the zeros before X's start
        assert torch.equal(ours[:, :, state - wan.shape[2]:], wan)
    else:
        y = causal_conv1d_cat(x, w, b, prefix, dilation, groups)
        pads, causal_pad = [dilation * (K[0] - 1) - cache], "-"
    y = ACT[act](y)
    st = last_positions(X, state)
    yn = y.numel()
    prob = problem_text(dims=dims, N=N, Ci=Ci, Co=Co, g=groups, I=[T, *spatial], K=K, S=stride,
                        D=[dilation] + [1] * (dims - 1), P0=pads, P1=[0, *pads[1:]], dtype=dtype,
                        xl=layout, wl=layout, yl=layout, bias=bias, act=act, axis=0, pre=cache,
                        st=state, xs=xs)
    x_mem = x_buf.reshape(-1) if whole else memory(x, layout)
    fields = dict(xo=fx.put_in(x_mem), xn=x_mem.numel(), xat=x.storage_offset(),
                  po=fx.put_in(memory(prefix, layout) if cache else None),
                  wo=fx.put_in(memory(w, layout)), bo=fx.put_in(b), zo=-1, zn=0, zat=0, yo=-1,
                  yn=yn, yat=0, eo=fx.put_out(memory(y, layout)),
                  so=fx.put_out(memory(st, layout) if state else None))
    if causal_pad is not None:
        fields["causal_pad"] = causal_pad if causal_pad == "-" else lst(causal_pad)
    fx.add(name, "cache", prob, **fields)


def cache_cases(fx):
    # Wan's 3x3x3 CausalConv3d(padding=1): 2 cached frames, the next 2 out
    cache_case(fx, "wan3d_k333_cache2", dims=3, N=1, Ci=3, Co=4, T=3, spatial=(4, 5), K=(3, 3, 3),
               dtype="f32", layout="cf", cache=2, state=2, wan_padding=(1, 1, 1))
    cache_case(fx, "wan3d_k333_cache2_cl", dims=3, N=2, Ci=4, Co=3, T=2, spatial=(3, 4),
               K=(3, 3, 3), dtype="f16", layout="cl", cache=2, state=2, wan_padding=(1, 1, 1))
    # Wan's second chunk after a one-frame first one: one cached frame, one frame of zero padding
    cache_case(fx, "wan3d_k333_cache1", dims=3, N=1, Ci=2, Co=3, T=1, spatial=(3, 4),
               K=(3, 3, 3), dtype="f32", layout="cf", cache=1, state=2, wan_padding=(1, 1, 1))
    # Resample's time_conv (3x1x1, padding (1,0,0)) and a 1x3x3 conv (no time padding: no cat)
    cache_case(fx, "wan3d_k311_cache2", dims=3, N=1, Ci=4, Co=6, T=2, spatial=(3, 3),
               K=(3, 1, 1), dtype="bf16", layout="cf", cache=2, state=2, wan_padding=(1, 0, 0))
    cache_case(fx, "wan3d_k133_state_only", dims=3, N=1, Ci=3, Co=3, T=3, spatial=(4, 4),
               K=(1, 3, 3), dtype="f32", layout="cl", cache=0, state=2, wan_padding=(0, 1, 1))
    # Wan's encoder time downsampling: stride 2 over cat(cache[-1:], x), new cache x[:, :, -1:]
    cache_case(fx, "wan3d_downsample_s2", dims=3, N=1, Ci=3, Co=3, T=4, spatial=(2, 3),
               K=(3, 1, 1), dtype="f32", layout="cf", cache=1, state=1, downsample=True)
    # a chunk read in place from the whole video (frames [5, 9) of 9), its cache as left before
    cache_case(fx, "wan3d_chunk_of_video", dims=3, N=1, Ci=3, Co=2, T=4, spatial=(3, 4),
               K=(3, 3, 3), dtype="f32", layout="cf", cache=2, state=2, wan_padding=(1, 1, 1),
               whole=9, t0=5)
    # causal conv1d: a prefix of width-1 positions in, the last width-1 out
    cache_case(fx, "conv1d_dw_w4", dims=1, N=2, Ci=6, Co=6, groups=6, T=9, K=(4,), dtype="f32",
               layout="cf", act="silu", cache=3, state=3)
    cache_case(fx, "conv1d_dw_w4_cl", dims=1, N=2, Ci=6, Co=6, groups=6, T=9, K=(4,),
               dtype="bf16", layout="cl", act="silu", cache=3, state=3)
    cache_case(fx, "conv1d_dense_k3_d2_cl", dims=1, N=1, Ci=5, Co=3, T=7, K=(3,), dtype="f16",
               layout="cl", cache=4, state=4, dilation=2)
    cache_case(fx, "conv1d_dense_k3_d2", dims=1, N=2, Ci=4, Co=3, T=6, K=(3,), dtype="f32",
               layout="cf", cache=4, state=4, dilation=2)
    # chunked prefill: steps [6, 13) of a (B, L, D) sequence of 16, read in place
    cache_case(fx, "conv1d_dw_chunk_of_sequence_cl", dims=1, N=2, Ci=4, Co=4, groups=4, T=7,
               K=(4,), dtype="bf16", layout="cl", act="silu", cache=3, state=3, whole=16, t0=6)
    # the first chunk (zero padding, a chunk shorter than the state) and a one-token chunk
    cache_case(fx, "conv1d_dw_first_chunk", dims=1, N=1, Ci=4, Co=4, groups=4, T=2, K=(4,),
               dtype="f32", layout="cf", cache=0, state=3)
    cache_case(fx, "conv1d_dw_one_token_cl", dims=1, N=2, Ci=5, Co=5, groups=5, T=1, K=(4,),
               dtype="f32", layout="cl", act="silu", cache=3, state=3)


# ---- views: slice writes and reads -------------------------------------------------------------


def view_case(fx, name, kind, *, dims, dtype, x, x_buf, w, b, y_buf, y_view, xl="cf", wl="cf",
              yl="cf", padding, stride=None, z=None, z_buf=None, beta=None, act="none",
              y_before=None, x_in_y=False, z_in_y=False, x_view=None, problem_y=None):
    """Records one case whose result y_buf (the whole buffer after the user's code) PyTorch
    computed; y_view is y's view of it, y_before its contents before (None: a fresh tensor)."""
    N, Ci = x.shape[:2]
    Co = w.shape[0]
    I, K = list(x.shape[2:]), list(w.shape[2:])
    S = stride or [1] * dims
    xs = strides_text(x, y_buf if x_in_y else x_buf) if x_view else None
    ys = strides_text(y_view, y_buf) if problem_y == "view" else None
    zs = strides_text(z, z_buf) if z is not None and not z_in_y else None
    prob = problem_text(dims=dims, N=N, Ci=Ci, Co=Co, I=I, K=K, S=S, P0=padding, P1=padding,
                        dtype=dtype, xl=xl, wl=wl, yl=yl, bias=b is not None, z=z is not None,
                        beta=beta, act=act, xs=xs, ys=ys, zs=zs)
    fields = dict(xo="y" if x_in_y else fx.put_in(x_buf.reshape(-1)),
                  xn=(y_buf if x_in_y else x_buf).numel(), xat=x.storage_offset(), po=-1,
                  wo=fx.put_in(memory(w, wl)), bo=fx.put_in(b))
    if z is None:
        fields.update(zo=-1, zn=0, zat=0)
    elif z_in_y:
        fields.update(zo="y", zn=y_buf.numel(), zat=z.storage_offset())
    else:
        fields.update(zo=fx.put_in(z_buf.reshape(-1)), zn=z_buf.numel(), zat=z.storage_offset())
    fields.update(yo=fx.put_in(y_before.reshape(-1) if y_before is not None else None),
                  yn=y_buf.numel(), yat=y_view.storage_offset(), eo=fx.put_out(y_buf.reshape(-1)),
                  so=-1)
    fx.add(name, kind, prob, **fields)


def slice_y_cases(fx):
    # buf[:, 3:7] = F.conv2d(x, w, b, padding=1): channels [3, 7) of a [2, 10, 5, 6] buffer
    _, x = fx.tensor([2, 3, 5, 6], "f32", "cf")
    _, w = fx.tensor([4, 3, 3, 3], "f32", "cf")
    b = fx.rand([4], "f32")
    buf = fx.rand([2, 10, 5, 6], "f32")
    out = buf.clone()
    out[:, 3:7] = F.conv2d(x, w, b, padding=1)
    view_case(fx, "y_channel_slice_cf", "slice_y", dims=2, dtype="f32", x=x, x_buf=x, w=w, b=b,
              y_buf=out, y_view=out[:, 3:7], padding=[1, 1], y_before=buf, problem_y="view")

    # the same into a channels-last [2, 10, 5, 6] buffer (memory [2, 5, 6, 10]), x and w cl too
    x_buf, x = fx.tensor([2, 3, 5, 6], "bf16", "cl")
    _, w = fx.tensor([4, 3, 3, 3], "bf16", "cl")
    b = fx.rand([4], "bf16")
    buf_mem, buf = fx.tensor([2, 10, 5, 6], "bf16", "cl")
    out_mem = buf_mem.clone()
    out = out_mem.permute(0, 3, 1, 2)
    out[:, 3:7] = F.conv2d(x, w, b, padding=1)
    view_case(fx, "y_channel_slice_cl", "slice_y", dims=2, dtype="bf16", x=x, x_buf=x_buf, w=w,
              b=b, y_buf=out_mem, y_view=out[:, 3:7], xl="cl", wl="cl", yl="cl", padding=[1, 1],
              y_before=buf_mem, problem_y="view")

    # bias and a residual read from a slice of another buffer, ReLU, into a slice
    _, x = fx.tensor([2, 3, 5, 6], "f16", "cf")
    _, w = fx.tensor([4, 3, 3, 3], "f16", "cf")
    b = fx.rand([4], "f16")
    zbuf = fx.rand([2, 6, 5, 6], "f16")
    buf = fx.rand([2, 9, 5, 6], "f16")
    out = buf.clone()
    out[:, 2:6] = torch.relu(F.conv2d(x, w, b, padding=1) + 0.5 * zbuf[:, 1:5])
    view_case(fx, "y_slice_z_slice_relu", "slice_y", dims=2, dtype="f16", x=x, x_buf=x, w=w, b=b,
              y_buf=out, y_view=out[:, 2:6], padding=[1, 1], z=zbuf[:, 1:5], z_buf=zbuf,
              beta=0.5, act="relu", y_before=buf, problem_y="view")

    # buf[:, 4:8] += F.conv2d(x, w, b): the residual is the slice itself (z == y)
    _, x = fx.tensor([1, 3, 4, 5], "f32", "cf")
    _, w = fx.tensor([4, 3, 3, 3], "f32", "cf")
    b = fx.rand([4], "f32")
    buf = fx.rand([1, 8, 4, 5], "f32")
    out = buf.clone()
    out[:, 4:8] += F.conv2d(x, w, b, padding=1)
    view_case(fx, "y_slice_in_place_residual", "slice_y", dims=2, dtype="f32", x=x, x_buf=x, w=w,
              b=b, y_buf=out, y_view=out[:, 4:8], padding=[1, 1], z=out[:, 4:8], beta=1.0,
              z_in_y=True, y_before=buf, problem_y="view")

    # a strided conv1d into channels [1, 4) of a [2, 7, 5] buffer
    _, x = fx.tensor([2, 4, 10], "bf16", "cf")
    _, w = fx.tensor([3, 4, 3], "bf16", "cf")
    buf = fx.rand([2, 7, 5], "bf16")
    out = buf.clone()
    out[:, 1:4] = F.conv1d(x, w, stride=2, padding=1)
    view_case(fx, "conv1d_strided_slice", "slice_y", dims=1, dtype="bf16", x=x, x_buf=x, w=w,
              b=None, y_buf=out, y_view=out[:, 1:4], padding=[1], stride=[2], y_before=buf,
              problem_y="view")

    # DenseNet without cat: buf[:, 3:7] = F.conv2d(buf[:, 0:3], ...) within one [1, 7, 5, 6]
    _, w = fx.tensor([4, 3, 3, 3], "f32", "cf")
    b = fx.rand([4], "f32")
    buf = fx.rand([1, 7, 5, 6], "f32")
    out = buf.clone()
    out[:, 3:7] = F.conv2d(out[:, 0:3], w, b, padding=1)
    view_case(fx, "densenet_x_and_y_one_buffer", "slice_y", dims=2, dtype="f32", x=out[:, 0:3],
              x_buf=None, w=w, b=b, y_buf=out, y_view=out[:, 3:7], padding=[1, 1],
              y_before=buf, x_in_y=True, x_view=True, problem_y="view")


def slice_x_cases(fx):
    # F.conv2d(big[:, 2:5], w, b, stride=2, padding=1)
    big = fx.rand([2, 7, 6, 7], "f32")
    _, w = fx.tensor([4, 3, 3, 3], "f32", "cf")
    b = fx.rand([4], "f32")
    y = F.conv2d(big[:, 2:5], w, b, stride=2, padding=1)
    view_case(fx, "x_channel_slice_cf", "slice_x", dims=2, dtype="f32", x=big[:, 2:5], x_buf=big,
              w=w, b=b, y_buf=y, y_view=y, padding=[1, 1], stride=[2, 2], x_view=True)

    # rows padded to a pitch of 8: x = storage[..., :6]
    storage = fx.rand([2, 3, 5, 8], "bf16")
    _, w = fx.tensor([4, 3, 3, 3], "bf16", "cf")
    y = F.conv2d(storage[..., :6], w, padding=1)
    view_case(fx, "x_row_pitch", "slice_x", dims=2, dtype="bf16", x=storage[..., :6],
              x_buf=storage, w=w, b=None, y_buf=y, y_view=y, padding=[1, 1], x_view=True)

    # channels [2, 5) of a channels-last [2, 7, 5, 6] tensor, y channels-last
    big_mem, big = fx.tensor([2, 7, 5, 6], "f16", "cl")
    _, w = fx.tensor([4, 3, 3, 2], "f16", "cl")
    b = fx.rand([4], "f16")
    y = F.conv2d(big[:, 2:5], w, b, padding=1)  # K 3x2, padding 1: O = 5x7
    y_mem = y.permute(0, 2, 3, 1).contiguous()
    view_case(fx, "x_channel_slice_cl", "slice_x", dims=2, dtype="f16", x=big[:, 2:5],
              x_buf=big_mem, w=w, b=b, y_buf=y_mem, y_view=y_mem, xl="cl", wl="cl", yl="cl",
              padding=[1, 1], x_view=True)


# ---- cat + conv: one shard of a spatially sharded conv (SPEC §14) ------------------------------


def halo_case(fx, name, *, dims, N, Ci, Co, I, K, axis, begin, end, pre, suf, P0, P1, S=None,
              D=None, dtype, layout, bias=True, act="none"):
    """The shard holding rows [begin, end) of the whole input along spatial dim `axis`, its
    neighbours' `pre` rows before and `suf` rows after concatenated on, then padded by the shard's
    own P0/P1 (negative crops, as F.pad does) and convolved: the copy-based code convnd's suffix
    and prefix replace. x is a view of the shard's rows of the whole input."""
    S = S or [1] * dims
    D = D or [1] * dims
    x_buf, whole = fx.tensor([N, Ci, *I], dtype, layout)
    w_buf, w = fx.tensor([Co, Ci, *K], dtype, layout)
    b = fx.rand([Co], dtype) if bias else None
    a = 2 + axis
    x = whole.narrow(a, begin, end - begin)
    prefix = whole.narrow(a, begin - pre, pre).clone() if pre else None
    suffix = whole.narrow(a, end, suf).clone() if suf else None
    X = torch.cat([t for t in (prefix, x, suffix) if t is not None], dim=a)
    pads = []
    for d in reversed(range(dims)):  # F.pad lists the last dim first
        pads += [P0[d], P1[d]]
    y = ACT[act](CONV[dims](F.pad(X, pads), w, b, stride=S, dilation=D))
    shard_I = list(I)
    shard_I[axis] = end - begin
    prob = problem_text(dims=dims, N=N, Ci=Ci, Co=Co, I=shard_I, K=K, S=S, D=D, P0=P0, P1=P1,
                        dtype=dtype, xl=layout, wl=layout, yl=layout, bias=bias, act=act,
                        axis=axis, pre=pre, st=0, suf=suf, xs=strides_text(x, x_buf))
    fields = dict(xo=fx.put_in(x_buf.reshape(-1)), xn=x_buf.numel(), xat=x.storage_offset(),
                  po=fx.put_in(memory(prefix, layout) if pre else None),
                  fo=fx.put_in(memory(suffix, layout) if suf else None),
                  wo=fx.put_in(memory(w, layout)), bo=fx.put_in(b), zo=-1, zn=0, zat=0, yo=-1,
                  yn=y.numel(), yat=0, eo=fx.put_out(memory(y, layout)), so=-1)
    fx.add(name, "halo", prob, **fields)


def halo_cases(fx):
    # rank 1 of 3 along H of a 3x3 'same' conv: the rows below come from rank 2 (SPEC §14's
    # identity needs no prefix; a prefix is read too, as a neighbour-exchange code would send)
    halo_case(fx, "conv2d_h_middle_shard", dims=2, N=2, Ci=3, Co=4, I=(9, 6), K=(3, 3), axis=0,
              begin=3, end=6, pre=1, suf=1, P0=(0, 1), P1=(0, 1), dtype="f32", layout="cf")
    # the last shard along W, stride 2 and dilation 2, the original right padding and a crop
    halo_case(fx, "conv2d_w_last_shard_s2_d2_cl", dims=2, N=1, Ci=4, Co=3, I=(5, 12), K=(3, 3),
              axis=1, begin=7, end=12, pre=3, suf=0, P0=(1, -1), P1=(1, 2), S=(1, 2), D=(1, 2),
              dtype="bf16", layout="cl")
    # a shard smaller than its halo: a suffix of 4 rows reaching past the next shard
    halo_case(fx, "conv1d_tiny_shard_dilated", dims=1, N=2, Ci=2, Co=2, I=(12,), K=(3,), axis=0,
              begin=2, end=3, pre=0, suf=4, P0=(0,), P1=(0,), D=(2,), dtype="f32", layout="cf",
              act="silu")
    # a VAE decoder's 3x3x3 conv3d split along H, channels-last f16
    halo_case(fx, "conv3d_h_first_shard_cl", dims=3, N=1, Ci=8, Co=8, I=(3, 8, 5),
              K=(3, 3, 3), axis=1, begin=0, end=4, pre=0, suf=1, P0=(1, 1, 1), P1=(1, 0, 1),
              dtype="f16", layout="cl")


def main():
    fx = Fixtures()
    cache_cases(fx)
    slice_y_cases(fx)
    slice_x_cases(fx)
    halo_cases(fx)  # last: the cases before keep their random draws
    fx.write()
    print(f"{len(fx.lines)} cases, {fx.n_in} input and {fx.n_ex} expected values")


if __name__ == "__main__":
    main()
