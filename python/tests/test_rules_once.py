"""Every framework rule once, in C: the functional front-ends (convnd.torch, convnd.nn) take
their padding, stride and dilation from the C binding (convnd_bind_torch_geometry, through the
extension), and the data gradient's P1 from convnd_shape_rule.h. Fed the same random cases, the
front-ends equal PyTorch's own functions (shapes and values), refuse what ATen refuses with
ATen's words, and the data gradient's P1 lands exactly on x's size."""
import random

import pytest
import torch
import torch.nn.functional as F

import convnd
import convnd.torch as cf
from convnd import _C
from conftest import SEED

CASES = 60


def _case(rng, dims):
    k = [rng.randint(1, 4) for _ in range(dims)]
    d = [rng.randint(1, 3) for _ in range(dims)]
    size = [rng.randint(dd * (kk - 1) + 1, dd * (kk - 1) + 6) for kk, dd in zip(k, d)]
    return k, d, size


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_padding_modes_equal_torch(dims):
    rng = random.Random(SEED + dims)
    fn, ref = [cf.conv1d, cf.conv2d, cf.conv3d][dims - 1], [F.conv1d, F.conv2d, F.conv3d][dims - 1]
    for _ in range(CASES // 3):
        k, d, size = _case(rng, dims)
        g = rng.choice([1, 2])
        x = torch.randn([2, 2 * g] + size)
        w = torch.randn([3 * g, 2] + k)
        padding = rng.choice(["same", "valid", rng.randint(0, 2),
                              [rng.randint(0, 2) for _ in range(dims)]])
        stride = 1 if padding == "same" else rng.choice([1, 2, [rng.randint(1, 3)] * dims])
        got = fn(x, w, None, stride, padding, d, g)
        want = ref(x, w, None, stride, padding, d, g)
        assert got.shape == want.shape, (k, d, size, padding, stride)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_transposed_output_padding_equals_torch(dims):
    rng = random.Random(SEED + 10 + dims)
    fn = [cf.conv_transpose1d, cf.conv_transpose2d, cf.conv_transpose3d][dims - 1]
    ref = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][dims - 1]
    for _ in range(CASES // 3):
        k, d, size = _case(rng, dims)
        s = [rng.randint(1, 3) for _ in range(dims)]
        op = [rng.randint(0, max(si, di) - 1) for si, di in zip(s, d)]
        p = [rng.randint(0, 2) for _ in range(dims)]
        x = torch.randn([1, 4] + [max(1, n // 2) for n in size])
        w = torch.randn([4, 3] + k)
        try:
            want = ref(x, w, None, s, p, op, 1, d)
        except RuntimeError:
            continue  # a negative output size: both refuse
        if want.numel() == 0:  # torch returns an empty output, convnd refuses O < 1 by name
            with pytest.raises(ValueError, match="< 1"):
                fn(x, w, None, s, p, op, 1, d)
            continue
        got = fn(x, w, None, s, p, op, 1, d)
        assert got.shape == want.shape, (k, d, s, p, op)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_causal_and_module_padding_are_the_c_rule():
    rng = random.Random(SEED + 20)
    for _ in range(CASES // 3):
        k, d, size = _case(rng, 2)
        x, w = torch.randn([1, 2] + size), torch.randn([3, 2] + k)
        got = cf.causal_conv(x, w, None, 1, 1, d)
        want = F.conv2d(F.pad(x, (1, 1, d[0] * (k[0] - 1), 0)), w, None, 1, 0, d)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        m = torch.nn.Conv2d(2, 3, k, dilation=d, padding="same")
        pb, pa = convnd.nn.explicit_padding(m)
        assert (pb, pa) == ([t // 2 for t in (d[0] * (k[0] - 1), d[1] * (k[1] - 1))],
                            [t - t // 2 for t in (d[0] * (k[0] - 1), d[1] * (k[1] - 1))])


BAD = [
    (lambda x, w: cf.conv2d(x, w, stride=2, padding="same"),
     "padding='same' is not supported for strided convolutions (stride=[2, 2])"),
    (lambda x, w: cf.conv2d(x, w, padding=-1), "negative padding is not supported"),
    (lambda x, w: cf.conv2d(x, w, dilation=0), "non-positive dilation is not supported"),
    (lambda x, w: cf.conv2d(x, w, stride=(1, 2, 3)),
     "expected stride to be a single integer value or a list of 2 values"),
    (lambda x, w: cf.conv_transpose2d(x, w.transpose(0, 1), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_arguments_raise_the_c_bindings_message(i):
    x, w = torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3)
    call, words = BAD[i]
    with pytest.raises(ValueError, match="") as e:
        call(x, w)
    assert words in str(e.value), str(e.value)


def test_torch_geometry_is_the_binding():
    """The extension's torch_geometry is convnd_bind_torch_geometry: broadcast, per-dim lists,
    and every rule kind."""
    assert _C.torch_geometry(2, [4, 3, 3, 4], [1], [], [2, 1], []) == ([1, 1], [2, 1], [2, 1],
                                                                       [2, 2])
    assert _C.torch_geometry(3, [4, 3, 3, 4], [], [1], [2], []) == ([1, 1], [2, 2], [4, 1],
                                                                    [0, 1])
    assert _C.torch_geometry(4, [4, 3, 3], [2], [1], [], [1]) == ([2], [1], [1], [0])
    with pytest.raises(ValueError, match="rule=7"):
        _C.torch_geometry(7, [4, 3, 3], [], [], [], [])


def test_dgrad_pad_after_lands_on_x():
    """The data gradient of a forward conv is the transposed conv with P1 from the C rule: its
    output has exactly x's size, on every random case (the floor's dropped rows included)."""
    rng = random.Random(SEED + 30)
    for _ in range(CASES):
        k, d, size = _case(rng, 1)
        s, p0, p1 = rng.randint(1, 4), rng.randint(-1, 2), rng.randint(-1, 3)
        span = size[0] + p0 + p1 - (d[0] * (k[0] - 1) + 1)
        if span < 0:
            continue
        o = span // s + 1
        pa = _C.dgrad_pad_after(size, [o], k, [s], d, [p0])
        assert (o - 1) * s + d[0] * (k[0] - 1) + 1 - p0 - pa[0] == size[0]
        x = torch.randn([1, 2] + size, requires_grad=True)
        w = torch.randn([3, 2] + k)
        y = convnd.conv_nd(x, w, stride=[s], dilation=d, padding_before=[p0],
                           padding_after=[p1])
        (dx,) = torch.autograd.grad(y.sum(), x)
        xr = x.detach().clone().requires_grad_(True)
        yr = F.conv1d(F.pad(xr, (p0, p1)), w, None, s, 0, d)
        (want,) = torch.autograd.grad(yr.sum(), xr)
        torch.testing.assert_close(dx, want, rtol=1e-4, atol=1e-4)
