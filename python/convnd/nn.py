"""Drop-in convolution modules run by convnd, and `convert(model)` that swaps an existing
model's convolutions in place, keeping their parameters, and says what it left on torch."""
import logging

import torch
import torch.nn.functional as F

from . import torch as cf
from ._ops import FORWARD, TRANSPOSED, plan_name as _plan_name
from .adapters import ADAPTERS, AdapterMixin


def explicit_padding(conv):
    """A forward conv module's padding as (before, after) lists: an int/tuple as is, 'valid' as
    zeros, 'same' as PyTorch splits it (the extra position after): the C binding's rule."""
    if isinstance(conv.padding, str):
        rule, padding = (cf._VALID if conv.padding == "valid" else cf._SAME), []
    else:
        rule, padding = cf._EXPLICIT, list(conv.padding)
    weight_shape = (conv.out_channels, conv.in_channels // conv.groups) + tuple(conv.kernel_size)
    _, _, pb, pa = cf._geometry(rule, weight_shape, list(conv.stride), padding,
                                list(conv.dilation), [])
    return pb, pa


class _ConvMixin:
    """For nn.Conv{1,2,3}d: PyTorch's forward() calls _conv_forward, which runs on convnd."""

    _convnd_fn = None

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            # As PyTorch does: the non-zero padding is materialized, the conv then pads nothing.
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return type(self)._convnd_fn(input, weight, bias, self.stride, 0, self.dilation,
                                         self.groups)
        return type(self)._convnd_fn(input, weight, bias, self.stride, self.padding,
                                     self.dilation, self.groups)

    def convnd_schedule(self, input):
        """The convnd "schedule:config" this layer runs for `input` (zero padding modes)."""
        dims = len(self.kernel_size)
        pb, pa = explicit_padding(self)
        x = input if input.dim() == dims + 2 else input.unsqueeze(0)
        return _plan_name(x, self.weight, self.bias, stride=self.stride, dilation=self.dilation,
                          padding_before=pb, padding_after=pa, groups=self.groups, mode=FORWARD)


class _ConvTransposeMixin:
    """For nn.ConvTranspose{1,2,3}d: PyTorch's forward, with the conv run on convnd."""

    _convnd_fn = None

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"convnd: padding_mode={self.padding_mode!r}: only 'zeros' is "
                             f"supported for {type(self).__name__}")
        dims = len(self.kernel_size)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, dims, self.dilation)
        return type(self)._convnd_fn(input, self.weight, self.bias, self.stride, self.padding,
                                     output_padding, self.groups, self.dilation)

    def convnd_schedule(self, input, output_size=None):
        dims = len(self.kernel_size)
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, dims, self.dilation)
        x = input if input.dim() == dims + 2 else input.unsqueeze(0)
        return _plan_name(x, self.weight, self.bias, stride=self.stride, dilation=self.dilation,
                          padding_before=list(self.padding),
                          padding_after=[self.padding[i] - op[i] for i in range(dims)],
                          groups=self.groups, mode=TRANSPOSED)


def _module(base, mixin, fn):
    """convnd's drop-in subclass of a torch.nn convolution module."""
    return type(base.__name__, (mixin, base), {
        "_convnd_fn": staticmethod(fn), "__module__": __name__,
        "__doc__": f"torch.nn.{base.__name__} run by convnd (same arguments and parameters)."})


Conv1d = _module(torch.nn.Conv1d, _ConvMixin, cf.conv1d)
Conv2d = _module(torch.nn.Conv2d, _ConvMixin, cf.conv2d)
Conv3d = _module(torch.nn.Conv3d, _ConvMixin, cf.conv3d)
ConvTranspose1d = _module(torch.nn.ConvTranspose1d, _ConvTransposeMixin, cf.conv_transpose1d)
ConvTranspose2d = _module(torch.nn.ConvTranspose2d, _ConvTransposeMixin, cf.conv_transpose2d)
ConvTranspose3d = _module(torch.nn.ConvTranspose3d, _ConvTransposeMixin, cf.conv_transpose3d)

_REPLACEMENT = {
    torch.nn.Conv1d: Conv1d,
    torch.nn.Conv2d: Conv2d,
    torch.nn.Conv3d: Conv3d,
    torch.nn.ConvTranspose1d: ConvTranspose1d,
    torch.nn.ConvTranspose2d: ConvTranspose2d,
    torch.nn.ConvTranspose3d: ConvTranspose3d,
}


# The dtypes convnd runs (float32 as f32/TF32, float16, bfloat16); any other stays on torch.
_DTYPES = (torch.float32, torch.float16, torch.bfloat16)

_log = logging.getLogger(__name__)


class ConversionReport:
    """What convert() did: `converted` lists (module name, class name) of every convolution now
    run by convnd; `adapted` the causal-conv modules that hold their conv as .conv and now run
    it through an adapter (their conv is in `converted` too); `skipped` lists (module name, class
    name, reason) of every convolution or such module left on torch."""

    def __init__(self):
        self.converted, self.adapted, self.skipped = [], [], []

    def __repr__(self):
        adapted = f" ({len(self.adapted)} wrapper(s) adapted)" if self.adapted else ""
        lines = [f"convnd.nn.convert: {len(self.converted)} convolution(s) converted{adapted}, "
                 f"{len(self.skipped)} left on torch"]
        lines += [f"  {name or '(model)'} ({cls}): {why}" for name, cls, why in self.skipped]
        return "\n".join(lines)


def _base_of(cls):
    """The torch.nn convolution class cls is or derives from, or None."""
    for base in cls.__mro__:
        if base in _REPLACEMENT:
            return base
    return None


def _why_not(module, base):
    """Why `module` (an instance of a subclass of `base`, or of base itself) stays on torch, or
    None when convnd can run it."""
    cls = type(module)
    if cls is not base:
        own = [m for m in ("forward", "_conv_forward", "_output_padding")
               if any(m in c.__dict__ for c in cls.__mro__[:cls.__mro__.index(base)])]
        if own:
            return (f"subclass of torch.nn.{base.__name__} with its own {', '.join(own)}: "
                    "convnd cannot know what it computes")
    dtype = module.weight.dtype
    if dtype not in _DTYPES:
        return f"dtype {dtype}: convnd runs float32, float16 and bfloat16"
    return None


def _adapter_of(module):
    """For a class adapters.ADAPTERS names: (convnd class, None) or (None, why not); (None, None)
    for any other class."""
    cls = type(module)
    entry = ADAPTERS.get(cls.__name__)
    if entry is None:
        return None, None
    mixin, why_not, wraps = entry
    conv = getattr(module, "conv", None) if wraps else module
    if not isinstance(conv, torch.nn.Conv3d):
        return None, None  # another class of that name
    why = why_not(module)
    if why is not None:
        return None, f"{cls.__name__} adapter: {why}"
    if conv.weight.dtype not in _DTYPES:
        return None, f"dtype {conv.weight.dtype}: convnd runs float32, float16 and bfloat16"
    if mixin is None:  # its forward is the conv's: convert as a plain conv
        return _convnd_class(cls, torch.nn.Conv3d), None
    if cls not in _SUBCLASSES:
        _SUBCLASSES[cls] = type(cls.__name__, (mixin, cls), {
            "__module__": __name__, "__doc__": f"{cls.__qualname__} run by convnd (adapter)."})
    return _SUBCLASSES[cls], None


_SUBCLASSES = {}  # a user's subclass -> its convnd class, made once


def _convnd_class(cls, base):
    """convnd's class for an instance of cls: the drop-in class itself for a torch.nn class, and
    for a subclass that overrides nothing convnd replaces, a subclass of both (so isinstance
    checks against the user's class still hold)."""
    if cls is base:
        return _REPLACEMENT[base]
    if cls not in _SUBCLASSES:
        mixin = next(m for m in (_ConvMixin, _ConvTransposeMixin)
                     if issubclass(_REPLACEMENT[base], m))
        _SUBCLASSES[cls] = type(cls.__name__, (mixin, cls), {
            "_convnd_fn": staticmethod(_REPLACEMENT[base]._convnd_fn), "__module__": __name__,
            "__doc__": f"{cls.__qualname__} run by convnd."})
    return _SUBCLASSES[cls]


def convert(model, strict=False, return_report=False):
    """Swaps every torch.nn.Conv*/ConvTranspose* module of `model` (itself included) for its
    convnd counterpart, in place: the same module objects, parameters, buffers and hooks, only
    their class changes. The causal convolutions of video VAEs that convnd.adapters names (Wan,
    QwenImage, Cosmos, CogVideoX, LTX-Video, HunyuanVideo) get an adapter that runs their time
    padding fused and their frame cache or replicated frames as a halo read in place, when their
    attributes match what the adapter assumes (the wrappers that hold their conv as .conv are
    listed in the report's `adapted`). Left on torch, with the reason in the report: a subclass
    with its own forward (convnd cannot know what it computes), a dtype convnd does not run
    (float64), an adapter's class whose attributes differ; a subclass that overrides none of
    forward, _conv_forward, _output_padding is converted to a class derived from it.
    strict=True raises ValueError naming them instead (and converts nothing). Logs the skipped
    layers as a warning. Returns `model`, or (model, ConversionReport) with
    return_report=True."""
    report, plan = ConversionReport(), []
    for name, module in model.named_modules():
        base = _base_of(type(module))
        done = report.converted if base is not None else report.adapted
        if isinstance(module, (_ConvMixin, _ConvTransposeMixin, AdapterMixin)):
            done.append((name, type(module).__name__))  # converted before
            continue
        adapter, why = _adapter_of(module)
        if adapter is None and why is None:
            if base is None:
                continue
            why = _why_not(module, base)
            adapter = _convnd_class(type(module), base) if why is None else None
        if adapter is not None:
            plan.append((name, module, adapter, done))
        else:
            report.skipped.append((name, type(module).__name__, why))
    if strict and report.skipped:
        raise ValueError(repr(report) + "\n(strict=True: nothing was converted)")
    for name, module, cls, done in plan:
        module.__class__ = cls
        done.append((name, type(module).__name__))
    if report.skipped:
        _log.warning("%r", report)
    return (model, report) if return_report else model


def schedules(model, *inputs, **kwargs):
    """Runs `model(*inputs, **kwargs)` once and returns [(module name, convnd schedule)] for
    every convnd convolution it called, in call order."""
    found, hooks = [], []
    for name, module in model.named_modules():
        if isinstance(module, (_ConvMixin, _ConvTransposeMixin, AdapterMixin)):
            def hook(mod, args, kwargs, name=name):
                found.append((name or type(mod).__name__, mod.convnd_schedule(*args, **kwargs)))
            hooks.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        with torch.no_grad():
            model(*inputs, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    return found
