"""Small real architectures with random weights, converted with convnd.nn.convert: the output
(and the gradients) match the original PyTorch model."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import convnd
from conftest import SEED


class BasicBlock(nn.Module):
    """torchvision's ResNet BasicBlock (3x3, 3x3, optional strided 1x1 downsample)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + idt)


def resnet():
    return nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                         BasicBlock(8, 8, 1), BasicBlock(8, 16, 2), BasicBlock(16, 16, 1),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5)).eval()


class CausalConv3d(nn.Module):
    """A causal video-VAE convolution: time padded on the left only (replicating the first
    frame, as causal VAEs do, through F.pad), space padded symmetrically by the conv."""

    def __init__(self, cin, cout, k=3, stride=1):
        super().__init__()
        self.time_pad = k - 1
        self.conv = nn.Conv3d(cin, cout, k, stride=stride, padding=(0, k // 2, k // 2))

    def forward(self, x):
        return self.conv(F.pad(x, (0, 0, 0, 0, self.time_pad, 0), mode="replicate"))


class VAEDecoderBlock(nn.Module):
    """GroupNorm + SiLU + causal 3-D convs with a residual, then a spatial 2x upsample by a
    transposed conv and a depthwise temporal conv."""

    def __init__(self, c):
        super().__init__()
        self.norm1 = nn.GroupNorm(2, c)
        self.conv1 = CausalConv3d(c, c)
        self.norm2 = nn.GroupNorm(2, c)
        self.conv2 = CausalConv3d(c, c)
        self.up = nn.ConvTranspose3d(c, c // 2, (1, 2, 2), stride=(1, 2, 2))
        self.temporal = nn.Conv1d(c // 2, c // 2, 3, padding=1, groups=c // 2)

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        y = self.up(x + h)
        n, c, t, hh, ww = y.shape
        seq = y.permute(0, 3, 4, 1, 2).reshape(n * hh * ww, c, t)
        seq = self.temporal(seq)
        return seq.reshape(n, hh, ww, c, t).permute(0, 3, 4, 1, 2)


def compare(model, x, tol):
    torch.manual_seed(SEED)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    ref = copy.deepcopy(model)
    params_before = [p for p in model.parameters()]
    convnd.nn.convert(model)
    # In place: same parameter objects, every conv now a convnd module.
    assert all(a is b for a, b in zip(params_before, model.parameters()))
    convs = [m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d,
                                                           nn.ConvTranspose3d))]
    assert convs and all(type(m).__module__ == "convnd.nn" for m in convs)

    with pytest.MonkeyPatch.context() as mp:  # proof that convnd runs every conv
        mp.setenv("CONVND_SCHEDULE", "no_such_schedule")
        with pytest.raises(ValueError, match="no_such_schedule"):
            model(x)

    xr = x.clone().requires_grad_()
    xc = x.clone().requires_grad_()
    y_ref, y = ref(xr), model(xc)
    torch.testing.assert_close(y, y_ref, rtol=tol, atol=tol)
    y_ref.square().sum().backward()
    y.square().sum().backward()
    torch.testing.assert_close(xc.grad, xr.grad, rtol=tol, atol=tol * y_ref.abs().max().item())
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        scale = q.grad.abs().max().item() + 1e-6
        assert (p.grad - q.grad).abs().max().item() <= tol * scale, name
    return model


def test_resnet_blocks_converted_match():
    torch.manual_seed(SEED)
    model = resnet()
    compare(model, torch.randn(2, 3, 20, 20), 1e-4)


def test_causal_video_vae_block_converted_matches():
    torch.manual_seed(SEED)
    model = VAEDecoderBlock(4)
    compare(model, torch.randn(1, 4, 3, 6, 5), 1e-4)


def test_convert_reports_schedules():
    torch.manual_seed(SEED)
    model = convnd.nn.convert(resnet())
    found = convnd.nn.schedules(model, torch.randn(1, 3, 16, 16))
    assert len(found) == sum(1 for m in model.modules() if isinstance(m, nn.Conv2d))
    names = {s.split(":")[0] for _, s in found}
    valid = {convnd._C.schedule_names()[i] for i in range(len(convnd._C.schedule_names()))}
    assert names <= valid, names
