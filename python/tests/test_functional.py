"""Every front-end against torch.nn.functional on random problems: convnd in float32, float16
and bfloat16 against PyTorch in float64 on the same (rounded) inputs."""
import pytest
import torch
import torch.nn.functional as F

import convnd
import convnd.torch as cf
from conftest import SEED, assert_close_to_reference, rng

CASES = 12


def random_forward(r, dims):
    groups = r.choice([1, 1, 2, 3])
    cin, cout = groups * r.randint(1, 3), groups * r.randint(1, 3)
    if r.random() < 0.2:  # depthwise with a channel multiplier
        groups = cin = r.randint(1, 4)
        cout = cin * r.randint(1, 2)
    k = [r.randint(1, 4) for _ in range(dims)]
    stride = [r.randint(1, 3) for _ in range(dims)]
    dilation = [r.randint(1, 2) for _ in range(dims)]
    eff = [dilation[i] * (k[i] - 1) + 1 for i in range(dims)]
    size = [r.randint(eff[i], max(eff[i], 9 if dims < 3 else 5)) for i in range(dims)]
    padding = r.choice(["int", "tuple", "same", "valid"])
    if padding == "same":
        stride = [1] * dims
        pad = "same"
    elif padding == "valid":
        pad = "valid"
    elif padding == "int":
        pad = r.randint(0, 2)
    else:
        pad = tuple(r.randint(0, 2) for _ in range(dims))
    return dict(n=r.randint(1, 2), cin=cin, cout=cout, groups=groups, k=k, stride=stride,
                dilation=dilation, size=size, padding=pad, bias=r.random() < 0.6,
                channels_last=dims > 1 and r.random() < 0.4)


def make(shape, dtype, channels_last=False):
    t = torch.randn(shape, dtype=torch.float64).to(dtype)
    if channels_last:
        t = t.to(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t


def check(fn, ref_fn, x, w, b, reduction, dtype, **kw):
    got = fn(x, w, b, **kw)
    ref = ref_fn(x.double(), w.double(), None if b is None else b.double(), **kw)
    ref_abs = ref_fn(x.double().abs(), w.double().abs(), None if b is None else b.double().abs(),
                     **kw)
    assert got.dtype == dtype and got.shape == ref.shape
    assert_close_to_reference(got, ref, ref_abs, reduction, dtype)
    return got


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_matches_torch(dims, dtype, emu_order):
    fn, ref_fn = getattr(cf, f"conv{dims}d"), getattr(F, f"conv{dims}d")
    r = rng("conv", dims, str(dtype), emu_order)
    for _ in range(CASES if dtype == torch.float32 else CASES // 2):
        c = random_forward(r, dims)
        x = make([c["n"], c["cin"]] + c["size"], dtype, c["channels_last"])
        w = make([c["cout"], c["cin"] // c["groups"]] + c["k"], dtype, c["channels_last"])
        b = make([c["cout"]], dtype) if c["bias"] else None
        reduction = c["cin"] // c["groups"] * int(torch.tensor(c["k"]).prod())
        y = check(fn, ref_fn, x, w, b, reduction, dtype, stride=c["stride"], padding=c["padding"],
                  dilation=c["dilation"], groups=c["groups"])
        if c["channels_last"]:  # ATen's rule: channels-last in, channels-last out
            fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
            assert y.is_contiguous(memory_format=fmt)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_transpose_matches_torch(dims, dtype, emu_order):
    fn, ref_fn = getattr(cf, f"conv_transpose{dims}d"), getattr(F, f"conv_transpose{dims}d")
    r = rng("convT", dims, str(dtype), emu_order)
    for _ in range(CASES if dtype == torch.float32 else CASES // 2):
        groups = r.choice([1, 1, 2])
        cin, cout = groups * r.randint(1, 3), groups * r.randint(1, 3)
        k = [r.randint(1, 4) for _ in range(dims)]
        stride = [r.randint(1, 3) for _ in range(dims)]
        dilation = [r.randint(1, 2) for _ in range(dims)]
        padding = [r.randint(0, dilation[i] * (k[i] - 1)) for i in range(dims)]
        output_padding = [r.randint(0, max(stride[i], dilation[i]) - 1) for i in range(dims)]
        size = [r.randint(1, 6 if dims < 3 else 4) for _ in range(dims)]
        x = make([r.randint(1, 2), cin] + size, dtype)
        w = make([cin, cout // groups] + k, dtype)
        b = make([cout], dtype) if r.random() < 0.5 else None
        try:
            ref_ok = ref_fn(x.double(), w.double(), None, stride, padding, output_padding,
                            groups, dilation).numel() > 0
        except RuntimeError:
            ref_ok = False
        if not ref_ok:
            continue
        reduction = cin // groups * int(torch.tensor(k).prod())
        check(fn, ref_fn, x, w, b, reduction, dtype, stride=stride, padding=padding,
              output_padding=output_padding, groups=groups, dilation=dilation)


def test_unbatched_input():
    x, w = torch.randn(3, 10), torch.randn(4, 3, 3)
    got, ref = cf.conv1d(x, w, padding=1), F.conv1d(x.double(), w.double(), padding=1)
    assert got.shape == ref.shape
    torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_padded_equals_pad_then_conv(dims, emu_order):
    r = rng("padded", dims, emu_order)
    for _ in range(6):
        k = [r.randint(1, 4) for _ in range(dims)]
        pb = [r.randint(-1, 3) for _ in range(dims)]
        pa = [r.randint(-1, 3) for _ in range(dims)]
        lo = [max(2, k[i] - pb[i] - pa[i]) for i in range(dims)]  # padded size >= kernel
        size = [r.randint(lo[i], lo[i] + (4 if dims < 3 else 2)) for i in range(dims)]
        x, w = make([2, 3] + size, torch.float32), make([4, 3] + k, torch.float32)
        pads = [p for i in reversed(range(dims)) for p in (pb[i], pa[i])]
        ref = getattr(F, f"conv{dims}d")(F.pad(x.double(), pads), w.double())
        ref_abs = getattr(F, f"conv{dims}d")(F.pad(x.double().abs(), pads), w.double().abs())
        got = cf.conv_padded(x, w, padding_before=pb, padding_after=pa)
        assert_close_to_reference(got, ref, ref_abs, 3 * int(torch.tensor(k).prod()),
                                  torch.float32)


@pytest.mark.parametrize("dims", [1, 3])
def test_causal_conv_is_left_padded(dims, emu_order):
    x = make([2, 4] + [7] * dims, torch.float32)
    w = make([6, 2] + [3] * dims, torch.float32)
    b = make([6], torch.float32)
    got = cf.causal_conv(x, w, b, dilation=2, padding=1, groups=2)
    # time: 2*(3-1) zeros before, none after; other dims: 1 on each side.
    pads = [1, 1] * (dims - 1) + [4, 0]
    conv = getattr(F, f"conv{dims}d")
    ref = conv(F.pad(x.double(), pads), w.double(), b.double(), dilation=2, groups=2)
    ref_abs = conv(F.pad(x.double().abs(), pads), w.double().abs(), b.double().abs(), dilation=2,
                   groups=2)
    assert got.shape == ref.shape
    assert_close_to_reference(got, ref, ref_abs, 2 * 3 ** dims, torch.float32)


def test_epilogue_alpha_bias_z_activation(emu_order):
    x, w = make([2, 4, 6, 5], torch.float32), make([6, 4, 3, 3], torch.float32)
    b, z = make([6], torch.float32), make([2, 6, 6, 5], torch.float32)
    for act, ref_act in [("relu", F.relu), ("silu", F.silu), ("gelu", F.gelu), ("none", None)]:
        got = convnd.conv_nd(x, w, b, z, stride=[1, 1], dilation=[1, 1], padding_before=[1, 1],
                             padding_after=[1, 1], alpha=0.5, beta=2.0, activation=act)
        pre = 0.5 * F.conv2d(x.double(), w.double(), padding=1) + b.double()[:, None, None] \
            + 2.0 * z.double()
        ref = ref_act(pre) if ref_act else pre
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
