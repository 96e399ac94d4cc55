"""CUDA tensors (run by bench/device-check.sh on a lent GPU; skipped without one): results
against torch.nn.functional, PyTorch's current stream, CUDA-graph capture and replay, and CPU
and CUDA tensors mixed in one process."""
import pytest
import torch
import torch.nn.functional as F

import convnd
import convnd.torch as cf
from conftest import SEED

torch.backends.cudnn.allow_tf32 = False  # the references in exact f32

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or "GPU" not in convnd.device_name() and "sm_" not in
    convnd.device_name(), reason="needs a CUDA device and convnd built with CUDA")


def test_cuda_matches_torch_and_cpu_in_one_process():
    torch.manual_seed(SEED)
    x, w, b = torch.randn(2, 8, 12, 10), torch.randn(16, 4, 3, 3), torch.randn(16)
    on_cpu = cf.conv2d(x, w, b, padding="same", groups=2)  # emulated device
    on_gpu = cf.conv2d(x.cuda(), w.cuda(), b.cuda(), padding="same", groups=2)
    ref = F.conv2d(x.double(), w.double(), b.double(), padding="same", groups=2)
    torch.testing.assert_close(on_gpu.cpu().double(), ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(on_cpu.double(), ref, rtol=1e-5, atol=1e-5)


def test_runs_on_current_stream():
    torch.manual_seed(SEED)
    x, w = torch.randn(4, 16, 32, 32, device="cuda"), torch.randn(16, 16, 3, 3, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = cf.conv2d(x, w, padding=1)
        ref = F.conv2d(x, w, padding=1)
    s.synchronize()
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-4)


def test_cuda_graph_capture_and_replay():
    torch.manual_seed(SEED)
    x = torch.randn(2, 8, 16, 16, device="cuda", dtype=torch.float16)
    w = torch.randn(8, 1, 5, 5, device="cuda", dtype=torch.float16)
    cf.conv2d(x, w, padding=2, groups=8)  # warm up outside capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = cf.conv2d(x, w, padding=2, groups=8)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    ref = F.conv2d(x.float(), w.float(), padding=2, groups=8)
    torch.testing.assert_close(y.float(), ref, rtol=2e-2, atol=2e-2)


def test_cuda_backward_matches_torch():
    torch.manual_seed(SEED)
    x = torch.randn(2, 4, 9, 7, device="cuda", requires_grad=True)
    w = torch.randn(6, 2, 3, 2, device="cuda", requires_grad=True)
    xr, wr = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    cf.conv2d(x, w, stride=2, padding=1, groups=2).square().sum().backward()
    F.conv2d(xr, wr, stride=2, padding=1, groups=2).square().sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(w.grad, wr.grad, rtol=1e-4, atol=1e-3)
