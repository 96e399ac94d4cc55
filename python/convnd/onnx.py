"""ONNX's convolution operators on convnd: Conv, ConvTranspose and CausalConvWithState (opset 27).

Every rule is the C library's (include/convnd_bind.h): the bindings turn ONNX's shapes and
attributes into convnd's geometry, or refuse them with a message naming the values, and the
canonical op (torch.ops.convnd.conv_nd) or the stateful causal conv1d (SPEC §13) runs it. Tensors
are torch tensors on the CPU (convnd's emulated device) or CUDA; attributes are ONNX's, by name,
as Python values (strings, ints, lists of ints); an absent optional input is None.

    y, = convnd.onnx.run("Conv", [x, w, b], {"pads": [1, 1, 1, 1], "strides": [2, 2]})
    y, present = convnd.onnx.run("CausalConvWithState", [x, w, None, past], {"activation": "silu"})
"""
import torch

OPS = ("Conv", "ConvTranspose", "CausalConvWithState")

_CONV_ATTRIBUTES = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}
_ATTRIBUTES = {
    "Conv": _CONV_ATTRIBUTES,
    "ConvTranspose": _CONV_ATTRIBUTES | {"output_padding", "output_shape"},
    "CausalConvWithState": {"activation"},
}


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _ints(attrs, name):
    value = attrs.get(name)
    return None if value is None else [int(v) for v in value]


def run(op_type, inputs, attrs=None, *, onnxruntime_same=False):
    """Runs one ONNX node: op_type one of OPS, inputs in the operator's order (None for an
    absent optional one), attrs {name: value}. Returns the outputs as a list of tensors.

    The ONNX specification decides everywhere (docs/api.md, "Where ONNX's implementations
    disagree"); onnxruntime_same=True gives onnxruntime's ConvTranspose instead where the two
    differ: auto_pad SAME_* with a kernel extent below the stride, whose negative total padding
    onnxruntime takes as 0 (an output of S(I-1)+output_padding+E, not I*S)."""
    from . import _C
    from ._ops import conv_nd

    attrs = dict(attrs or {})
    if op_type not in _ATTRIBUTES:
        raise ValueError(f"convnd.onnx: op_type={op_type!r} is not one of {', '.join(OPS)}")
    unknown = sorted(set(attrs) - _ATTRIBUTES[op_type])
    if unknown:
        raise ValueError(f"convnd.onnx: {op_type} has no attribute {', '.join(unknown)} "
                         f"(it has {', '.join(sorted(_ATTRIBUTES[op_type]))})")
    inputs = list(inputs) + [None] * (3 - len(inputs))
    if op_type == "CausalConvWithState":
        x, w, b = inputs[:3]
        past = inputs[3] if len(inputs) > 3 else None
        y, present = _C.onnx_causal_conv_with_state(x, w, b, past,
                                                    _text(attrs.get("activation", "none")))
        return [y, present]
    x, w, b = inputs[:3]
    g = _C.onnx_conv_geometry(op_type == "ConvTranspose", list(x.shape), list(w.shape),
                              -1 if b is None else int(b.numel()) if b.dim() == 1 else -2,
                              _text(attrs.get("auto_pad", "NOTSET")), _ints(attrs, "dilations"),
                              int(attrs.get("group", 1)), _ints(attrs, "kernel_shape"),
                              _ints(attrs, "pads"), _ints(attrs, "strides"),
                              _ints(attrs, "output_padding"), _ints(attrs, "output_shape"),
                              bool(onnxruntime_same))
    return [conv_nd(x, w, b, stride=g["stride"], dilation=g["dilation"],
                    padding_before=g["padding_before"], padding_after=g["padding_after"],
                    groups=g["groups"], mode=g["mode"])]


__all__ = ["OPS", "run"]
