"""PyTorch's functional convolutions with their exact signatures, run by convnd
(torch.nn.functional.conv1d/2d/3d and conv_transpose1d/2d/3d), plus the padding torch cannot
express: asymmetric (`conv_padded`) and causal (`causal_conv`).

Pure Python over torch.ops.convnd.conv_nd, so torch.compile traces it without graph breaks.
Shape checks (groups, channels, output size) are convnd's own, raised as ValueError with its
message."""
import torch

from ._ops import FORWARD, TRANSPOSED, _activation_id, _op


def _tuple(v, n, name):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"convnd: {name}={v} has {len(v)} entries; expected {n} "
                         "(one per spatial dim)")
    return v


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
    stride = _tuple(stride, dims, "stride")
    dilation = _tuple(dilation, dims, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            pb = pa = [0] * dims
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("convnd: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride})")
            # PyTorch's rule: total D*(K-1), the odd element at the end.
            total = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(dims)]
            pb = [t // 2 for t in total]
            pa = [t - t // 2 for t in total]
        else:
            raise ValueError(f"convnd: padding={padding!r}: expected an int, a tuple, "
                             "'same' or 'valid'")
    else:
        pb = pa = _tuple(padding, dims, "padding")
        if any(p < 0 for p in pb):
            raise ValueError(f"convnd: negative padding is not supported (padding={pb}); "
                             "use conv_padded for crops")
    return _run(input, weight, bias, dims, stride, dilation, pb, pa, groups, FORWARD)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(dims, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    stride = _tuple(stride, dims, "stride")
    dilation = _tuple(dilation, dims, "dilation")
    padding = _tuple(padding, dims, "padding")
    output_padding = _tuple(output_padding, dims, "output_padding")
    for i in range(dims):
        if padding[i] < 0 or output_padding[i] < 0:
            raise ValueError(f"convnd: negative padding={padding} or output_padding="
                             f"{output_padding} is not supported")
        if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
            raise ValueError("convnd: output padding must be smaller than either stride or "
                             f"dilation, but got output_padding[{i}]={output_padding[i]} with "
                             f"stride[{i}]={stride[i]}, dilation[{i}]={dilation[i]}")
    # output_padding adds rows at the end: a smaller P1 (SPEC section 4).
    pa = [padding[i] - output_padding[i] for i in range(dims)]
    return _run(input, weight, bias, dims, stride, dilation, padding, pa, groups, TRANSPOSED)


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
    stride = _tuple(stride, dims, "stride")
    dilation = _tuple(dilation, dims, "dilation")
    rest = _tuple(padding, max(dims - 1, 1), "padding")[: dims - 1]
    pb = [dilation[0] * (weight.shape[2] - 1)] + rest
    pa = [0] + rest
    return _run(input, weight, bias, dims, stride, dilation, pb, pa, groups, FORWARD, activation)
