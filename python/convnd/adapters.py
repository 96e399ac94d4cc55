"""Adapters convert() gives the causal 3-D convolutions of video VAEs (diffusers' and the models'
own). Each maps its module's time padding and frame cache onto convnd's fused padding and a halo
along time read in place (SPEC §12's prefix, §14's suffix): a cache is the prefix as it is, a
replicated first or last frame a broadcast view of that frame (stride 0 along time), zero padding
is fused. Nothing is concatenated along time. Spatial padding in a mode other than zeros
(replicate, reflect) is materialized with F.pad, as torch itself does, since convnd pads with
zeros only.

An adapter is (mixin, guard): the mixin replaces the class's forward, the guard reads the
module's attributes and forward signature and returns why it does not look like the class the
adapter was written for (the layer then stays on torch with that reason), or None.
"""
import inspect

import torch
import torch.nn.functional as F


_ZERO_MODES = ("zeros", "constant")


def _signature(module):
    return list(inspect.signature(type(module).forward).parameters)[1:]


class HaloArgs:
    """One conv over cat(prefix, x, suffix) along time with zero padding pb/pa (fused): what an
    adapter's forward computes, and what convnd_schedule names the plan of."""

    def __init__(self, conv, x, prefix=None, suffix=None, pb=(0, 0, 0), pa=(0, 0, 0)):
        self.conv, self.x, self.prefix, self.suffix = conv, x, prefix, suffix
        self.pb, self.pa = list(pb), list(pa)

    def _op_args(self):
        c = self.conv
        return (self.x, c.weight, c.bias, self.prefix, self.suffix, 0, list(c.stride),
                list(c.dilation), self.pb, self.pa, c.groups, 0, None)

    def run(self):
        return torch.ops.convnd.conv_nd_halo(*self._op_args())

    def plan_name(self):
        from . import _C
        return _C.halo_plan_name(*self._op_args())


def _frames(t, index, count):
    """`count` copies of frame `index` of t as a broadcast view (no copy), or None for none."""
    if count <= 0:
        return None
    return t.narrow(2, index % t.shape[2], 1).expand(-1, -1, count, -1, -1)


def _spatial(conv, x, steps):
    """Applies the module's spatial padding steps [(pad_h, pad_w, mode), ...] in its order,
    followed by the conv's own padding: zero steps after the last non-zero-mode step are fused
    (returned as (pb, pa) over (T, H, W), the conv's time padding included), the rest
    materialized on x with F.pad."""
    steps = list(steps) + [(conv.padding[1], conv.padding[2], conv.padding_mode)]
    last = max((i for i, (h, w, m) in enumerate(steps) if m not in _ZERO_MODES and (h or w)),
               default=-1)
    for h, w, mode in steps[:last + 1]:
        if h or w:
            mode = "constant" if mode in _ZERO_MODES else mode
            x = F.pad(x, (w, w, h, h, 0, 0), mode=mode)
    fh = sum(h for h, _, _ in steps[last + 1:])
    fw = sum(w for _, w, _ in steps[last + 1:])
    t = conv.padding[0]
    return x, [t, fh, fw], [t, fh, fw]


def _conv_why_not(conv):
    if not isinstance(conv, torch.nn.Conv3d):
        return f"conv is {type(conv).__name__}, not a Conv3d"
    if isinstance(conv.padding, str):
        return f"conv padding={conv.padding!r}"
    if conv.padding_mode != "zeros" and conv.padding[0] != 0:
        return f"conv pads time in mode {conv.padding_mode!r}"
    return None


class AdapterMixin:
    """forward() runs self._halo(...).run(); convnd_schedule(...) names its plan."""

    def convnd_schedule(self, *args, **kwargs):
        return self._halo(*args, **kwargs).plan_name()


# ---- Wan 2.1 / diffusers WanCausalConv3d, QwenImageCausalConv3d: an nn.Conv3d -----------------


class WanCausal(AdapterMixin):
    """`_padding` is F.pad's list (W, W, H, H, 2*P_T, 0); forward(x, cache_x=None) puts the
    cached frames in front of x in place of that much time padding (negative: crops)."""

    def _halo(self, x, cache_x=None):
        pad = list(self._padding)
        prefix = None
        if cache_x is not None and pad[4] > 0:
            prefix = cache_x.to(x.device)
            pad[4] -= prefix.shape[2]
        return HaloArgs(self, x, prefix, None, [pad[4], pad[2], pad[0]], [pad[5], pad[3], pad[1]])

    def forward(self, x, cache_x=None):
        return self._halo(x, cache_x).run()


def wan_causal_why_not(module):
    pad = getattr(module, "_padding", None)
    if not (isinstance(pad, (tuple, list)) and len(pad) == 6):
        return "no _padding of 6 entries"
    if pad[5] != 0 or pad[0] != pad[1] or pad[2] != pad[3]:
        return f"_padding={tuple(pad)} is not (W, W, H, H, T, 0)"
    if tuple(module.padding) != (0, 0, 0) or module.padding_mode != "zeros":
        return f"padding={module.padding}, padding_mode={module.padding_mode!r}"
    if _signature(module) != ["x", "cache_x"]:
        return f"forward{tuple(_signature(module))} is not forward(x, cache_x)"
    return None


# ---- diffusers CosmosCausalConv3d: an nn.Conv3d ------------------------------------------------


class CosmosCausal(AdapterMixin):
    """temporal_pad copies of the first frame before x, then spatial_pad (W, W, H, H) in
    pad_mode, then the conv."""

    def _halo(self, hidden_states):
        x = hidden_states
        w0, w1, h0, h1 = self.spatial_pad
        x, pb, pa = _spatial(self, x, [(h0, w0, self.pad_mode)])
        return HaloArgs(self, x, _frames(x, 0, self.temporal_pad), None, pb, pa)

    def forward(self, hidden_states):
        return self._halo(hidden_states).run()


def cosmos_causal_why_not(module):
    sp = getattr(module, "spatial_pad", None)
    if not (isinstance(sp, (tuple, list)) and len(sp) == 4 and sp[0] == sp[1] and sp[2] == sp[3]):
        return f"spatial_pad={sp!r} is not (W, W, H, H)"
    if getattr(module, "pad_mode", None) not in ("constant", "replicate", "reflect", "circular"):
        return f"pad_mode={getattr(module, 'pad_mode', None)!r}"
    if not isinstance(getattr(module, "temporal_pad", None), int) or module.temporal_pad < 0:
        return f"temporal_pad={getattr(module, 'temporal_pad', None)!r}"
    if tuple(module.padding) != (0, 0, 0):
        return f"padding={module.padding}"
    if _signature(module) != ["hidden_states"]:
        return f"forward{tuple(_signature(module))} is not forward(hidden_states)"
    return None


# ---- diffusers CogVideoXSafeConv3d: an nn.Conv3d that splits a big input along time -----------


def cogvideox_safe_why_not(module):
    """Its forward splits inputs over 2 GiB into time chunks overlapping by kernel_size - 1
    frames: the plain conv when the conv neither pads, strides nor dilates time."""
    if module.padding[0] != 0 or module.stride[0] != 1 or module.dilation[0] != 1:
        return (f"padding={module.padding}, stride={module.stride}, dilation={module.dilation}: "
                "its time chunks differ from one conv")
    if _signature(module) != ["input"]:
        return f"forward{tuple(_signature(module))} is not forward(input)"
    return None


# ---- wrappers: an nn.Module holding the conv as .conv ------------------------------------------


class CogVideoXCausal(AdapterMixin):
    """diffusers CogVideoXCausalConv3d: forward(inputs, conv_cache=None) -> (output, conv_cache).
    pad_mode 'replicate': F.pad(time_causal_padding, replicate), no cache; any other ('first',
    'constant'): the cache (or kernel_size - 1 copies of the first frame) in front, the conv pads
    H and W with zeros, the new cache is the last kernel_size - 1 frames in front of the conv."""

    def _halo(self, inputs, conv_cache=None):
        k = self.time_kernel_size
        if self.pad_mode == "replicate":
            w, _, h, _, t, _ = self.time_causal_padding
            x, pb, pa = _spatial(self.conv, inputs, [(h, w, "replicate")])
            return HaloArgs(self.conv, x, _frames(x, 0, t), None, pb, pa)
        prefix = None
        if k > 1:
            prefix = conv_cache if conv_cache is not None else _frames(inputs, 0, k - 1)
        _, pb, pa = _spatial(self.conv, inputs, [])  # zeros: fused, nothing materialized
        return HaloArgs(self.conv, inputs, prefix, None, pb, pa)

    def forward(self, inputs, conv_cache=None):
        out = self._halo(inputs, conv_cache).run()
        if self.pad_mode == "replicate":
            return out, None
        k = self.time_kernel_size
        if k == 1:  # the module's inputs[:, :, -0:] is every frame
            return out, inputs.clone()
        if inputs.shape[2] >= k - 1:
            return out, inputs[:, :, -(k - 1):].clone()
        prefix = conv_cache if conv_cache is not None else _frames(inputs, 0, k - 1)
        return out, torch.cat([prefix, inputs], 2)[:, :, -(k - 1):].clone()  # the cache only


def cogvideox_causal_why_not(module):
    why = _conv_why_not(getattr(module, "conv", None))
    if why:
        return why
    if not isinstance(getattr(module, "time_kernel_size", None), int):
        return "no time_kernel_size"
    tcp = module.time_causal_padding
    if len(tcp) != 6 or tcp[0] != tcp[1] or tcp[2] != tcp[3] or tcp[5] != 0:
        return f"time_causal_padding={tcp} is not (W, W, H, H, T, 0)"
    if module.pad_mode != "replicate" and (module.conv.padding[0] != 0 or
                                           module.conv.padding_mode != "zeros"):
        return (f"conv padding={module.conv.padding}, padding_mode="
                f"{module.conv.padding_mode!r}: not zeros over H and W only")
    if _signature(module) != ["inputs", "conv_cache"]:
        return f"forward{tuple(_signature(module))} is not forward(inputs, conv_cache)"
    return None


class LTXCausal(AdapterMixin):
    """diffusers LTXVideoCausalConv3d (is_causal attribute) and LTX2VideoCausalConv3d (forward's
    causal argument): kernel_size[0] - 1 copies of the first frame before x, or half of them
    before and half copies of the last frame after; the conv pads H and W (any padding_mode)."""

    def _halo(self, hidden_states, causal=None):
        if causal is None:
            causal = getattr(self, "is_causal", True)
        k = self.kernel_size[0]
        x, pb, pa = _spatial(self.conv, hidden_states, [])
        if causal:
            return HaloArgs(self.conv, x, _frames(x, 0, k - 1), None, pb, pa)
        half = (k - 1) // 2
        return HaloArgs(self.conv, x, _frames(x, 0, half), _frames(x, -1, half), pb, pa)

    def forward(self, hidden_states, causal=None):
        return self._halo(hidden_states, causal).run()


def ltx_causal_why_not(module):
    why = _conv_why_not(getattr(module, "conv", None))
    if why:
        return why
    if tuple(module.kernel_size) != tuple(module.conv.kernel_size):
        return f"kernel_size={module.kernel_size} but conv.kernel_size={module.conv.kernel_size}"
    if module.conv.padding[0] != 0:
        return f"conv padding={module.conv.padding} pads time"
    sig = _signature(module)
    if sig == ["hidden_states"] and isinstance(getattr(module, "is_causal", None), bool):
        return None
    if sig == ["hidden_states", "causal"]:
        return None
    return f"forward{tuple(sig)} is neither forward(hidden_states) with is_causal nor " \
           "forward(hidden_states, causal)"


class HunyuanCausal(AdapterMixin):
    """diffusers HunyuanVideoCausalConv3d: F.pad(time_causal_padding (W, W, H, H, T, 0),
    pad_mode), then the conv (its own zero padding)."""

    def _halo(self, hidden_states):
        w, _, h, _, t, _ = self.time_causal_padding
        x, pb, pa = _spatial(self.conv, hidden_states, [(h, w, self.pad_mode)])
        if self.pad_mode in _ZERO_MODES:
            return HaloArgs(self.conv, x, None, None, [pb[0] + t] + pb[1:], pa)
        return HaloArgs(self.conv, x, _frames(x, 0, t), None, pb, pa)

    def forward(self, hidden_states):
        return self._halo(hidden_states).run()


def hunyuan_causal_why_not(module):
    why = _conv_why_not(getattr(module, "conv", None))
    if why:
        return why
    if module.pad_mode not in ("constant", "replicate"):
        return f"pad_mode={module.pad_mode!r}"
    tcp = module.time_causal_padding
    if len(tcp) != 6 or tcp[0] != tcp[1] or tcp[2] != tcp[3] or tcp[5] != 0:
        return f"time_causal_padding={tcp} is not (W, W, H, H, T, 0)"
    if module.conv.padding_mode != "zeros":
        return f"conv padding_mode={module.conv.padding_mode!r}"
    if _signature(module) != ["hidden_states"]:
        return f"forward{tuple(_signature(module))} is not forward(hidden_states)"
    return None


# class name -> (mixin, guard, wraps): `wraps` is False for an nn.Conv3d subclass, True for a
# module holding its conv as .conv. A mixin of None converts the class as a plain conv (its own
# forward kept, the conv run by convnd) once the guard passes.
ADAPTERS = {
    "WanCausalConv3d": (WanCausal, wan_causal_why_not, False),
    "CausalConv3d": (WanCausal, wan_causal_why_not, False),
    "QwenImageCausalConv3d": (WanCausal, wan_causal_why_not, False),
    "CosmosCausalConv3d": (CosmosCausal, cosmos_causal_why_not, False),
    "CogVideoXSafeConv3d": (None, cogvideox_safe_why_not, False),
    "CogVideoXCausalConv3d": (CogVideoXCausal, cogvideox_causal_why_not, True),
    "LTXVideoCausalConv3d": (LTXCausal, ltx_causal_why_not, True),
    "LTX2VideoCausalConv3d": (LTXCausal, ltx_causal_why_not, True),
    "HunyuanVideoCausalConv3d": (HunyuanCausal, hunyuan_causal_why_not, True),
}
