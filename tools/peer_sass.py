#!/usr/bin/env python3
"""convnd's kernels beside CUTLASS's, through the same SASS MODEL (no GPU needed; run by CI).

tools/sass_model.py is our own model and has never been held against anything. This compiles
CUTLASS's implicit-GEMM convolution kernels (the headers of the PyPI `nvidia-cutlass` package,
pinned below) for sm_90/sm_90a with the repository's nvcc, matched to our configurations tile for
tile (PAIRS), finds each kernel's steady-state loop in its SASS exactly as static_check.py does for
ours, and prints one table: per MMA instruction of the loop, the instructions of each class;
registers, spills and occupancy; the model's shared-memory and issue ceilings; and the ratio of
convnd's model ceiling to CUTLASS's. Every figure is a MODEL figure, not a measurement.

It fails (exit 1) when a matched convnd configuration's model ceiling is below 0.9x CUTLASS's
(unless GAPS names the pair with the reason, a known gap another change closes), and with
--check-readme when bench/README.md's recorded table differs from this run's.

Our kernels come from a CMake CUDA build (--from-build DIR, as static_check.py reads them: no
compile) or, without it, are compiled here (the few units the pairs need).

Usage: tools/peer_sass.py [--from-build DIR] [--jobs N] [--keep DIR]
                            [--write-readme | --check-readme]
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_model  # noqa: E402
import static_check as sc  # noqa: E402  (tools, ptxas parsing, demangling, our objects)
import static_check_hopper as sch  # noqa: E402  (our Hopper kernels' shared memory)

CUTLASS_VERSION = "4.2.0.0"
README = os.path.join(sc.ROOT, "bench", "README.md")
BEGIN, END = "<!-- peer_sass: begin -->", "<!-- peer_sass: end -->"
RATIO_FLOOR = 0.9

# ---- the pairs: one of our instances (by sass_model's family/dtype/config/path) and a CUTLASS
# kernel of the same tile. CUTLASS 2.x (the sm80 multistage mma.sync kernels, compiled for sm_90)
# take the default kernel of their operator with IteratorAlgorithm::kOptimized; CUTLASS 3.x (sm90:
# TMA im2col + warp-specialized wgmma) the conv CollectiveBuilder with KernelImplicitTmaWarp-
# SpecializedSm90, CUTLASS's one sm90 conv schedule (its cooperative and ping-pong schedules are
# refused for conv): one consumer warpgroup owns the tile's rows, where our Hopper kernel splits
# them between two.
PAIRS = [
    # name, ours (family, dtype, config, path), CUTLASS kernel
    ("fprop 2-D f16 128x128x32", ("igemm_tc", "f16", "128x128x32_s3", "vec"),
     dict(gen=2, op="Fprop", dims=2, elt="half_t", tile=(128, 128, 32), warp=(64, 64), stages=3)),
    ("fprop 2-D bf16 128x128x32", ("igemm_tc", "bf16", "128x128x32_s3", "vec"),
     dict(gen=2, op="Fprop", dims=2, elt="bfloat16_t", tile=(128, 128, 32), warp=(64, 64),
          stages=3)),
    ("fprop 2-D f16 128x256x64", ("igemm_tc", "f16", "128x256x64_s4", "vec"),
     dict(gen=2, op="Fprop", dims=2, elt="half_t", tile=(128, 256, 64), warp=(64, 64), stages=4)),
    # our implicit GEMM is one instance for 1-, 2- and 3-D: its 3-D row is the same kernel
    ("fprop 3-D f16 128x128x32", ("igemm_tc", "f16", "128x128x32_s3", "vec"),
     dict(gen=2, op="Fprop", dims=3, elt="half_t", tile=(128, 128, 32), warp=(64, 64), stages=3)),
    # dgrad = our transposed convolution; CUTLASS's stride-1 (kUnity) optimized dgrad, its fast path
    ("dgrad 2-D f16 128x128x32", ("convT_tc", "f16", "128x128x32_s3", "vec"),
     dict(gen=2, op="Dgrad", dims=2, elt="half_t", tile=(128, 128, 32), warp=(64, 64), stages=3,
          stride="kUnity")),
    # wgrad: our channels-last vector path (wgrad_vec_tc; one instance for 1-, 2- and 3-D) against
    # CUTLASS 2.x's optimized Wgrad of the same tile (its 128x128 with 3 stages; our 64x64 runs 4)
    ("wgrad 2-D f16 128x128x32", ("wgrad_vec_tc", "f16", "128x128x32", "3 stages"),
     dict(gen=2, op="Wgrad", dims=2, elt="half_t", tile=(128, 128, 32), warp=(64, 64), stages=3)),
    ("wgrad 3-D f16 128x128x32", ("wgrad_vec_tc", "f16", "128x128x32", "3 stages"),
     dict(gen=2, op="Wgrad", dims=3, elt="half_t", tile=(128, 128, 32), warp=(64, 64), stages=3)),
    ("wgrad 2-D f16 64x64x32", ("wgrad_vec_tc", "f16", "64x64x32", "4 stages"),
     dict(gen=2, op="Wgrad", dims=2, elt="half_t", tile=(64, 64, 32), warp=(32, 32), stages=3)),
    ("sm90 fprop 2-D f16 128x128x64", ("hopper_igemm", "f16", "128x128x64_s6", "2-D"),
     dict(gen=3, op="kFprop", dims=2, elt="half_t", tile=(128, 128, 64))),
    ("sm90 fprop 2-D f16 128x256x64", ("hopper_igemm", "f16", "128x256x64_s4", "2-D"),
     dict(gen=3, op="kFprop", dims=2, elt="half_t", tile=(128, 256, 64))),
    ("sm90 fprop 3-D f16 128x128x64", ("hopper_igemm", "f16", "128x128x64_s6", "3-D"),
     dict(gen=3, op="kFprop", dims=3, elt="half_t", tile=(128, 128, 64))),
    ("sm90 dgrad 2-D f16 128x128x64", ("hopper_igemm", "f16", "128x128x64_s6", "2-D transposed"),
     dict(gen=3, op="kDgrad", dims=2, elt="half_t", tile=(128, 128, 64))),
]

# Pairs below RATIO_FLOOR that a known, named change closes: name -> why. A gap that is gone
# fails (remove it here with the fix), as sass_model.WAIVERS do.
GAPS = {
}

# Our units each pair's instance lives in (the build's object names; sharded files: per config).
UNITS = {"igemm_tc": "igemm_tc_{dtype}", "convT_tc": "convT_tc_{dtype}",
         "wgrad_vec_tc": "wgrad_vec_tc", "hopper_igemm": "hopper_igemm"}

LAYOUT = {2: "TensorNHWC", 3: "TensorNDHWC"}

CUTLASS2 = """// CUTLASS 2.x implicit-GEMM conv{dims}d {op_lower}, sm80 multistage mma.sync, for sm_90 SASS.
#include "cutlass/cutlass.h"
#include "cutlass/conv/kernel/default_conv{dims}d_{op_lower}.h"
#include "cutlass/conv/kernel/implicit_gemm_convolution.h"
#include "cutlass/device_kernel.h"
#include "cutlass/epilogue/thread/linear_combination.h"
using E = cutlass::{elt};
using L = cutlass::layout::{layout};
using Kernel = typename cutlass::conv::kernel::DefaultConv{dims}d{op}<
    E, L, E, L, E, L, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<{bm}, {bn}, {bk}>, cutlass::gemm::GemmShape<{wm}, {wn}, {bk}>,
    cutlass::gemm::GemmShape<16, 8, 16>, cutlass::epilogue::thread::LinearCombination<E, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, {stages}, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized{stride}>::Kernel;
template __global__ void cutlass::Kernel<Kernel>(Kernel::Params);
// what the model needs and the SASS does not say: the block's threads, shared memory and stages
__device__ int convnd_peer_info[3] = {{Kernel::kThreadCount, int(sizeof(typename Kernel::SharedStorage)),
                                      {stages}}};
"""

CUTLASS3 = """// CUTLASS 3.x sm90 conv{dims}d {op}: TMA im2col + warp-specialized wgmma (its one sm90 conv
// schedule: one producer and one consumer warpgroup; dispatch_policy.hpp refuses the persistent ones).
#include "cutlass/cutlass.h"
#include "cutlass/kernel_hardware_info.hpp"
#include "cute/tensor.hpp"
#include "cutlass/conv/convolution.h"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
using namespace cute;
using Elt = cutlass::{elt};
using L = cutlass::layout::{layout};
constexpr int A = 8;
constexpr auto Op = cutlass::conv::Operator::{op};
using TileMNK = Shape<_{bm}, _{bn}, Shape<_{bk}>>;
using Cluster = Shape<_1, _1, _1>;
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileMNK, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, Elt, L, A, Elt, L, A,
    cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;
using Main = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Op, Elt, L, A, Elt, L, A, float, TileMNK, Cluster,
    cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epi::SharedStorage))>,
    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;
using Problem = cutlass::conv::ConvProblemShape<Op, Main::DispatchPolicy::NumSpatialDimensions>;
using K = cutlass::conv::kernel::ConvUniversal<Problem, Main, Epi>;
template __global__ void cutlass::device_kernel<K>(CUTLASS_GRID_CONSTANT typename K::Params const);
__device__ int convnd_peer_info[3] = {{int(K::MaxThreadsPerBlock), int(K::SharedStorageSize),
                                      Main::DispatchPolicy::Stages}};
"""


def peer_source(peer):
    bm, bn, bk = peer["tile"]
    fields = dict(dims=peer["dims"], elt=peer["elt"], layout=LAYOUT[peer["dims"]], bm=bm, bn=bn,
                  bk=bk, op=peer["op"])
    if peer["gen"] == 2:
        wm, wn = peer["warp"]
        stride = f", cutlass::conv::StrideSupport::{peer['stride']}" if "stride" in peer else ""
        return CUTLASS2.format(op_lower=peer["op"].lower(), wm=wm, wn=wn, stages=peer["stages"],
                               stride=stride, **fields)
    return CUTLASS3.format(**fields)


def peer_label(peer, info):
    bm, bn, bk = peer["tile"]
    if peer["gen"] == 2:
        return (f"CUTLASS 2.x Conv{peer['dims']}d{peer['op']} {bm}x{bn}x{bk}_s{peer['stages']} "
                f"warp {peer['warp'][0]}x{peer['warp'][1]}" +
                (f" {peer['stride']}" if "stride" in peer else ""))
    return (f"CUTLASS 3.x sm90 {peer['op'][1:]} {peer['dims']}-D {bm}x{bn}x{bk}_s{info['stages']} "
            "warpspecialized")


def cutlass_include():
    """The include folders of nvidia-cutlass CUTLASS_VERSION, installed from PyPI into a cache
    folder when missing (headers only; its Python parts are not used)."""
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "convnd-peer-sass", "nvidia-cutlass-" + CUTLASS_VERSION)
    src = os.path.join(cache, "cutlass_library", "source")
    if not os.path.exists(os.path.join(src, "include", "cutlass", "cutlass.h")):
        print(f"peer_sass: installing nvidia-cutlass {CUTLASS_VERSION} from PyPI into {cache}",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "--target", cache,
                        f"nvidia-cutlass=={CUTLASS_VERSION}"], check=True)
    return [os.path.join(src, "include"), os.path.join(src, "tools", "util", "include")]


def info_values(cubin, cuobjdump):
    """{threads, smem, stages} of a peer's cubin: the three words of its one initialized global,
    convnd_peer_info (the generated source's compile-time constants)."""
    out = subprocess.run([cuobjdump, "-elf", cubin], capture_output=True, text=True).stdout
    m = re.search(r"^\.nv\.global\.init\n((?:0x[0-9a-f]+\s*)+)", out, re.M)
    words = [int(w, 16) for w in m.group(1).split()] if m else []
    return dict(zip(("threads", "smem", "stages"), words)) if len(words) == 3 else {}


def compile_peer(index, peer, nvcc, includes, cuobjdump, nvdisasm_dir, workdir):
    """(ptxas info, SASS functions, demangled names, info values, seconds, error) of one
    CUTLASS kernel."""
    base = os.path.join(workdir, f"peer{index}")
    with open(base + ".cu", "w") as f:
        f.write(peer_source(peer))
    arch = "sm_90a" if peer["gen"] == 3 else sc.ARCH
    cmd = [nvcc, "-cubin", f"-arch={arch}", "-O2", "-std=c++17", "--expt-relaxed-constexpr",
           "-DNDEBUG", "-Xptxas", "-v", "-o", base + ".cubin", base + ".cu"]
    for inc in includes:
        cmd[1:1] = ["-I", inc]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if r.returncode != 0:
        return None, None, None, None, seconds, r.stdout[-3000:] + r.stderr[-3000:]
    ptxas, sass, err = sc.disassemble(base + ".cubin", r.stdout + r.stderr, cuobjdump,
                                      nvdisasm_dir)
    if ptxas is None:
        return None, None, None, None, seconds, err
    functions = sass[1]
    names = sc.demangle(sorted(functions))
    return ptxas, functions, names, info_values(base + ".cubin", cuobjdump), seconds, ""


def hopper_family(dem):
    """(dtype, config, path) of one of our Hopper kernel instances
    (hopper_igemm_kernel<T, BN, STAGES, TMA rank, TRANSPOSED>), or None."""
    m = sch.KERNEL.search(dem)
    if not m:
        return None
    t, bn, stages, rank, tr = m["t"], m["bn"], m["stages"], m["rank"], m["tr"]
    return (sass_model.DTYPE.get(t, t), f"128x{bn}x64_s{stages}",
            f"{int(rank) - 2}-D" + (" transposed" if tr == "true" else ""))


# ---- the model of one kernel ---------------------------------------------------------------------
def model_mma_sync(instrs, dtype, ldsm_ways, cp_ways):
    loop = sass_model.main_loop(instrs, "hmma")
    if not loop:
        return {"error": "no HMMA main loop found"}
    mix = loop[2]
    out = {"kind": "mma.sync", "mix": mix, "mma": mix.get("hmma", 0),
           "mma_shape": "/".join(sorted(mix["hmma_shape"]))}
    out.update(sass_model.mma_sync_ceilings(mix, dtype, ldsm_ways, cp_ways))
    return out


def model_hgmma(instrs, dtype, tile, consumer_warpgroups):
    consumer = sass_model.main_loop(instrs, "hgmma")
    producer = sass_model.main_loop(instrs, "tma")
    if not consumer or not producer:
        return {"error": "no HGMMA consumer loop or TMA producer loop found"}
    out = {"kind": "wgmma", "mix": consumer[2], "producer": producer[2],
           "mma": consumer[2].get("hgmma", 0),
           "mma_shape": "/".join(sorted(consumer[2]["hgmma_shape"]))}
    out.update(sass_model.hgmma_ceilings(consumer[2], producer[2], dtype, tile,
                                         consumer_warpgroups))
    # how many wgmma batches the consumer leaves in flight at its wait (WARPGROUP.DEPBAR.LE gsb0, N)
    lo, hi = consumer[0], consumer[1]
    waits = [int(m.group(1), 16) for _, _, t in instrs[lo:hi + 1]
             for m in [re.search(r"WARPGROUP\.DEPBAR\.LE gsb0, (0x[0-9a-f]+)", t)] if m]
    out["in_flight"] = min(waits) if waits else None
    return out


# CUTLASS's sm80 shared-memory layouts (TensorOpMultiplicandCongruous/Crosswise) are XOR-swizzled
# so that its ldmatrix reads and 16-byte cp.async writes are conflict-free by construction: the
# model takes one way for both, as it computes for our 16-bit swizzled tiles.
CUTLASS_WAYS = (1.0, 1.0)


def ours_model(family, dtype, instrs, dem):
    if family == "hopper_igemm":
        bn = int(sch.KERNEL.search(dem)["bn"])
        return model_hgmma(instrs, dtype, (128, bn, 64), 2), 384
    fam = sass_model.tensor_core_family(dem)
    _, _, _, threads, ways, _ = fam
    return (model_mma_sync(instrs, dtype, max(ways["ldsm A"], ways["ldsm B"]),
                           max(ways["cp.async A"], ways["cp.async B"])), threads)


def peer_model(peer, instrs):
    dtype = {"half_t": "f16", "bfloat16_t": "bf16"}[peer["elt"]]
    if peer["gen"] == 3:
        return model_hgmma(instrs, dtype, peer["tile"], 1)
    return model_mma_sync(instrs, dtype, *CUTLASS_WAYS)


# ---- our instances ------------------------------------------------------------------------------
def our_instances(args, cuobjdump, nvdisasm_dir, workdir):
    """{(family, dtype, config, path): (ptxas info, instrs, demangled)} of the instances PAIRS
    name, from the build's objects or compiled here."""
    wanted = {p[1] for p in PAIRS}
    bases = {UNITS[f].format(dtype=d) for f, d, _, _ in wanted}
    if args.from_build:  # the Hopper tier from the sm_90a image, the rest from sm_90's
        units = [u for arch in (sc.ARCH, "sm_90a") for u in sc.build_objects(args.from_build, arch)
                 if u[0].split(".")[0] in bases and
                 arch == sc.unit_declarations(u[0].split(".")[0])[1]]
        work = lambda u: sc.read_object(u, cuobjdump, nvdisasm_dir)  # noqa: E731
    else:
        nvcc = sc.find_tool("nvcc")
        files = [sc.kernel_path(b) for b in sorted(bases)]
        units = sc.units_of(files)
        work = lambda u: sc.compile_one(u, nvcc, cuobjdump, nvdisasm_dir, workdir)  # noqa: E731
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(work, units))
    found, errors = {}, []
    for base, ptxas, sass, err in results:
        if ptxas is None:
            errors.append(f"{base}: {err[-2000:]}")
            continue
        functions = sass[1]
        names = sc.demangle(sorted(ptxas))
        for mangled, dem in names.items():
            if base == "hopper_igemm":
                key = hopper_family(dem)
                key = key and ("hopper_igemm",) + key
            else:
                fam = sass_model.tensor_core_family(dem)
                key = fam and (fam[0], fam[1], fam[2], fam[5])
            if key in wanted:
                found[key] = (ptxas[mangled], functions.get(mangled, []), dem)
    return found, errors


# ---- the table -----------------------------------------------------------------------------------
COLUMNS = ["pair", "kernel", "regs", "spill", "threads", "occ", "loop", "MMA", "ins/MMA",
           "LDSM", "LDS+STS", "LDGSTS/TMA", "LDG", "int", "mov", "sync", "other", "smem%",
           "issue%", "ceiling%", "ratio"]


def row(pair, label, info, threads, smem, model, ratio):
    mix = model.get("mix", {})
    n = model.get("mma") or 0
    per = lambda v: f"{v / n:.2f}" if n else "-"  # noqa: E731
    pct = lambda v: f"{100 * v:.0f}" if v is not None else "-"  # noqa: E731
    occ = sass_model.occupancy(info["regs"], smem, threads) if threads else None
    loads = mix.get("ldgsts", 0) + mix.get("tma", 0) + model.get("producer", {}).get("tma", 0)
    sync = mix.get("bar", 0) + mix.get("mbarrier", 0) + mix.get("warpgroup", 0)
    shape = model.get("mma_shape", "")
    return [pair, label, str(info["regs"]), str(info["spill"]), str(threads or "-"),
            str(occ) if occ is not None else "-", str(mix.get("instr", "-")),
            f"{n}x{shape}" if n else "-", per(mix.get("instr", 0)), per(mix.get("ldsm", 0)),
            per(mix.get("lds", 0) + mix.get("sts", 0)), per(loads), per(mix.get("ldg", 0)),
            per(mix.get("int", 0)), per(mix.get("move", 0)), per(sync), per(mix.get("other", 0)),
            pct(model.get("smem_ceiling")), pct(model.get("issue_ceiling")),
            pct(model.get("ceiling")), ratio]


def markdown(rows):
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


NOTES = (
    "MODEL figures (tools/sass_model.py on each kernel's sm_90/sm_90a SASS), not measurements. "
    "loop = instructions of the steady-state loop (mma.sync: the innermost loop holding the most "
    "HMMA; wgmma: the consumer warpgroup's loop, the producer's TMA loop beside it); per MMA "
    "instruction (HMMA, or a warpgroup's HGMMA): all instructions, LDSM, LDS+STS, LDGSTS or "
    "UTMALDG (producer loop), LDG, integer/predicate, moves, barriers and mbarrier/warpgroup "
    "synchronisation, the rest; smem% and issue% = the model's ceilings as % of tensor peak "
    "(mma.sync: per warp and k-tile, ldmatrix/LDS/STS/cp.async wavefronts x bank-conflict ways, "
    "CUTLASS's swizzled layouts taken as conflict-free; wgmma: per block k-tile, the HGMMA operand "
    "reads and TMA writes, and the instructions of the busiest scheduler); ratio = convnd's "
    "ceiling / CUTLASS's.")


def readme_block(table, ranking):
    gaps = ["Known gaps below 0.9x (`GAPS`):"] + [f"- {k}: {v}" for k, v in GAPS.items()] \
        if GAPS else ["Known gaps below 0.9x: none."]
    return "\n".join([BEGIN, "", f"CUTLASS {CUTLASS_VERSION} (PyPI nvidia-cutlass), nvcc "
                      f"{nvcc_version()}, `tools/peer_sass.py`:", "", table, "", NOTES, "",
                      "\n".join(gaps), "", ranking, "", END])


def nvcc_version():
    nvcc = sc.find_tool("nvcc")
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout if nvcc else ""
    m = re.search(r"release ([\d.]+)", out)
    return m.group(1) if m else "?"


def ranking_text(results):
    """Issue 31 item 5: where the model ranks two CUTLASS configurations of one class, the order
    it gives, beside what CUTLASS itself chooses for that class."""
    by = {name: m for name, _, _, m in results if m and "ceiling" in m}
    lines = []
    for a, b, cutlass_says in RANKINGS:
        if a in by and b in by:
            ca, cb = by[a]["ceiling"], by[b]["ceiling"]
            first = a if ca >= cb else b
            lines.append(f"- the model ranks CUTLASS's {a} "
                         f"({100 * ca:.0f}%) {'above' if ca > cb else 'level with' if ca == cb else 'below'} "
                         f"{b} ({100 * cb:.0f}%); {cutlass_says(first)}")
    return "Model ranking against CUTLASS's own choices:\n" + "\n".join(lines)


RANKINGS = [
    ("fprop 2-D f16 128x256x64", "fprop 2-D f16 128x128x32",
     lambda first: "CUTLASS's default sm80 f16 tensor-op configuration "
     "(gemm/device/default_gemm_configuration.h) is 128x256x64 with 64x64 warps: "
     + ("agrees." if first.endswith("128x256x64") else "DISAGREES.")),
    ("sm90 fprop 2-D f16 128x256x64", "sm90 fprop 2-D f16 128x128x64",
     lambda first: "CUTLASS's profiler list of sm90 conv kernels (cutlass_library/generator.py, "
     "GenerateSM90_Conv3x) ships 64x64x64 tiles on 2x1/1x2 clusters only, its comment saying it "
     "lists the best-performing ones: the model, which has no clusters, TMA multicast or wave "
     "quantization, prefers the larger tile, and CUTLASS's 128x256 (one consumer warpgroup) "
     "spills, which the model counts only as issued instructions. A disagreement recorded, "
     "not a reason to adjust the model without a measurement."),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from-build", metavar="DIR", help="read our kernels from the CMake CUDA "
                    "build in DIR (as static_check.py --from-build) instead of compiling them")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--keep", help="keep the generated CUTLASS sources and cubins in this folder")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--write-readme", action="store_true",
                       help="write the table into bench/README.md between its markers")
    group.add_argument("--check-readme", action="store_true",
                       help="fail when bench/README.md's table differs from this run's")
    args = ap.parse_args()

    nvcc = sc.find_tool("nvcc")
    if not nvcc:
        print("peer_sass: nvcc not found", file=sys.stderr)
        return 2
    cuobjdump, nvdisasm_dir = sc.sass_tools()
    includes = cutlass_include()
    workdir = args.keep or tempfile.mkdtemp(prefix="convnd-peer-sass-")
    os.makedirs(workdir, exist_ok=True)
    failures = []

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        peers = list(pool.map(lambda ip: compile_peer(ip[0], ip[1][2], nvcc, includes, cuobjdump,
                                                      nvdisasm_dir, workdir), enumerate(PAIRS)))
    peer_seconds = time.monotonic() - start
    ours, errors = our_instances(args, cuobjdump, nvdisasm_dir, workdir)
    failures += errors

    rows, results = [], []
    for (name, key, peer), (ptxas, functions, names, info, seconds, err) in zip(PAIRS, peers):
        if ptxas is None:
            failures.append(f"{name}: CUTLASS kernel did not compile:\n{err}")
            continue
        kernel = list(ptxas)
        if len(kernel) != 1:
            failures.append(f"{name}: expected one CUTLASS kernel, found {len(kernel)}")
            continue
        if not info:
            failures.append(f"{name}: no convnd_peer_info in the CUTLASS cubin")
            continue
        pinfo, pmodel = ptxas[kernel[0]], peer_model(peer, functions.get(kernel[0], []))
        if key not in ours:
            failures.append(f"{name}: our instance {key} not found")
            continue
        oinfo, instrs, dem = ours[key]
        omodel, othreads = ours_model(key[0], key[1], instrs, dem)
        for who, m in (("convnd", omodel), ("CUTLASS", pmodel)):
            if "error" in m:
                failures.append(f"{name}: {who}: {m['error']}")
        if oinfo["spill"]:  # CUTLASS's spills are its own, shown in the table
            failures.append(f"{name}: convnd's kernel spills {oinfo['spill']} bytes")
        if "ceiling" not in omodel or "ceiling" not in pmodel:
            continue
        ratio = omodel["ceiling"] / pmodel["ceiling"]
        results.append((name, key, ratio, pmodel))
        osmem = oinfo["smem"] + (sch.dynamic_smem(dem) if key[0] == "hopper_igemm" else
                                 sc.dynamic_smem(dem))
        label = f"convnd {key[0]} {key[1]} {key[2]} {key[3]}"
        rows.append(row(name, label, oinfo, othreads, osmem, omodel, f"**{ratio:.2f}**"))
        rows.append(row("", peer_label(peer, info), pinfo, info["threads"],
                        pinfo["smem"] + info["smem"], pmodel, ""))
        if ratio + 1e-9 < RATIO_FLOOR:
            if name in GAPS:
                print(f"  GAP {name}: ratio {ratio:.2f} ({GAPS[name]})")
            else:
                failures.append(f"{name}: convnd's model ceiling is {ratio:.2f}x CUTLASS's "
                                f"(< {RATIO_FLOOR})")
    for name in GAPS:
        if any(r[0] == name and r[2] + 1e-9 >= RATIO_FLOOR for r in results):
            failures.append(f"gap '{name}' is closed: remove it from GAPS")

    table = markdown(rows)
    block = readme_block(table, ranking_text(results))
    print(table)
    print("\n" + NOTES)
    print("\n" + ranking_text(results))
    print(f"\npeer_sass: {len(results)} of {len(PAIRS)} pairs modelled; CUTLASS kernels compiled "
          f"in {peer_seconds:.0f} s ({args.jobs} at a time: " +
          ", ".join(f"{p[4]:.0f}" for p in peers) + " s each)")
    if args.write_readme or args.check_readme:
        text = open(README).read()
        if BEGIN not in text or END not in text:
            failures.append(f"bench/README.md has no {BEGIN} ... {END} section")
        else:
            head, rest = text.split(BEGIN, 1)
            recorded = BEGIN + rest.split(END, 1)[0] + END
            if args.write_readme:
                with open(README, "w") as f:
                    f.write(head + block + rest.split(END, 1)[1])
                print("peer_sass: bench/README.md's table written")
            elif recorded != block:
                failures.append("bench/README.md's peer table differs from this run's: run "
                                "tools/peer_sass.py --write-readme and commit it")
    print(f"peer_sass: {len(failures)} problem(s)")
    return sc.finish(failures, workdir, args.keep)


if __name__ == "__main__":
    sys.exit(main())
