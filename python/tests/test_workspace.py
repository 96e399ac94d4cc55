"""The workspace the op hands to conv_nd starts at a multiple of CONVND_WORKSPACE_ALIGNMENT
wherever PyTorch's allocator puts it (its CPU allocator aligns to 64 bytes only: issue 34).

The op's test hook starts each raw allocation at a chosen offset modulo 256 (0, 64, 128 or 192:
every offset PyTorch's CPU allocator can return), whatever address the allocator returns; _last_workspace says
where the raw allocation began, where the aligned one began, how many bytes conv_nd got and how
many workspaces were handed out, so each case proves it had a workspace at that offset."""
import copy

import pytest
import torch
import torch.nn.functional as F

import convnd
from conftest import SEED

OP = torch.ops.convnd.conv_nd.default
WGRAD = torch.ops.convnd.conv_nd_wgrad.default
ALIGN = convnd._C.workspace_alignment
OFFSETS = range(0, ALIGN, 64)


@pytest.fixture
def workspace_at():
    def at(k):
        convnd._C._set_workspace_offset(k)
    yield at
    convnd._C._set_workspace_offset(-1)


def last_workspace_at(raw_offsets):
    raw, start, nbytes, _ = convnd._C._last_workspace()
    assert nbytes > 0, "this case ran without a workspace: it tests nothing"
    assert start % ALIGN == 0 and raw <= start < raw + ALIGN
    raw_offsets.add(raw % ALIGN)


def test_alignment_is_the_c_librarys_constant():
    assert ALIGN == 256


# (name, x shape, w shape, stride, pb, pa, mode, schedule): cublas_im2col stages the unfolded
# input in the workspace (forward and transposed); wgrad_splitk keeps f32 partials there.
CASES = [
    ("fwd2d_im2col", [2, 5, 9, 7], [6, 5, 3, 3], [1, 2], [1, 0], [2, 1], 0, "cublas_im2col"),
    ("convT2d_im2col", [2, 6, 4, 5], [6, 3, 3, 2], [2, 1], [1, 0], [0, 1], 1, "cublas_im2col"),
]
WGRAD_CASES = [
    ("wgrad_fwd2d", [3, 4, 10, 9], [6, 4, 3, 3], [1, 1], [1, 1], [1, 1], 0, "wgrad_splitk"),
    ("wgrad_convT1d", [2, 6, 7], [6, 4, 3], [2], [1], [0], 1, "wgrad_splitk"),
]


def reference(x, w, stride, pb, pa, mode):
    """torch's own conv in float64 for these (asymmetric) paddings."""
    x, w = x.double(), w.double()
    dims = x.dim() - 2
    if mode == 0:
        pad = [p for d in reversed(range(dims)) for p in (pb[d], pa[d])]
        conv = (F.conv1d, F.conv2d, F.conv3d)[dims - 1]
        return conv(F.pad(x, pad), w, stride=stride)
    convT = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[dims - 1]
    full = convT(x, w, stride=stride)
    return full[(slice(None), slice(None)) +
                tuple(slice(pb[d], full.shape[2 + d] - pa[d]) for d in range(dims))]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv_nd_runs_at_every_workspace_offset(case, workspace_at):
    _, xs, ws, stride, pb, pa, mode, schedule = case
    torch.manual_seed(SEED)
    offsets = set()
    for k in list(OFFSETS) * 2:  # each offset twice, on fresh inputs
        workspace_at(k)
        x, w = torch.randn(xs), torch.randn(ws)
        y = OP(x, w, None, None, stride, [1] * len(stride), pb, pa, 1, mode, 1.0, 0.0, 0,
               schedule)
        last_workspace_at(offsets)
        torch.testing.assert_close(y.double(), reference(x, w, stride, pb, pa, mode),
                                   rtol=1e-5, atol=1e-5)
    assert offsets == set(OFFSETS)


@pytest.mark.parametrize("case", WGRAD_CASES, ids=[c[0] for c in WGRAD_CASES])
def test_conv_nd_wgrad_runs_at_every_workspace_offset(case, workspace_at):
    _, xs, ws, stride, pb, pa, mode, schedule = case
    torch.manual_seed(SEED)
    dims = len(stride)
    offsets = set()
    for k in list(OFFSETS) * 2:
        workspace_at(k)
        x = torch.randn(xs, dtype=torch.float64)
        w = torch.randn(ws, dtype=torch.float64, requires_grad=True)
        y_ref = reference(x, w, stride, pb, pa, mode)
        dy = torch.randn(y_ref.shape, dtype=torch.float64)
        (dw_ref,) = torch.autograd.grad(y_ref, w, dy)
        dw = WGRAD(x.float(), dy.float(), ws, None, stride, [1] * dims, pb, pa, 1, mode, 1.0,
                   0.0, schedule)
        last_workspace_at(offsets)
        torch.testing.assert_close(dw.double(), dw_ref, rtol=1e-5, atol=1e-4)
    assert offsets == set(OFFSETS)


def test_training_steps_with_the_allocator_placing_the_workspace(workspace_at):
    """Forward and backward through autograd (the data gradient runs the transposed mode, the
    weight gradient conv_nd_wgrad) many times: at each forced offset, and with small tensors
    allocated first so that PyTorch's allocator itself puts the workspace elsewhere each time."""
    torch.manual_seed(SEED)
    # 16 -> 16 channels at 16x16: the planner gives the weight gradient a split-K schedule,
    # whose partial sums live in the workspace
    ref = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1),
                              torch.nn.Conv2d(16, 8, 3, stride=2, padding=1))
    conv = convnd.nn.convert(copy.deepcopy(ref))
    keep = []
    for step in range(16):
        workspace_at(list(OFFSETS)[step % len(OFFSETS)] if step < 8 else -1)
        keep.append(torch.empty(1 + 37 * step, dtype=torch.uint8))  # moves the next allocations
        x = torch.randn(2, 16, 16, 16)
        conv.zero_grad()
        ref.zero_grad()
        before = convnd._C._last_workspace()[3]
        conv(x).square().sum().backward()
        assert convnd._C._last_workspace()[3] > before, "no call of this step had a workspace"
        ref(x).square().sum().backward()
        for p, q in zip(conv.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-4,
                                       atol=1e-4 * q.grad.abs().max().item())
