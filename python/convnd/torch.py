"""PyTorch's functional convolutions with their exact signatures, run by convnd
(torch.nn.functional.conv1d/2d/3d and conv_transpose1d/2d/3d), plus the padding torch cannot
express: asymmetric (`conv_padded`) and causal (`causal_conv`).

Pure Python over torch.ops.convnd.conv_nd, so torch.compile traces it without graph breaks.
Shape checks (groups, channels, output size) are convnd's own, raised as ValueError with its
message."""
import torch

from ._ops import FORWARD, TRANSPOSED, _activation_id, _op


# convnd_torch_padding_rule (convnd_bind.h)
_EXPLICIT, _VALID, _SAME, _CAUSAL, _TRANSPOSED = range(5)


def _tuple(v, n, name):
    """conv_padded's per-dim lists (its own arguments: no PyTorch rule)."""
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"convnd: {name}={v} has {len(v)} entries; expected {n} "
                         "(one per spatial dim)")
    return v


def _list(v):
    """An int or a sequence as a list (the C binding broadcasts and checks the length)."""
    return [v] if isinstance(v, int) else list(v)


@torch._dynamo.assume_constant_result
def _geometry(rule, w_shape, stride, padding, dilation, output_padding):
    """(stride, dilation, pad_before, pad_after) by the C binding's rules and checks
    (convnd_bind_torch_geometry), computed once at trace time under torch.compile: it reads only
    the weight's shape and the arguments."""
    from . import _C
    return _C.torch_geometry(rule, list(w_shape), stride, padding, dilation, output_padding)


def _batched(x, dims):
    """PyTorch accepts unbatched input [C, spatial...]: run it as a batch of one."""
    if x.dim() == dims + 1:
        return x.unsqueeze(0), True
    return x, False


def _run(x, w, bias, dims, stride, dilation, pb, pa, groups, mode, activation="none"):
    x, unbatched = _batched(x, dims)
    y = _op(x, w, bias, None, stride, dilation, pb, pa, groups, mode, 1.0, 0.0,
            _activation_id(activation), None)
    return y.squeeze(0) if unbatched else y


def _conv(dims, input, weight, bias, stride, padding, dilation, groups):
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"convnd: padding={padding!r}: expected an int, a tuple, "
                             "'same' or 'valid'")
        rule, padding = (_VALID if padding == "valid" else _SAME), []
    else:
        rule, padding = _EXPLICIT, _list(padding)
    _check_rank(weight, dims)
    stride, dilation, pb, pa = _geometry(rule, tuple(weight.shape), _list(stride), padding,
                                         _list(dilation), [])
    return _run(input, weight, bias, dims, stride, dilation, pb, pa, groups, FORWARD)


def _check_rank(weight, dims):
    if weight.dim() != dims + 2:
        raise ValueError(f"convnd: conv{dims}d: weight of shape {list(weight.shape)} must have "
                         f"{dims + 2} dimensions")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(dims, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    _check_rank(weight, dims)
    stride, dilation, pb, pa = _geometry(_TRANSPOSED, tuple(weight.shape), _list(stride),
                                         _list(padding), _list(dilation), _list(output_padding))
    return _run(input, weight, bias, dims, stride, dilation, pb, pa, groups, TRANSPOSED)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_padded(input, weight, bias=None, stride=1, padding_before=0, padding_after=0,
                dilation=1, groups=1, activation="none"):
    """A forward conv with explicit per-dim padding before/after each spatial dim (negative
    crops), fused: no padded copy of the input is made. `F.conv2d(F.pad(x, pads), w)` equals
    `conv_padded(x, w, padding_before=..., padding_after=...)`."""
    dims = weight.dim() - 2
    return _run(input, weight, bias, dims, _tuple(stride, dims, "stride"),
                _tuple(dilation, dims, "dilation"),
                _tuple(padding_before, dims, "padding_before"),
                _tuple(padding_after, dims, "padding_after"), groups, FORWARD, activation)


def causal_conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                activation="none"):
    """Causal along the outermost spatial dim (time: P0 = D*(K-1), P1 = 0, as in causal conv1d
    and causal video VAEs); the other spatial dims get the symmetric `padding`."""
    dims = weight.dim() - 2
    stride, dilation, pb, pa = _geometry(_CAUSAL, tuple(weight.shape), _list(stride),
                                         _list(padding), _list(dilation), [])
    return _run(input, weight, bias, dims, stride, dilation, pb, pa, groups, FORWARD, activation)
