"""convert() on diffusers' video VAEs (tiny configs, random weights, CPU): every convolution runs on
convnd, the causal ones through their adapters (convnd.adapters) with the time padding fused and
the cache or replicated frames read as a halo in place, and the model equals the unconverted one.
diffusers is a test dependency (tests/install_python_deps.sh)."""
import copy
import traceback
from collections import Counter

import pytest
import torch

import convnd
from convnd import adapters
from conftest import SEED

diffusers = pytest.importorskip("diffusers")

WAN = dict(base_dim=8, z_dim=4, dim_mult=[1, 2], num_res_blocks=1, attn_scales=[],
           temperal_downsample=[True])

# model class, config, input frames, the adapted class names it must show
VAES = {
    "wan": ("AutoencoderKLWan", WAN, 5, {"WanCausalConv3d"}),
    "qwenimage": ("AutoencoderKLQwenImage", WAN, 5, {"QwenImageCausalConv3d"}),
    "cogvideox": ("AutoencoderKLCogVideoX", dict(
        block_out_channels=(8, 8), down_block_types=("CogVideoXDownBlock3D",) * 2,
        up_block_types=("CogVideoXUpBlock3D",) * 2, latent_channels=4, layers_per_block=1,
        norm_num_groups=4, temporal_compression_ratio=2), 9,
        {"CogVideoXCausalConv3d", "CogVideoXSafeConv3d"}),
    "ltx": ("AutoencoderKLLTXVideo", dict(  # causal encoder, non-causal decoder: both halos
        block_out_channels=(8,) * 4, decoder_block_out_channels=(8,) * 4,
        layers_per_block=(1,) * 5, decoder_layers_per_block=(1,) * 5,
        spatio_temporal_scaling=(True, True, False, False),
        decoder_spatio_temporal_scaling=(True, True, False, False),
        decoder_inject_noise=(False,) * 5, upsample_residual=(False,) * 4,
        upsample_factor=(1,) * 4, latent_channels=4, patch_size=1, patch_size_t=1,
        encoder_causal=True, decoder_causal=False), 5, {"LTXVideoCausalConv3d"}),
    "hunyuanvideo": ("AutoencoderKLHunyuanVideo", dict(  # replicate padding
        latent_channels=4, down_block_types=("HunyuanVideoDownBlock3D",) * 2,
        up_block_types=("HunyuanVideoUpBlock3D",) * 2, block_out_channels=(8, 8),
        layers_per_block=1, norm_num_groups=4, spatial_compression_ratio=2,
        temporal_compression_ratio=4), 5, {"HunyuanVideoCausalConv3d"}),
    "cosmos": ("AutoencoderKLCosmos", dict(
        latent_channels=4, encoder_block_out_channels=(8,) * 4, decode_block_out_channels=(8,) * 4,
        attention_resolutions=(8,), resolution=16, num_layers=1, patch_size=1,
        spatial_compression_ratio=4, temporal_compression_ratio=4), 9, {"CosmosCausalConv3d"}),
}


def _make(key, dtype=torch.float32):
    torch.manual_seed(SEED)
    cls, cfg, frames, _ = VAES[key]
    model = getattr(diffusers, cls)(**cfg).eval().to(dtype)
    return model, torch.randn(1, 3, frames, 16, 16, dtype=dtype)


def _convs(model):
    return [n for n, m in model.named_modules()
            if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d))]


class _Watch:
    """Counts the adapters' halo kinds (a cache, a broadcast frame before, one after) and fails
    on a torch.cat or F.pad inside an adapter's conv (HaloArgs.run)."""

    def __init__(self, mp):
        self.kinds = Counter()
        run = adapters.HaloArgs.run

        def watched(args):
            p, s = args.prefix, args.suffix
            self.kinds["cache" if p is not None and p.stride(2) != 0 else
                       "first frame" if p is not None else "no prefix"] += 1
            self.kinds["last frame" if s is not None else "no suffix"] += 1
            return run(args)
        mp.setattr(adapters.HaloArgs, "run", watched)
        for mod, fn in ((torch, "cat"), (torch.nn.functional, "pad")):
            mp.setattr(mod, fn, self._refuse_in_run(getattr(mod, fn), fn))

    @staticmethod
    def _refuse_in_run(real, what):
        def call(*a, **k):
            if any(f.name == "run" and f.filename.endswith("adapters.py")
                   for f in traceback.extract_stack()):
                raise AssertionError(f"an adapter's conv called {what}")
            return real(*a, **k)
        return call


@pytest.mark.parametrize("key", list(VAES))
def test_video_vae_converts_every_conv_and_equals_torch(key, monkeypatch):
    model, x = _make(key)
    ref = copy.deepcopy(model)
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.skipped == []
    assert sorted(n for n, _ in report.converted) == sorted(_convs(ref))
    names = {c for _, c in report.converted + report.adapted}
    assert VAES[key][3] <= names, names
    with torch.no_grad():
        want = ref(x).sample
        watch = _Watch(monkeypatch)
        got = model(x).sample
    scale = want.abs().max()
    torch.testing.assert_close(got, want, rtol=0, atol=1e-5 * scale)
    assert sum(watch.kinds.values()) > 0
    if key == "ltx":  # the non-causal decoder reads the last frame after
        assert watch.kinds["last frame"] > 0
    if key in ("wan", "qwenimage", "cogvideox"):  # chunked: the caches read as the prefix
        assert watch.kinds["cache"] > 0, watch.kinds
    if key in ("ltx", "cogvideox", "cosmos", "hunyuanvideo"):  # replicated first frames
        assert watch.kinds["first frame"] > 0, watch.kinds


def test_wan_chunked_decode_reads_its_cache_and_equals_torch(monkeypatch):
    """AutoencoderKLWan decodes one latent frame at a time, each conv's last frames kept as the
    next chunk's prefix: converted, every cache is read in place, the result equals torch's."""
    model, x = _make("wan")
    ref = copy.deepcopy(model)
    _, report = convnd.nn.convert(model, return_report=True)
    assert len(report.converted) == len(_convs(ref)) == 35 and report.skipped == []
    with torch.no_grad():
        z = ref.encode(x).latent_dist.mode()
        assert z.shape[2] == 3
        want = ref.decode(z).sample
        watch = _Watch(monkeypatch)
        got = model.decode(z).sample
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5 * want.abs().max())
        torch.testing.assert_close(model.encode(x).latent_dist.mode(), z, rtol=0,
                                   atol=1e-5 * z.abs().max())
    # 29 causal convs read a cache for each of the 2 latent frames after the first (those of
    # kernel 1 in time take no cache)
    assert watch.kinds["cache"] >= 2 * 10, watch.kinds


def test_wan_vae_gradients_equal_torch():
    model, x = _make("wan")
    ref = copy.deepcopy(model)
    convnd.nn.convert(model)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ref(xa).sample.square().mean().backward()
    model(xb).sample.square().mean().backward()
    torch.testing.assert_close(xb.grad, xa.grad, rtol=0, atol=1e-4 * xa.grad.abs().max())
    for (name, a), b in zip(ref.named_parameters(), model.parameters()):
        if a.grad is not None:
            torch.testing.assert_close(b.grad, a.grad, rtol=0, atol=1e-4 * a.grad.abs().max(),
                                       msg=name)


def test_float64_video_vae_stays_on_torch_and_the_report_says_so():
    model, x = _make("wan", torch.float64)
    classes = [type(m) for m in model.modules()]
    _, report = convnd.nn.convert(model, return_report=True)
    assert report.converted == [] and report.adapted == []
    assert len(report.skipped) == 35
    assert all("float64" in why for _, _, why in report.skipped)
    assert [type(m) for m in model.modules()] == classes
    with pytest.raises(ValueError, match="strict=True"):
        convnd.nn.convert(model, strict=True)


def test_a_wrapper_whose_attributes_differ_is_left_as_written_and_reported():
    """A HunyuanVideoCausalConv3d padding time on both sides is not what the adapter assumes: the
    wrapper keeps its own forward (its conv still runs on convnd) and the report says why."""
    from diffusers.models.autoencoders.autoencoder_kl_hunyuan_video import \
        HunyuanVideoCausalConv3d
    torch.manual_seed(SEED)
    layer = HunyuanVideoCausalConv3d(4, 6, 3)
    layer.time_causal_padding = (1, 1, 1, 1, 1, 1)
    ref = copy.deepcopy(layer)
    _, report = convnd.nn.convert(layer, return_report=True)
    (name, cls, why), = report.skipped
    assert cls == "HunyuanVideoCausalConv3d" and "(W, W, H, H, T, 0)" in why
    assert report.converted == [("conv", "Conv3d")] and report.adapted == []
    x = torch.randn(1, 4, 3, 5, 5)
    with torch.no_grad():
        torch.testing.assert_close(layer(x), ref(x), rtol=1e-5, atol=1e-5)


def test_schedules_names_the_adapters_plans():
    model, x = _make("ltx")
    convnd.nn.convert(model)
    found = convnd.nn.schedules(model, x)
    names = convnd._C.schedule_names()
    adapted = [(n, s) for n, s in found if n.endswith("conv1") or n.endswith("conv2")]
    assert adapted and all(s.split(":")[0] in names for _, s in found)


def _layer(module_path, cls, *args, **kwargs):
    import importlib
    torch.manual_seed(SEED)
    return getattr(importlib.import_module(f"diffusers.models.autoencoders.{module_path}"),
                   cls)(*args, **kwargs)


# each adapter's modes the tiny VAEs above do not use, one layer each
LAYERS = {
    "hunyuan constant": ("autoencoder_kl_hunyuan_video", "HunyuanVideoCausalConv3d",
                         (4, 6, 3), dict(pad_mode="constant")),
    "hunyuan replicate + conv padding": ("autoencoder_kl_hunyuan_video",
                                         "HunyuanVideoCausalConv3d", (4, 6, 3),
                                         dict(padding=(0, 1, 2))),
    "cogvideox replicate": ("autoencoder_kl_cogvideox", "CogVideoXCausalConv3d", (4, 6, 3),
                            dict(pad_mode="replicate")),
    "ltx2 reflect": ("autoencoder_kl_ltx2", "LTX2VideoCausalConv3d", (4, 6, 3),
                     dict(spatial_padding_mode="reflect")),
    "cosmos replicate, time stride 2": ("autoencoder_kl_cosmos", "CosmosCausalConv3d", (4, 6, 3),
                                        dict(pad_mode="replicate", stride=(2, 1, 1))),
}


@pytest.mark.parametrize("key", list(LAYERS))
def test_each_adapter_mode_equals_torch_with_and_without_gradients(key, monkeypatch):
    layer = _layer(*LAYERS[key][:2], *LAYERS[key][2], **LAYERS[key][3])
    ref = copy.deepcopy(layer)
    _, report = convnd.nn.convert(layer, return_report=True)
    assert report.skipped == [] and (report.adapted or report.converted)
    x = torch.randn(2, 4, 5, 6, 7)
    out = (lambda m, t: m(t)[0]) if "cogvideox" in key else (lambda m, t: m(t))
    with torch.no_grad():
        want = out(ref, x)
        _Watch(monkeypatch)
        torch.testing.assert_close(out(layer, x), want, rtol=1e-5, atol=1e-5)
        if "ltx2" in key:
            torch.testing.assert_close(layer(x, causal=False), ref(x, causal=False), rtol=1e-5,
                                       atol=1e-5)
    monkeypatch.undo()
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    out(ref, xa).square().sum().backward()
    out(layer, xb).square().sum().backward()
    torch.testing.assert_close(xb.grad, xa.grad, rtol=1e-4, atol=1e-4)


def test_cogvideox_cache_chained_over_chunks_equals_the_whole():
    """CogVideoXCausalConv3d returns the last kernel_size - 1 frames in front of its conv as the
    next call's cache: chunks of 2, 1 and 2 frames (a chunk shorter than the cache included)
    equal one call over the 5 frames, and each returned cache equals torch's."""
    layer = _layer("autoencoder_kl_cogvideox", "CogVideoXCausalConv3d", 4, 6, 3)
    ref = copy.deepcopy(layer)
    convnd.nn.convert(layer)
    x = torch.randn(1, 4, 5, 6, 7)
    with torch.no_grad():
        whole, _ = ref(x)
        cache, cache_ref, outs = None, None, []
        for t0, t1 in ((0, 2), (2, 3), (3, 5)):
            y, cache = layer(x[:, :, t0:t1], cache)
            _, cache_ref = ref(x[:, :, t0:t1], cache_ref)
            torch.testing.assert_close(cache, cache_ref, rtol=0, atol=0)
            outs.append(y)
    torch.testing.assert_close(torch.cat(outs, 2), whole, rtol=1e-5, atol=1e-5)
