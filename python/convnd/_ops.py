"""The canonical op, torch.ops.convnd.conv_nd, its weight gradient
torch.ops.convnd.conv_nd_wgrad, conv_nd's autograd, and Python wrappers with named activations.

Backward (SPEC section 10): the data gradient of a forward conv is the transposed conv with the
same S, D, P0 and a P1 that gives exactly x's size; that of a transposed conv is the forward conv
from O back to I. The weight gradient of either is convnd's CONVND_WGRAD mode (conv_nd_wgrad; a
transposed problem is bound to its adjoint forward conv's wgrad problem by
convnd_bind_wgrad).
"""
import torch

FORWARD, TRANSPOSED = 0, 1
ACTIVATIONS = {"none": 0, None: 0, "relu": 1, "silu": 2, "gelu": 3}

_op = torch.ops.convnd.conv_nd.default
_wgrad_op = torch.ops.convnd.conv_nd_wgrad.default


def _activation_id(activation):
    if isinstance(activation, int):
        return activation
    if activation not in ACTIVATIONS:
        raise ValueError(f"convnd: activation={activation!r} must be one of none, relu, silu, gelu")
    return ACTIVATIONS[activation]


def conv_nd(x, w, bias=None, z=None, *, stride, dilation, padding_before, padding_after,
            groups=1, mode=FORWARD, alpha=1.0, beta=0.0, activation="none", schedule=None):
    """y = act(alpha * conv(x, w) + bias + beta * z), the SPEC's canonical call."""
    return _op(x, w, bias, z, list(stride), list(dilation), list(padding_before),
               list(padding_after), groups, mode, alpha, beta, _activation_id(activation),
               schedule)


def plan_name(x, w, bias=None, z=None, *, stride, dilation, padding_before, padding_after,
              groups=1, mode=FORWARD, alpha=1.0, beta=0.0, activation="none", schedule=None):
    """The "schedule:config" conv_nd would run for these arguments."""
    from . import _C
    return _C.plan_name(x, w, bias, z, list(stride), list(dilation), list(padding_before),
                        list(padding_after), groups, mode, alpha, beta,
                        _activation_id(activation), schedule)


def conv_nd_wgrad(x, dy, weight_size, z=None, *, stride, dilation, padding_before,
                  padding_after, groups=1, mode=FORWARD, alpha=1.0, beta=0.0, schedule=None):
    """dw = alpha * (the weight gradient of conv_nd(x, w, ..., mode=mode) for the output
    gradient dy) + beta * z, w of shape weight_size: convnd's CONVND_WGRAD mode."""
    return _wgrad_op(x, dy, list(weight_size), z, list(stride), list(dilation),
                     list(padding_before), list(padding_after), groups, mode, alpha, beta,
                     schedule)


def wgrad_plan_name(x, dy, weight_size, z=None, *, stride, dilation, padding_before,
                    padding_after, groups=1, mode=FORWARD, alpha=1.0, beta=0.0, schedule=None):
    """The "schedule:config" conv_nd_wgrad would run for these arguments."""
    from . import _C
    return _C.wgrad_plan_name(x, dy, list(weight_size), z, list(stride), list(dilation),
                              list(padding_before), list(padding_after), groups, mode, alpha,
                              beta, schedule)


def _spatial(t):
    return list(t.shape[2:])


def data_grad(g, w, x_size, stride, dilation, pb, pa, groups, mode, alpha=1.0):
    """dx = alpha * (the data gradient of y = conv(x, w) for g), all of x's positions: SPEC
    section 10."""
    if mode == FORWARD:
        # Transposed conv with P1 chosen so its output has exactly x's size (covers the rows the
        # forward conv's floor dropped): the C library's rule (convnd_shape_rule.h), on SymInts
        # when autograd traces symbolic sizes.
        from . import _C
        pa_t = _C.dgrad_pad_after(list(x_size), _spatial(g), _spatial(w), list(stride),
                                  list(dilation), list(pb))
        return _op(g, w, None, None, stride, dilation, pb, pa_t, groups, TRANSPOSED, alpha, 0.0,
                   0, None)
    # Transposed: its adjoint is the forward conv from O back to I with the same S, D, P0, P1.
    return _op(g, w, None, None, stride, dilation, pb, pa, groups, FORWARD, alpha, 0.0, 0, None)


def _activation_grad(g, pre, activation):
    if activation == 1:
        return torch.ops.aten.threshold_backward(g, pre, 0)
    if activation == 2:
        return torch.ops.aten.silu_backward(g, pre)
    if activation == 3:
        return torch.ops.aten.gelu_backward(g, pre, approximate="none")
    return g


def _setup_context(ctx, inputs, output):
    (x, w, bias, z, stride, dilation, pb, pa, groups, mode, alpha, beta, act, schedule) = inputs
    ctx.save_for_backward(x, w, bias, z)
    ctx.args = (list(stride), list(dilation), list(pb), list(pa), groups, mode, alpha, beta, act)


def _backward(ctx, grad):
    x, w, bias, z = ctx.saved_tensors
    stride, dilation, pb, pa, groups, mode, alpha, beta, act = ctx.args
    if act:
        # The pre-activation value, recomputed: act'(pre) needs it.
        pre = _op(x, w, bias, z, stride, dilation, pb, pa, groups, mode, alpha, beta, 0, None)
        grad = _activation_grad(grad, pre, act)
    need = ctx.needs_input_grad
    dx = dw = dbias = dz = None
    # alpha is applied by the gradients' epilogues.
    if need[0]:
        dx = data_grad(grad, w, _spatial(x), stride, dilation, pb, pa, groups, mode, alpha)
    if need[1]:
        dw = _wgrad_op(x, grad, list(w.shape), None, stride, dilation, pb, pa, groups, mode,
                       alpha, 0.0, None)
    if bias is not None and need[2]:
        dbias = grad.sum(dim=[0] + list(range(2, grad.dim())))
    if z is not None and need[3]:
        dz = grad * beta
    return dx, dw, dbias, dz, None, None, None, None, None, None, None, None, None, None


torch.library.register_autograd("convnd::conv_nd", _backward, setup_context=_setup_context)


# ---- conv_nd_halo (SPEC §12, §14): X = cat(prefix, x, suffix) along spatial dim `axis` -------

_halo_op = torch.ops.convnd.conv_nd_halo.default


def _halo_setup_context(ctx, inputs, output):
    (x, w, bias, prefix, suffix, axis, stride, dilation, pb, pa, groups, act, schedule) = inputs
    ctx.save_for_backward(x, w, bias, prefix, suffix)
    ctx.args = (axis, list(stride), list(dilation), list(pb), list(pa), groups, act)


def _halo_backward(ctx, grad):
    """The gradients of y = conv(X) with X = cat(prefix, x, suffix): the data gradient over X's
    size split into the three (no concatenation); the weight gradient reads X concatenated
    (CONVND_WGRAD reads no halo)."""
    x, w, bias, prefix, suffix = ctx.saved_tensors
    axis, stride, dilation, pb, pa, groups, act = ctx.args
    if act:
        pre = _halo_op(x, w, bias, prefix, suffix, axis, stride, dilation, pb, pa, groups, 0, None)
        grad = _activation_grad(grad, pre, act)
    d = 2 + axis
    pieces = [t if t is not None else x.narrow(d, 0, 0) for t in (prefix, x, suffix)]
    sizes = [t.shape[d] for t in pieces]
    need = ctx.needs_input_grad
    dx = dw = dbias = dprefix = dsuffix = None
    if need[0] or need[3] or need[4]:
        size = _spatial(x)
        size[axis] = sum(sizes)
        dprefix, dx, dsuffix = data_grad(grad, w, size, stride, dilation, pb, pa, groups,
                                         FORWARD).split(sizes, d)
        dx = dx if need[0] else None
        dprefix = dprefix if prefix is not None and need[3] else None
        dsuffix = dsuffix if suffix is not None and need[4] else None
    if need[1]:
        whole = torch.cat(pieces, d) if sizes[0] or sizes[2] else x
        dw = _wgrad_op(whole, grad, list(w.shape), None, stride, dilation, pb, pa, groups, FORWARD,
                       1.0, 0.0, None)
    if bias is not None and need[2]:
        dbias = grad.sum(dim=[0] + list(range(2, grad.dim())))
    return (dx, dw, dbias, dprefix, dsuffix) + (None,) * 8


torch.library.register_autograd("convnd::conv_nd_halo", _halo_backward,
                                setup_context=_halo_setup_context)
