"""convnd.distributed (SPEC section 14) on CPUs: gloo process groups of 2, 3 and 4 ranks, each a
process started with torch.multiprocessing (spawn), CPU tensors on the emulated device.

- halo_conv == the whole convolution's rows, bit for bit in f32 (and f16/bf16), split along H
  and W of conv2d, H of conv3d and L of conv1d: stride 2, dilation 2, asymmetric and negative
  padding, uneven shards and shards smaller than the halo; with the interior/boundary overlap
  and without; every rank and the whole on the same forced schedule:config.
- its gradients (x, w, b) equal the whole convolution's within f32 tolerance.
- parallelize() runs a small VAE decoder (Conv2d, GroupNorm, SiLU, nearest upsampling, a
  residual add) sharded 2- and 4-way equal to the unsharded PyTorch model, outputs and every
  gradient.
- bad input: shards of inconsistent shapes or dtypes across ranks, a group of size 1, a wrong
  sizes list: a ValueError on every rank, no hang.
Each spawn has a deadline; the collectives time out after 30 s."""
import datetime
import os
import tempfile
import time
import traceback

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from conftest import SEED
from wan_layers import WanCausalConv3d

DEADLINE_S = 240


def _worker(rank, world, init_file, scenario, seed, queue):
    try:
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=30))
        globals()[scenario](rank, world, seed)
        queue.put((rank, None))
    except BaseException:  # noqa: BLE001  everything goes back to the parent
        queue.put((rank, traceback.format_exc()))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def run_ranks(scenario, world):
    """Runs scenario(rank, world, seed) on `world` gloo ranks; fails with every rank's
    traceback, or when a rank does not finish before the deadline."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        procs = [ctx.Process(target=_worker, args=(r, world, init_file, scenario.__name__, SEED,
                                                   queue)) for r in range(world)]
        for p in procs:
            p.start()
        results, deadline = {}, time.monotonic() + DEADLINE_S
        while len(results) < world and time.monotonic() < deadline:
            try:
                rank, err = queue.get(timeout=1)
                results[rank] = err
            except Exception:  # queue.Empty
                if not any(p.is_alive() for p in procs) and queue.empty():
                    break
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    missing = [r for r in range(world) if r not in results]
    errors = {r: e for r, e in results.items() if e}
    if missing or errors:
        text = "".join(f"\n--- rank {r} ---\n{e}" for r, e in sorted(errors.items()))
        pytest.fail(f"{scenario.__name__} on {world} ranks: ranks {missing} did not finish in "
                    f"{DEADLINE_S} s{text}" if missing else
                    f"{scenario.__name__} on {world} ranks failed:{text}")


# ---- the scenarios (run in every rank) ------------------------------------------------------

# (name, dims, N, Ci, Co, I, K, S, D, P0, P1, tensor dim, dtype, channels-last, schedule, sizes)
CASES = [
    ("conv2d_h_same", 2, 2, 3, 4, (12, 7), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 2,
     torch.float32, False, "direct", None),
    ("conv2d_w_s2_d2_asym", 2, 1, 3, 2, (6, 13), (3, 3), (1, 2), (1, 2), (1, 3), (1, -1), 3,
     torch.float32, False, "direct", None),
    ("conv3d_h", 3, 1, 2, 3, (3, 10, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), (1, 1, 1),
     3, torch.float32, False, "direct", None),
    ("conv3d_w_s2_asym", 3, 1, 3, 2, (3, 4, 11), (3, 2, 3), (1, 1, 2), (1, 1, 1), (1, 0, 2),
     (1, 1, -1), 4, torch.float32, False, "direct", None),
    ("conv1d_tiny_shards", 1, 2, 2, 3, (13,), (5,), (1,), (1,), (2,), (2,), 2, torch.float32,
     False, "direct", "tiny"),
    ("conv2d_neg_pad_bf16_cl", 2, 1, 4, 4, (12, 5), (3, 3), (2, 1), (1, 1), (-1, 1), (2, 1), 2,
     torch.bfloat16, True, "direct", None),
    ("conv2d_h_igemm_simt_cl", 2, 2, 8, 12, (11, 6), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 2,
     torch.float32, True, "igemm_simt:32x32x8_s2", None),
    ("conv2d_h_s2_igemm_tc_f16_cl", 2, 1, 16, 16, (10, 8), (3, 3), (2, 2), (1, 1), (1, 1),
     (0, 0), 2, torch.float16, True, "igemm_tc:32x64x32_s2", None),
]


def _inputs(case, seed, grad=False):
    _, dims, N, Ci, Co, I, K, S, D, P0, P1, dim, dtype, cl, schedule, sizes = case
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(N, Ci, *I, generator=g) * 2 - 1
    w = torch.rand(Co, Ci, *K, generator=g) * 2 - 1
    b = torch.rand(Co, generator=g) * 2 - 1
    x, w, b = x.to(dtype), w.to(dtype), b.to(dtype)
    if cl:
        fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
        x = x.contiguous(memory_format=fmt) if dims > 1 else x
        w = w.contiguous(memory_format=fmt) if dims > 1 else w
    return x, w, b


def _sizes(case, world):
    import convnd.distributed as cd
    total = case[5][case[11] - 2]
    if case[15] == "tiny":  # shards of one row but the last: smaller than the 4-row halo
        return [1] * (world - 1) + [total - (world - 1)]
    return cd.shard_sizes(total, world)


def halo_bitwise(rank, world, seed):
    import convnd
    import convnd.distributed as cd
    for case in CASES:
        name, dims, N, Ci, Co, I, K, S, D, P0, P1, dim, dtype, cl, schedule, _ = case
        x, w, b = _inputs(case, seed + 1)
        whole = convnd.conv_nd(x, w, b, stride=S, dilation=D, padding_before=P0,
                               padding_after=P1, schedule=schedule)
        sizes = _sizes(case, world)
        start = sum(sizes[:rank])
        shard = x.narrow(dim, start, sizes[rank]).clone()  # this rank's own memory
        for rule in ("window", "aligned"):
            rows = cd.shard_rows(I[dim - 2], K[dim - 2], stride=S[dim - 2], dilation=D[dim - 2],
                                 padding_before=P0[dim - 2], padding_after=P1[dim - 2],
                                 begin=start, size=sizes[rank], rows=rule)
            want = whole.narrow(dim, rows["out_begin"], rows["out_end"] - rows["out_begin"])
            for overlap in (True, False):
                y = cd.halo_conv(shard, w, b, dim=dim, stride=S, dilation=D, padding_before=P0,
                                 padding_after=P1, rows=rule, schedule=schedule,
                                 overlap=overlap)
                assert y.shape == want.shape, f"{name} rank {rank}: {y.shape} vs {want.shape}"
                assert torch.equal(y, want), (
                    f"{name} rank {rank} rows={rule} overlap={overlap} sizes={sizes}: "
                    f"{(y != want).sum().item()} of {y.numel()} outputs differ from the whole "
                    "conv")
        # out=: into this rank's slice of a preallocated gathered output (the last rule's rows)
        gathered = torch.full_like(whole, float("nan"))
        into = gathered.narrow(dim, rows["out_begin"], rows["out_end"] - rows["out_begin"])
        cd.halo_conv(shard, w, b, dim=dim, stride=S, dilation=D, padding_before=P0,
                     padding_after=P1, rows=rule, schedule=schedule, out=into)
        assert torch.equal(into, want), f"{name} rank {rank}: out= differs"
        rest = torch.ones(gathered.shape[dim], dtype=torch.bool)
        rest[rows["out_begin"]:rows["out_end"]] = False
        assert gathered.index_select(dim, rest.nonzero().flatten()).isnan().all(), (
            f"{name} rank {rank}: out= wrote outside its rows")


def halo_grads(rank, world, seed):
    import convnd
    import convnd.distributed as cd
    by_name = {c[0]: c for c in CASES}
    for case in (by_name[n] for n in ("conv2d_h_same", "conv2d_w_s2_d2_asym", "conv3d_w_s2_asym",
                                      "conv1d_tiny_shards", "conv2d_h_igemm_simt_cl")):
        name, dims, N, Ci, Co, I, K, S, D, P0, P1, dim, dtype, cl, schedule, _ = case
        x, w, b = _inputs(case, seed + 2)
        x.requires_grad_(), w.requires_grad_(), b.requires_grad_()
        whole = convnd.conv_nd(x, w, b, stride=S, dilation=D, padding_before=P0,
                               padding_after=P1)
        g = torch.rand(whole.shape, generator=torch.Generator().manual_seed(seed + 3)) * 2 - 1
        (whole * g).sum().backward()
        sizes = _sizes(case, world)
        start = sum(sizes[:rank])
        shard = x.detach().narrow(dim, start, sizes[rank]).clone().requires_grad_()
        w2 = w.detach().clone().requires_grad_()
        b2 = b.detach().clone().requires_grad_()
        rule = "aligned" if case[0] in ("conv2d_h_same", "conv3d_w_s2_asym") else "window"
        y = cd.halo_conv(shard, w2, b2, dim=dim, stride=S, dilation=D, padding_before=P0,
                         padding_after=P1, rows=rule)
        rows = cd.shard_rows(I[dim - 2], K[dim - 2], stride=S[dim - 2], dilation=D[dim - 2],
                             padding_before=P0[dim - 2], padding_after=P1[dim - 2], begin=start,
                             size=sizes[rank], rows=rule)
        (y * g.narrow(dim, rows["out_begin"], y.shape[dim])).sum().backward()
        # f32 sums over at most a few hundred products of values in [-1, 1]: 1e-5 of the scale
        for got, ref, what in ((shard.grad, x.grad.narrow(dim, start, sizes[rank]), "dx"),
                               (w2.grad, w.grad, "dw"), (b2.grad, b.grad, "db")):
            scale = ref.abs().max().item() + 1
            err = (got - ref).abs().max().item()
            assert err <= 1e-5 * scale, f"{name} rank {rank}: {what} off by {err} (scale {scale})"


class TinyDecoder(nn.Module):
    """A VAE decoder's layers: convs, group norms, SiLU, nearest 2x upsampling, a residual."""

    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 16, 3, padding=1)
        self.norm1 = nn.GroupNorm(4, 16)
        self.conv1 = nn.Conv2d(16, 16, 3, padding="same")
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv2 = nn.Conv2d(16, 8, 3, padding=1)
        self.norm2 = nn.GroupNorm(2, 8)
        self.conv_out = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        h = self.conv_in(x)
        h = self.conv1(nn.functional.silu(self.norm1(h))) + h
        h = self.conv2(self.up(h))
        return self.conv_out(nn.functional.silu(self.norm2(h)))


def vae_decoder(rank, world, seed):
    import convnd.distributed as cd
    torch.manual_seed(seed + 4)
    model = TinyDecoder()
    x = torch.rand(2, 4, 10, 6) * 2 - 1
    x.requires_grad_()
    y = model(x)
    g = torch.rand(y.shape, generator=torch.Generator().manual_seed(seed + 5)) * 2 - 1
    (y * g).sum().backward()
    ref_grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()

    skipped = cd.parallelize(model, dim=2)
    assert skipped == [], skipped
    assert sum(isinstance(m, cd.ShardedConv) for m in model.modules()) == 4
    sizes = cd.shard_sizes(10, world)
    start = sum(sizes[:rank])
    shard = x.detach().narrow(2, start, sizes[rank]).clone().requires_grad_()
    ys = model(shard)
    assert ys.shape[2] == 2 * sizes[rank], ys.shape
    want = y.detach().narrow(2, 2 * start, 2 * sizes[rank])
    scale = y.abs().max().item()
    err = (ys - want).abs().max().item()
    assert err <= 1e-5 * scale, f"rank {rank}: output off by {err} (scale {scale})"
    (ys * g.narrow(2, 2 * start, 2 * sizes[rank])).sum().backward()
    ref = x.grad.narrow(2, start, sizes[rank])
    err = (shard.grad - ref).abs().max().item()
    assert err <= 1e-5 * (ref.abs().max().item() + 1), f"rank {rank}: dx off by {err}"
    for n, p in model.named_parameters():
        key = n.replace(".conv.", ".").replace(".norm.", ".")
        ref = ref_grads[key]
        err = (p.grad - ref).abs().max().item()
        assert err <= 1e-4 * (ref.abs().max().item() + 1), f"rank {rank}: {n}.grad off by {err}"


class CausalBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = WanCausalConv3d(4, 8, 3, padding=1)
        self.norm = nn.GroupNorm(2, 8)
        self.conv2 = WanCausalConv3d(8, 4, 3, padding=1)

    def forward(self, x, cache=(None, None)):
        h = self.conv1(x, cache[0])
        return self.conv2(nn.functional.silu(self.norm(h)), cache[1]) + x


def causal_video_block(rank, world, seed):
    import convnd.distributed as cd
    torch.manual_seed(seed + 6)
    model = CausalBlock()
    x = torch.rand(1, 4, 3, 9, 5) * 2 - 1  # [N, C, T, H, W], sharded along H
    cache = (torch.rand(1, 4, 2, 9, 5) * 2 - 1, torch.rand(1, 8, 1, 9, 5) * 2 - 1)
    want = model(x, cache).detach()
    assert cd.parallelize(model, dim=3) == []
    assert sum(isinstance(m, cd.ShardedCausalConv) for m in model.modules()) == 2
    sizes = cd.shard_sizes(9, world)
    start = sum(sizes[:rank])
    part = lambda t: t.narrow(3, start, sizes[rank]).clone()  # noqa: E731
    got = model(part(x), (part(cache[0]), part(cache[1])))
    ref = want.narrow(3, start, sizes[rank])
    err = (got - ref).abs().max().item()
    assert err <= 1e-5 * (want.abs().max().item() + 1), f"rank {rank}: off by {err}"


def bad_inputs(rank, world, seed):
    import convnd.distributed as cd

    def expect_error(fn, needle):
        try:
            fn()
        except ValueError as e:
            assert needle in str(e), f"rank {rank}: {e!r} lacks {needle!r}"
            return
        raise AssertionError(f"rank {rank}: no error (expected {needle!r})")

    w = torch.rand(4, 3, 3, 3)
    # rank 1's shard is wider than rank 0's: every rank sees the table and refuses
    x = torch.rand(1, 3, 4, 6 if rank == 0 else 7)
    expect_error(lambda: cd.halo_conv(x, w, dim=2, padding=1), "rank 1: [1, 3, 4, 7]")
    # mismatched dtypes
    x = torch.rand(1, 3, 4, 6, dtype=torch.float32 if rank == 0 else torch.float16)
    expect_error(lambda: cd.halo_conv(x, w, dim=2, padding=1), "torch.float16")
    # a wrong sizes list (every rank passes it: nothing is exchanged)
    x = torch.rand(1, 3, 4, 6)
    expect_error(lambda: cd.halo_conv(x, w, dim=2, padding=1, sizes=[4, 4, 4]),
                 "must list the 2 ranks' shard sizes")
    # a spatial dim that is not one
    expect_error(lambda: cd.halo_conv(x, w, dim=1, padding=1), "dim=1 must name a spatial dim")
    # a group of one rank (every rank joins both new groups, as torch.distributed requires)
    singles = [dist.new_group([r]) for r in range(world)]
    expect_error(lambda: cd.halo_conv(x, w, dim=2, padding=1, group=singles[rank]),
                 "sharding needs at least 2")
    expect_error(lambda: cd.halo_conv(x, w, dim=2, padding=1, rows="centered"),
                 "rows='centered' must be 'window' or 'aligned'")
    # after the refusals the ranks are still in step: a good call works
    y = cd.halo_conv(x, w, dim=2, padding=1, rows="aligned")
    assert y.shape == (1, 4, 4, 6), y.shape


# ---- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("world", [2, 3, 4])
def test_halo_conv_bit_for_bit(world):
    run_ranks(halo_bitwise, world)


@pytest.mark.parametrize("world", [2, 3])
def test_halo_conv_gradients(world):
    run_ranks(halo_grads, world)


@pytest.mark.parametrize("world", [2, 4])
def test_parallelize_vae_decoder(world):
    run_ranks(vae_decoder, world)


def test_parallelize_causal_video_block():
    run_ranks(causal_video_block, 3)


def test_halo_op_reads_halo_views():
    """torch.ops.convnd.conv_nd_halo with the prefix and suffix slices of bigger tensors (views,
    read in place) equals the conv of cat(prefix, x, suffix) on the same schedule, bit for bit;
    out= writes only its rows."""
    import convnd
    g = torch.Generator().manual_seed(SEED)
    big = torch.rand(2, 3, 12, 7, generator=g) * 2 - 1
    w = torch.rand(4, 3, 3, 3, generator=g) * 2 - 1
    b = torch.rand(4, generator=g) * 2 - 1
    prefix, x, suffix = big[:, :, 2:4], big[:, :, 4:8].clone(), big[:, :, 8:11]
    assert not prefix.is_contiguous() and not suffix.is_contiguous()
    args = ([1, 1], [1, 1], [0, 1], [-1, 1], 1, 0, "direct")
    y = torch.ops.convnd.conv_nd_halo(x, w, b, prefix, suffix, 0, *args)
    whole = convnd.conv_nd(torch.cat([prefix, x, suffix], 2), w, b, stride=[1, 1],
                           dilation=[1, 1], padding_before=[0, 1], padding_after=[-1, 1],
                           schedule="direct")
    assert torch.equal(y, whole)
    out = torch.full((2, 4, 9, 7), float("nan"))  # 6 rows: 2 + 4 + 3 - 1 (P1) - 3 + 1
    torch.ops.convnd.conv_nd_halo_out(x, w, b, prefix, suffix, 0, *args, out[:, :, 3:9])
    assert torch.equal(out[:, :, 3:9], whole) and out[:, :, :3].isnan().all()
    with pytest.raises(ValueError, match="suffix has dtype"):
        torch.ops.convnd.conv_nd_halo(x, w, b, prefix, suffix.double(), 0, *args)


def test_bad_input_raises_on_every_rank():
    run_ranks(bad_inputs, 2)
