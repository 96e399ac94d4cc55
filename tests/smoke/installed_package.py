"""Smoke test of an installed convnd package, run from outside the repository (CI's step 3b, after
`pip install ./python` from a clean clone): the package imports from site-packages, not from the
source tree, carries its own libconvnd.so.0, and a convolution through torch.ops.convnd equals
torch's on the emulated device."""
import os
import sys

import torch
import torch.nn.functional as F

import convnd

pkg = os.path.dirname(os.path.realpath(convnd.__file__))
repo = sys.argv[1] if len(sys.argv) > 1 else None
if repo and pkg.startswith(os.path.realpath(repo) + os.sep):
    sys.exit(f"smoke: convnd was imported from the source tree ({pkg}), not the installed package")
if not pkg.startswith(os.path.realpath(sys.prefix) + os.sep):
    sys.exit(f"smoke: convnd was imported from {pkg}, not from this environment ({sys.prefix})")
for shipped in ("libconvnd.so.0", "convnd-selftest"):
    if not os.path.isfile(os.path.join(pkg, shipped)):
        sys.exit(f"smoke: {pkg} has no {shipped}")

torch.manual_seed(0)
x = torch.randn(2, 3, 9, 11)
w = torch.randn(4, 3, 3, 2)
b = torch.randn(4)
y = convnd.torch.conv2d(x, w, b, padding="same")
want = F.conv2d(F.pad(x, (0, 1, 1, 1)), w, b)  # "same" with an even kernel: the extra pad after
err = (y - want).abs().max().item()
scale = want.abs().max().item()
if y.shape != want.shape or not err <= 1e-5 * scale:
    sys.exit(f"smoke: conv2d shape {tuple(y.shape)} vs {tuple(want.shape)}, max error {err:g}")
plan = convnd.plan_name(x, w, b, stride=[1, 1], dilation=[1, 1], padding_before=[1, 0],
                        padding_after=[1, 1])
print(f"smoke: convnd on {convnd.device_name()} from {pkg}: conv2d 'same' equals torch "
      f"(max error {err:.2g} at scale {scale:.2g}; {plan})")
