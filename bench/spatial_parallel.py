#!/usr/bin/env python3
"""Whole vs R-way sharded convolution (convnd.distributed.halo_conv, SPEC section 14).

One process per rank (torch.multiprocessing spawn). Without a GPU the ranks use gloo and CPU
tensors on convnd's emulated device: every row is labelled EMULATED, and its times are CPU
emulation times, not GPU times (they show the exchange and the launches run; nothing about
speed on a GPU). With CUDA the ranks use NCCL, one GPU each when there are enough; with fewer
GPUs than ranks they share GPU 0 and the row is labelled SHARED-GPU: ranks as processes on one
GPU measure the sharding's overhead (exchange, extra launches), not a speedup.

For each shape it prints the whole conv's time on rank 0 alone, the slowest rank's sharded time
(all ranks at once, each call between barriers, median of --reps), the bytes of halo rows all ranks send per conv
next to the output's bytes, and whether the gathered rows equal the whole conv bit for bit.

    python3 bench/spatial_parallel.py --ranks 2 4        # needs the convnd package installed
"""
import argparse
import datetime
import os
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

# (name, x shape [N, C, spatial...], C_out, kernel, padding, sharded tensor dim, schedule)
SHAPES = [
    ("conv2d 3x3 same, split H", [1, 16, 48, 32], 16, 3, 1, 2, "igemm_simt:32x32x8_s2"),
    ("conv2d 3x3 stride 2, split H", [1, 16, 48, 32], 16, 3, 1, 2, "direct"),
    ("conv3d 3x3x3 (VAE decoder), split H", [1, 8, 4, 24, 16], 8, 3, 1, 3, "direct"),
]


def _time(fn, reps, device, barrier=True):
    times = []
    for _ in range(reps):
        if barrier:
            dist.barrier()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _rank(rank, world, init, backend, label, reps, queue):
    import convnd
    import convnd.distributed as cd
    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"file://{init}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    if backend == "nccl":
        n = torch.cuda.device_count()
        device = torch.device("cuda", rank if n >= world else 0)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    rows = []
    for name, shape, co, k, pad, dim, schedule in SHAPES:
        stride = 2 if "stride 2" in name else 1
        nd = len(shape) - 2
        g = torch.Generator().manual_seed(1)
        x = (torch.rand(*shape, generator=g) * 2 - 1).to(device)
        w = (torch.rand(co, shape[1], *[k] * nd, generator=g) * 2 - 1).to(device)
        kw = dict(stride=[stride] * nd, dilation=[1] * nd, padding_before=[pad] * nd,
                  padding_after=[pad] * nd)
        whole = convnd.conv_nd(x, w, schedule=schedule, **kw)
        # the whole conv on rank 0 alone (the others wait), so the ranks do not share the cores
        t_whole = _time(lambda: convnd.conv_nd(x, w, schedule=schedule, **kw), reps, device,
                        barrier=False) if rank == 0 else 0.0
        dist.barrier()
        sizes = cd.shard_sizes(shape[dim], world)
        start = sum(sizes[:rank])
        shard = x.narrow(dim, start, sizes[rank]).clone()
        y = cd.halo_conv(shard, w, dim=dim, sizes=sizes, schedule=schedule, **kw)
        t_shard = _time(lambda: cd.halo_conv(shard, w, dim=dim, sizes=sizes, schedule=schedule,
                                             **kw), reps, device)
        r = cd.shard_rows(shape[dim], k, stride=stride, padding_before=pad, padding_after=pad,
                          begin=start, size=sizes[rank])
        exact = torch.equal(y, whole.narrow(dim, r["out_begin"], r["out_end"] - r["out_begin"]))
        row_bytes = x.numel() // shape[dim] * x.element_size()
        sent = sum((r2["prefix"] + r2["suffix"]) for r2 in (
            cd.shard_rows(shape[dim], k, stride=stride, padding_before=pad, padding_after=pad,
                          begin=sum(sizes[:q]), size=sizes[q]) for q in range(world))) * row_bytes
        stats = torch.tensor([t_shard, float(exact)], dtype=torch.float64, device=device)
        gathered = [torch.empty_like(stats) for _ in range(world)]
        dist.all_gather(gathered, stats)
        if rank == 0:
            rows.append((label, name, world, t_whole, max(s[0].item() for s in gathered),
                         sent, whole.numel() * whole.element_size(),
                         all(s[1].item() == 1.0 for s in gathered)))
    if rank == 0:
        queue.put(rows)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    print("| device | shape | ranks | whole (ms) | sharded, slowest rank (ms) | halo bytes sent "
          "| output bytes | equal bit for bit |")
    print("|---|---|---|---|---|---|---|---|")
    ctx = mp.get_context("spawn")
    for world in args.ranks:
        label = "EMULATED" if not cuda else (
            "GPU" if torch.cuda.device_count() >= world else "SHARED-GPU")
        queue = ctx.Queue()
        with tempfile.TemporaryDirectory() as tmp:
            init = os.path.join(tmp, "rendezvous")
            procs = [ctx.Process(target=_rank, args=(r, world, init, backend, label, args.reps,
                                                     queue)) for r in range(world)]
            for p in procs:
                p.start()
            rows = queue.get(timeout=1800)
            for p in procs:
                p.join()
        for label_, name, w, tw, ts, sent, out, exact in rows:
            print(f"| {label_} | {name} | {w} | {tw * 1e3:.1f} | {ts * 1e3:.1f} | {sent} | {out} "
                  f"| {'yes' if exact else 'NO'} |")
    if not cuda:
        print(f"\nEMULATED: CPU emulation times (gloo, CPU tensors on the emulated device, "
              f"{os.cpu_count()} CPU cores shared by the ranks), not GPU times.")


if __name__ == "__main__":
    main()
