"""torch.ops.convnd.conv_nd_halo's autograd: y = act(conv(X) + bias) with X = cat(prefix, x,
suffix) along one spatial axis (SPEC §12, §14), every input's gradient against PyTorch's autograd
of the same function in float64; opcheck (schema, fake tensors, autograd registration)."""
import pytest
import torch
import torch.nn.functional as F

import convnd  # noqa: F401  (registers the ops)
from conftest import SEED

OP = torch.ops.convnd.conv_nd_halo.default
ACTS = {0: lambda t: t, 1: F.relu, 2: F.silu, 3: F.gelu}

# name: (x shape, w shape, axis, prefix rows, suffix rows, stride, dilation, pb, pa, groups,
#        activation, bias, channels_last, broadcast prefix)
CASES = {
    "2d_both_halos_silu": ((2, 4, 5, 6), (6, 4, 3, 3), 0, 2, 1, (1, 1), (1, 1), (0, 1), (0, 1),
                           1, 2, True, False, False),
    "3d_causal_prefix_cl": ((1, 4, 3, 4, 5), (4, 4, 3, 3, 3), 0, 2, 0, (1, 1, 1), (1, 1, 1),
                            (0, 1, 1), (0, 1, 1), 1, 0, True, True, False),
    "3d_first_frame_broadcast": ((1, 3, 4, 4, 4), (5, 3, 3, 1, 3), 0, 2, 0, (1, 1, 1),
                                 (1, 1, 1), (0, 0, 1), (0, 0, 1), 1, 1, False, False, True),
    "1d_suffix_stride_dilation_crop": ((2, 6, 9), (4, 3, 3), 0, 0, 3, (2,), (2,), (1,), (-1,),
                                       2, 0, True, False, False),
    "2d_axis_w_groups": ((1, 4, 5, 6), (4, 2, 3, 3), 1, 1, 2, (1, 2), (1, 1), (1, 0), (1, 0), 2,
                         3, False, False, False),
}


def make(case, requires_grad=True):
    xs, ws, axis, npre, nsuf, s, d, pb, pa, g, act, has_bias, cl, bcast = case
    d_ax = 2 + axis

    def tensor(shape):
        t = torch.randn(shape)
        if cl:
            t = t.to(memory_format=torch.channels_last if t.dim() == 4 else
                     torch.channels_last_3d) if t.dim() >= 4 else t
        return t.requires_grad_(requires_grad)

    x, w = tensor(xs), tensor(ws)
    b = torch.randn(ws[0]).requires_grad_(requires_grad) if has_bias else None

    def halo(n):
        if n == 0:
            return None
        shape = list(xs)
        shape[d_ax] = 1 if bcast else n
        t = tensor(shape)
        return t.expand(*[n if i == d_ax else -1 for i in range(len(xs))]) if bcast else t

    prefix, suffix = halo(npre), halo(nsuf)
    return (x, w, b, prefix, suffix, axis, list(s), list(d), list(pb), list(pa), g, act, None)


def reference(x, w, b, prefix, suffix, axis, s, d, pb, pa, g, act):
    whole = torch.cat([t for t in (prefix, x, suffix) if t is not None], 2 + axis)
    dims = x.dim() - 2
    pad = []
    for i in reversed(range(dims)):
        pad += [pb[i], pa[i]]
    conv = (F.conv1d, F.conv2d, F.conv3d)[dims - 1]
    return ACTS[act](conv(F.pad(whole, pad), w, b, tuple(s), 0, tuple(d), g))


@pytest.mark.parametrize("name", sorted(CASES))
def test_halo_gradients_match_torch_float64(name):
    torch.manual_seed(SEED)
    args = make(CASES[name])
    leaves = [t for t in args[:5] if t is not None]
    y = OP(*args)
    gy = torch.randn(y.shape)
    grads = torch.autograd.grad(y, leaves, gy)
    ref_in = [t.detach().double().requires_grad_() if t is not None else None for t in args[:5]]
    y_ref = reference(*ref_in, *args[5:12])
    torch.testing.assert_close(y.double(), y_ref.detach(), rtol=0,
                               atol=1e-5 * (y_ref.abs().max().item() + 1))
    ref_grads = torch.autograd.grad(y_ref, [t for t in ref_in if t is not None], gy.double())
    for got, ref in zip(grads, ref_grads):
        assert got.shape == ref.shape
        scale = ref.abs().max().item() + 1.0
        assert (got.double() - ref).abs().max().item() <= y.numel() * 2 ** -24 * 64 * scale, \
            f"{name}, CONVND_TEST_SEED={SEED}"


def test_halo_gradients_of_a_broadcast_prefix_sum_over_its_copies():
    """A first frame replicated as a stride-0 prefix: its one frame's gradient is the sum of the
    copies' gradients plus its own as x's first frame (the adapters' replicate padding)."""
    torch.manual_seed(SEED)
    x = torch.randn(1, 3, 4, 5, 5, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, 3)
    y = OP(x, w, None, x[:, :, :1].expand(-1, -1, 2, -1, -1), None, 0, [1] * 3, [1] * 3,
           [0, 1, 1], [0, 1, 1], 1, 0, None)
    gy = torch.randn(y.shape)
    (gx,) = torch.autograd.grad(y, [x], gy)
    xr = x.detach().double().requires_grad_()
    yr = F.conv3d(F.pad(torch.cat([xr[:, :, :1]] * 2 + [xr], 2), (1, 1, 1, 1)), w.double())
    (gr,) = torch.autograd.grad(yr, [xr], gy.double())
    torch.testing.assert_close(gx.double(), gr, rtol=0, atol=1e-4 * gr.abs().max().item())


@pytest.mark.parametrize("name", ["2d_both_halos_silu", "1d_suffix_stride_dilation_crop"])
def test_halo_opcheck(name):
    """Schema, fake tensors, the autograd registration, AOT dispatch with static and dynamic
    shapes (the Meta kernel's symbolic output size: the C rule over x's extent plus the halos')."""
    torch.manual_seed(SEED)
    torch.library.opcheck(OP, make(CASES[name]))


def test_halo_op_under_torch_compile_with_dynamic_frame_counts():
    """A Wan-style causal step (the cache as the prefix) compiled once with dynamic shapes runs
    chunks of 3 and 5 frames with caches of 2 and 1, equal to eager."""
    torch.manual_seed(SEED)
    w, b = torch.randn(4, 3, 3, 3, 3), torch.randn(4)

    def step(x, cache):
        return torch.ops.convnd.conv_nd_halo(x, w, b, cache, None, 0, [1, 1, 1], [1, 1, 1],
                                             [2 - cache.shape[2], 1, 1], [0, 1, 1], 1, 2, None)

    compiled = torch.compile(step, fullgraph=True, dynamic=True)
    for frames, cached in ((3, 2), (5, 1), (4, 2)):
        x, cache = torch.randn(1, 3, frames, 6, 7), torch.randn(1, 3, cached, 6, 7)
        torch.testing.assert_close(compiled(x, cache), step(x, cache), rtol=0, atol=0)
