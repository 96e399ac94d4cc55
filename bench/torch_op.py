"""Times torch.ops.convnd.conv_nd end to end from Python against torch.nn.functional on the same
tensors, and the op's host overhead per call (a 1-element problem: what remains is the Python
front-end, the dispatcher, problem building, planning and the launch).

    python3 bench/torch_op.py [--device cuda|cpu] [--iters N]

On CUDA the times are GPU times measured with CUDA events around N back-to-back calls. On CPU,
convnd runs on its emulated device: those times are CPU emulation, labelled EMULATED, and say
nothing about GPU speed; only the host-overhead row is meaningful there.
"""
import argparse
import time

import torch
import torch.nn.functional as F

import convnd.torch as cf

# (name, x shape, w shape, kwargs) -- small enough for the emulated device.
PROBLEMS = [
    ("conv2d 3x3 same", (8, 64, 56, 56), (64, 64, 3, 3), dict(padding="same")),
    ("conv2d depthwise 7x7", (8, 128, 28, 28), (128, 1, 7, 7), dict(padding=3, groups=128)),
    ("conv1d causal k4", (8, 512, 1024), (512, 1, 4), dict(causal=True, groups=512)),
    ("conv3d 3x3x3", (2, 32, 8, 32, 32), (32, 32, 3, 3, 3), dict(padding=1)),
    ("conv_transpose2d s2", (8, 64, 28, 28), (64, 32, 4, 4), dict(stride=2, padding=1,
                                                                  transpose=True)),
]
EMU_PROBLEMS = [("conv2d 3x3 same", (1, 8, 12, 12), (8, 8, 3, 3), dict(padding="same"))]


def calls(x, w, kw):
    kw = dict(kw)
    dims = x.dim() - 2
    if kw.pop("causal", False):
        g = kw.get("groups", 1)
        ref_x = F.pad(x, (w.shape[-1] - 1, 0))
        return (lambda: cf.causal_conv(x, w, groups=g),
                lambda: getattr(F, f"conv{dims}d")(ref_x, w, groups=g))
    if kw.pop("transpose", False):
        return (lambda: getattr(cf, f"conv_transpose{dims}d")(x, w, **kw),
                lambda: getattr(F, f"conv_transpose{dims}d")(x, w, **kw))
    return (lambda: getattr(cf, f"conv{dims}d")(x, w, **kw),
            lambda: getattr(F, f"conv{dims}d")(x, w, **kw))


def timed(fn, iters, cuda):
    fn()
    if cuda:
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1e3 / iters
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t) * 1e6 / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    a = ap.parse_args()
    cuda = a.device == "cuda"
    dtype = getattr(torch, a.dtype)
    label = "GPU" if cuda else "EMULATED (CPU emulation, not GPU timings)"
    print(f"# convnd op from Python vs torch.nn.functional, {a.dtype}, {label}")
    print("| problem | convnd us | torch us | torch/convnd |")
    print("|---|---|---|---|")
    for name, xs, ws, kw in (PROBLEMS if cuda else EMU_PROBLEMS):
        x = torch.randn(xs, device=a.device, dtype=dtype)
        w = torch.randn(ws, device=a.device, dtype=dtype)
        ours, theirs = calls(x, w, kw)
        t_ours = timed(ours, a.iters, cuda)
        t_theirs = timed(theirs, a.iters, cuda) if (cuda or dtype == torch.float32) else float("nan")
        print(f"| {name} | {t_ours:.1f} | {t_theirs:.1f} | {t_theirs / t_ours:.2f} |")
    # Host overhead: wall time per call of a 1-element problem, no synchronization in the loop.
    x = torch.randn(1, 1, 1, 1, device=a.device, dtype=dtype)
    w = torch.randn(1, 1, 1, 1, device=a.device, dtype=dtype)
    n = 200
    for name, fn in (("convnd", lambda: cf.conv2d(x, w)), ("torch", lambda: F.conv2d(x, w))):
        if name == "torch" and not cuda and dtype != torch.float32:
            continue
        fn()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if cuda:
            torch.cuda.synchronize()
        print(f"host overhead per call ({name}, 1-element problem, {a.device}): "
              f"{(time.perf_counter() - t) * 1e6 / n:.1f} us")


if __name__ == "__main__":
    main()
