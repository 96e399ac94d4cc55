"""convnd.nn.convert's report: what it converted, what it left on torch and why, strict=True,
float64 left to torch, subclasses converted only when they override nothing convnd replaces."""
import copy
import logging

import pytest
import torch
import torch.nn as nn

import convnd
from conftest import SEED
from wan_layers import WanCausalConv3d


class OwnForward(nn.Conv2d):
    """A causal-padding subclass with its own forward (as video VAEs write them)."""

    def forward(self, x):
        return super().forward(torch.nn.functional.pad(x, (2, 0, 0, 0)))


class Renamed(nn.Conv2d):
    """A subclass that only adds an attribute: convnd can run it."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.tag = "mine"


def model_of(*layers):
    torch.manual_seed(SEED)
    return nn.Sequential(*layers)


def runs_on_convnd(model, x):
    with pytest.MonkeyPatch.context() as mp, torch.no_grad():
        mp.setenv("CONVND_SCHEDULE", "no_such_schedule")
        try:
            model(x)
        except ValueError as e:
            return "no_such_schedule" in str(e)
    return False


def test_report_lists_what_was_converted_and_what_was_left_and_why(caplog):
    model = model_of(nn.Conv2d(3, 4, 3, padding=1), OwnForward(4, 4, 3, padding=1),
                     nn.ConvTranspose2d(4, 2, 2, stride=2))
    ref = copy.deepcopy(model)
    with caplog.at_level(logging.WARNING, logger="convnd.nn"):
        got, report = convnd.nn.convert(model, return_report=True)
    assert got is model
    assert report.converted == [("0", "Conv2d"), ("2", "ConvTranspose2d")]
    assert len(report.skipped) == 1
    name, cls, why = report.skipped[0]
    assert (name, cls) == ("1", "OwnForward") and "its own forward" in why
    assert "1 (OwnForward)" in caplog.text  # the skipped layer is logged
    assert type(model[1]) is OwnForward
    x = torch.randn(2, 3, 6, 7)
    torch.testing.assert_close(model(x), ref(x), rtol=1e-5, atol=1e-5)
    assert runs_on_convnd(model[0], x)


def test_strict_raises_naming_the_layer_and_converts_nothing():
    model = model_of(nn.Conv2d(3, 4, 3), OwnForward(4, 4, 3))
    with pytest.raises(ValueError, match=r"1 \(OwnForward\): subclass of torch.nn.Conv2d"):
        convnd.nn.convert(model, strict=True)
    assert type(model[0]) is nn.Conv2d


def test_float64_model_stays_on_torch_and_says_so():
    model = model_of(nn.Conv1d(2, 3, 3), nn.Conv3d(3, 3, 1), nn.ConvTranspose2d(3, 3, 2)).double()
    classes = [type(m) for m in model]
    _, report = convnd.nn.convert(model, return_report=True)
    assert [type(m) for m in model] == classes  # unchanged torch modules
    assert report.converted == []
    assert [r[0] for r in report.skipped] == ["0", "1", "2"]
    assert all("dtype torch.float64" in r[2] for r in report.skipped)
    with pytest.raises(ValueError, match="float64"):
        convnd.nn.convert(model_of(nn.Conv2d(1, 1, 1)).double(), strict=True)


def test_subclass_that_overrides_nothing_is_converted_keeping_its_class():
    model = model_of(Renamed(3, 5, 3, stride=2, padding=1))
    ref = copy.deepcopy(model)
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.converted == [("0", "Renamed")] and report.skipped == []
    assert isinstance(model[0], Renamed) and model[0].tag == "mine"
    x = torch.randn(1, 3, 9, 8)
    assert runs_on_convnd(model, x)
    torch.testing.assert_close(model(x), ref(x), rtol=1e-5, atol=1e-5)


def test_converting_twice_reports_the_converted_layers_again():
    model = convnd.nn.convert(model_of(nn.Conv2d(3, 4, 3)))
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.converted == [("0", "Conv2d")] and report.skipped == []


# ---- adapters: Wan's causal conv3d (wan_layers.py: a faithful copy of diffusers' class) ---------


class WanBlock(nn.Module):
    """Two causal convs with Wan's feature cache (CACHE_T = 2 frames per conv, topped up from the
    old cache when a chunk has one frame)."""

    def __init__(self):
        super().__init__()
        self.conv1 = WanCausalConv3d(3, 6, 3, padding=1)
        self.conv2 = WanCausalConv3d(6, 4, (3, 1, 1), padding=(1, 0, 0))

    def forward(self, x, cache=None):
        out = x
        for i, conv in enumerate((self.conv1, self.conv2)):
            if cache is None:
                out = conv(out)
            else:
                new = out[:, :, -2:].clone()
                if new.shape[2] < 2 and cache[i] is not None:
                    new = torch.cat([cache[i][:, :, -1:], new], dim=2)
                out = conv(out, cache[i])
                cache[i] = new
            out = torch.nn.functional.silu(out) if i == 0 else out
        return out


def test_wan_causal_convs_convert_and_run_fused_without_cat():
    torch.manual_seed(SEED)
    model = WanBlock()
    ref = copy.deepcopy(model)
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.skipped == [] and [c for _, c in report.converted] == ["WanCausalConv3d"] * 2
    x = torch.randn(1, 3, 5, 6, 7)
    with torch.no_grad():
        want = ref(x)
        got = model(x)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        # chunked with the cache (1, 2, 2 frames) == whole; the converted layers concatenate
        # nothing (torch.cat patched to fail inside them: the cache update in WanBlock still cats)
        cache, outs = [None, None], []
        real_cat = torch.cat
        for t0, t1 in ((0, 1), (1, 3), (3, 5)):
            chunk = x[:, :, t0:t1]
            new = [None, None]
            with pytest.MonkeyPatch.context() as mp:
                def no_cat_in_conv(*a, **k):
                    import traceback
                    if any("convnd/adapters.py" in f.filename
                           for f in traceback.extract_stack()):
                        raise AssertionError("the adapter concatenated")
                    return real_cat(*a, **k)
                mp.setattr(torch, "cat", no_cat_in_conv)
                outs.append(model(chunk, cache))
            del new
        torch.testing.assert_close(torch.cat(outs, dim=2), want, rtol=1e-5, atol=1e-5)
    # with gradients: the differentiable path, equal too
    xg = x.clone().requires_grad_()
    model(xg).sum().backward()
    xr = x.clone().requires_grad_()
    ref(xr).sum().backward()
    torch.testing.assert_close(xg.grad, xr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(model.conv1.weight.grad, ref.conv1.weight.grad, rtol=1e-4,
                               atol=1e-4)


# a class of the same name whose forward is not the one the adapter assumes
OddWan = type("WanCausalConv3d", (WanCausalConv3d,), {
    "forward": lambda self, x, feat_cache=None, idx=0: WanCausalConv3d.forward(self, x)})


def test_wan_adapter_guard_leaves_an_unexpected_class_on_torch():
    model = nn.Sequential(WanCausalConv3d(2, 2, 3, padding=1), OddWan(2, 2, 3))
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.converted == [("0", "WanCausalConv3d")]
    (name, cls, why), = report.skipped
    assert name == "1" and "WanCausalConv3d adapter: forward('x', 'feat_cache', 'idx')" in why
    double = nn.Sequential(WanCausalConv3d(2, 2, 3, padding=1)).double()
    _, report = convnd.nn.convert(double, return_report=True)
    assert "float64" in report.skipped[0][2] and type(double[0]) is WanCausalConv3d
