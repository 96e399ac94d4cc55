"""The canonical op, torch.ops.convnd.conv_nd, its autograd, and a Python wrapper with named
activations.

Backward (SPEC section 10): the data gradient of a forward conv is the transposed conv with the
same S, D, P0 and a P1 that gives exactly x's size; that of a transposed conv is the forward conv
from O back to I. The weight gradient is one function, `weight_grad`.
"""
import torch

FORWARD, TRANSPOSED = 0, 1
ACTIVATIONS = {"none": 0, None: 0, "relu": 1, "silu": 2, "gelu": 3}

_op = torch.ops.convnd.conv_nd.default


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


def _spatial(t):
    return list(t.shape[2:])


def _effective(k, d):
    return d * (k - 1) + 1


def data_grad(g, w, x_size, stride, dilation, pb, pa, groups, mode):
    """dx for y = conv(x, w) with all of x's positions: SPEC section 10."""
    ks = _spatial(w)
    if mode == FORWARD:
        # Transposed conv with P1 chosen so its output has exactly x's size (covers the rows the
        # forward conv's floor dropped).
        o = _spatial(g)
        pa_t = [(o[i] - 1) * stride[i] + _effective(ks[i], dilation[i]) - pb[i] - x_size[i]
                for i in range(len(ks))]
        return _op(g, w, None, None, stride, dilation, pb, pa_t, groups, TRANSPOSED, 1.0, 0.0, 0,
                   None)
    # Transposed: its adjoint is the forward conv from O back to I with the same S, D, P0, P1.
    return _op(g, w, None, None, stride, dilation, pb, pa, groups, FORWARD, 1.0, 0.0, 0, None)


def weight_grad(x, dy, w_shape, stride, dilation, pb, pa, groups):
    """dw of the forward conv y = conv(x, w) (SPEC section 10), w of shape w_shape.

    TEMPORARY until convnd's CONVND_WGRAD mode lands: computed on convnd as one forward
    convolution with the roles swapped. Per group, x read as [C_in/g, N, I...] (batch = input
    channel, channels = batch) is convolved with dy read as [C_out/g, N, O...] (the "kernel" is dy)
    with stride D, dilation S, P0 and a P1 that gives exactly K outputs:
        r[ci, co, k] = sum_n sum_o x[n, ci, k*D + o*S - P0] * dy[n, co, o] = dw[co, ci, k].
    The groups become that convolution's groups."""
    n, c_in = x.shape[:2]
    c_out = dy.shape[1]
    cg, og = c_in // groups, c_out // groups
    sp_x, sp_y, ks = _spatial(x), _spatial(dy), list(w_shape[2:])
    nd = len(ks)
    # [N, g, Cg, I...] -> [Cg, g, N, I...] -> [Cg, g*N, I...]
    xs = x.reshape([n, groups, cg] + sp_x).permute([2, 1, 0] + list(range(3, 3 + nd)))
    xs = xs.reshape([cg, groups * n] + sp_x)
    # [N, g, Og, O...] -> [g, Og, N, O...] -> [g*Og, N, O...]
    ws = dy.reshape([n, groups, og] + sp_y).permute([1, 2, 0] + list(range(3, 3 + nd)))
    ws = ws.reshape([groups * og, n] + sp_y)
    pa_w = [(ks[i] - 1) * dilation[i] + _effective(sp_y[i], stride[i]) - sp_x[i] - pb[i]
            for i in range(nd)]
    r = _op(xs, ws, None, None, list(dilation), list(stride), list(pb), pa_w, groups, FORWARD,
            1.0, 0.0, 0, None)
    # [Cg, g*Og, K...] -> [g, Og, Cg, K...] -> [C_out, Cg, K...]
    r = r.reshape([cg, groups, og] + ks).permute([1, 2, 0] + list(range(3, 3 + nd)))
    return r.reshape(list(w_shape))


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
    g = grad * alpha if alpha != 1.0 else grad
    if need[0]:
        dx = data_grad(g, w, _spatial(x), stride, dilation, pb, pa, groups, mode)
    if need[1]:
        if mode == FORWARD:
            dw = weight_grad(x, g, w.shape, stride, dilation, pb, pa, groups)
        else:  # the adjoint forward conv's weight gradient, x <- dy_T, dy <- x_T
            dw = weight_grad(g, x, w.shape, stride, dilation, pb, pa, groups)
    if bias is not None and need[2]:
        dbias = grad.sum(dim=[0] + list(range(2, grad.dim())))
    if z is not None and need[3]:
        dz = grad * beta
    return dx, dw, dbias, dz, None, None, None, None, None, None, None, None, None, None


torch.library.register_autograd("convnd::conv_nd", _backward, setup_context=_setup_context)
