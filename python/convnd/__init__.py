"""convnd for PyTorch: torch.ops.convnd.conv_nd and its weight gradient conv_nd_wgrad,
PyTorch-compatible front-ends (convnd.torch) and drop-in modules (convnd.nn). CPU tensors run
on convnd's emulated device, CUDA tensors on the GPU on PyTorch's current stream."""
# Loads libtorch before the extension. Bound as _torch: a package attribute named `torch` would
# shadow the convnd.torch submodule in `from . import torch`.
import torch as _torch  # noqa: F401

from . import _C  # registers torch.ops.convnd.conv_nd and conv_nd_wgrad
from . import _ops
from ._ops import (ACTIVATIONS, FORWARD, TRANSPOSED, conv_nd, conv_nd_wgrad, plan_name,
                   wgrad_plan_name)
from . import torch as functional  # noqa: F401  convnd.torch, also as convnd.functional
from . import nn

__all__ = ["conv_nd", "conv_nd_wgrad", "plan_name", "wgrad_plan_name", "ACTIVATIONS", "FORWARD",
           "TRANSPOSED", "functional", "nn", "device_name"]


def device_name():
    """The process's convnd device (CPU tensors always use the emulated device)."""
    return _C.device_name()
