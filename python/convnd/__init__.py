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
from . import distributed  # noqa: F401  spatial parallelism on torch.distributed (SPEC 14)
from . import onnx  # noqa: F401  ONNX Conv, ConvTranspose, CausalConvWithState

__all__ = ["conv_nd", "conv_nd_wgrad", "plan_name", "wgrad_plan_name", "ACTIVATIONS", "FORWARD",
           "TRANSPOSED", "functional", "nn", "distributed", "onnx", "device_name", "plan_cache_info", "clear_plan_cache",
           "set_plan_cache_capacity", "counters"]


def device_name():
    """The process's convnd device (CPU tensors always use the emulated device)."""
    return _C.device_name()


def plan_cache_info():
    """The ops' plan cache: a call with a problem (shapes, strides, dtype, geometry, epilogue),
    device and schedule seen before executes the plan made then, without validating or planning
    again. Returns {"entries", "capacity", "hits", "misses"}."""
    entries, capacity, hits, misses = _C.plan_cache_info()
    return {"entries": entries, "capacity": capacity, "hits": hits, "misses": misses}


def clear_plan_cache():
    """Drops every cached plan (and zeroes the hit and miss counts)."""
    _C.clear_plan_cache()


def set_plan_cache_capacity(capacity):
    """At most `capacity` plans are kept, the least recently used dropped first (default 1024;
    0 turns caching off)."""
    _C.set_plan_cache_capacity(capacity)


def counters():
    """The library's process-wide counts: {"validations": problem validations, "plans": planner
    runs}. A call served from the plan cache adds to neither."""
    validations, plans = _C.counters()
    return {"validations": validations, "plans": plans}
