"""Converts a small PyTorch model to convnd and prints the schedule each convolution got.

    pip install --no-build-isolation ./python    # once, from the repository root
    python3 examples/convert_model.py

CPU tensors run on convnd's emulated device (the kernels' CUDA source executed on the CPU), so
this works without a GPU; with one, pass --cuda.
"""
import argparse
import copy

import torch
import torch.nn as nn

import convnd


def model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 7, stride=2, padding=3),        # stem
        nn.ReLU(),
        nn.Conv2d(16, 16, 3, padding="same", groups=16),  # depthwise
        nn.Conv2d(16, 32, 1),                             # pointwise
        nn.ReLU(),
        nn.ConvTranspose2d(32, 8, 4, stride=2, padding=1),  # 2x upsample
    ).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuda", action="store_true", help="run on the GPU (CUDA tensors)")
    args = ap.parse_args()
    device = "cuda" if args.cuda else "cpu"
    torch.manual_seed(0)
    original = model().to(device)
    converted = convnd.nn.convert(copy.deepcopy(original))
    x = torch.randn(1, 3, 32, 32, device=device)

    print(f"convnd device for CPU tensors: emulated; process device: {convnd.device_name()}")
    for name, schedule in convnd.nn.schedules(converted, x):
        layer = converted.get_submodule(name)
        print(f"  layer {name:>2} {type(layer).__name__:<16} -> {schedule}")
    with torch.no_grad():
        diff = (converted(x) - original(x)).abs().max().item()
    print(f"max |convnd - torch| = {diff:.2e}")


if __name__ == "__main__":
    main()
