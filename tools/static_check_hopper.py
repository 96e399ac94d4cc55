#!/usr/bin/env python3
"""Static check of the Hopper tier (the sm_90a image): signatures, resources, model.

Compiles each families/*/*.cu of the sm_90a image (its convnd-image line) for sm_90a (-Xptxas -v), disassembles it, and fails (exit 1)
when a kernel instance
  - lacks a SASS signature of the design: HGMMA (wgmma), UTMALDG (TMA loads; an im2col one),
    UTMASTG (TMA store), SYNCS (mbarrier operations), WARPGROUP.ARRIVE (wgmma.fence) and
    WARPGROUP.DEPBAR (wgmma.wait_group);
  - spills, or needs more shared memory than a block has;
  - or ptxas warns that it serialized the wgmmas (C7514).
It also prints the shared-memory model ceiling of each configuration (a model figure, not a
measurement) and fails when the 128x256 one is below 90% of tensor-core peak.

Usage: tools/static_check_hopper.py [--keep DIR | --from-build DIR]
(--from-build: the sm_90a objects of a CMake CUDA build, as tools/static_check.py reads them)"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import static_check as sc  # noqa: E402  (tools, ptxas parsing, demangling)

ARCH = "sm_90a"
SIGNATURES = [
    ("HGMMA", re.compile(r"\bHGMMA\.")),
    ("UTMALDG", re.compile(r"\bUTMALDG\b")),
    ("UTMALDG.IM2COL", re.compile(r"\bUTMALDG\.[0-9]D\.IM2COL\b")),
    ("UTMASTG", re.compile(r"\bUTMASTG\b")),
    ("SYNCS", re.compile(r"\bSYNCS\.")),
    ("WARPGROUP.ARRIVE", re.compile(r"\bWARPGROUP\.ARRIVE\b")),
    ("WARPGROUP.DEPBAR", re.compile(r"\bWARPGROUP\.DEPBAR\b")),
]
SERIALIZED = re.compile(r"C7514|wgmma\.mma_async instructions are serialized")
# hopper_igemm_kernel<T, BN, STAGES, TMA rank, TRANSPOSED> (families/hopper_igemm/hopper_igemm.cu)
KERNEL = re.compile(r"hopper_igemm_kernel<(?P<t>\w+), (?P<bn>\d+), (?P<stages>\d+), "
                    r"(?P<rank>\d+), (?P<tr>true|false)>")
# Transposed instances (TR = true) store y from registers: a phase's 64 rows are not one box of y
# (families/hopper_igemm/hopper_igemm.cu), so they have neither UTMASTG nor STSM.
EPILOGUE_TMA = ("UTMASTG",)
# 16-bit outputs leave the accumulators through stmatrix (STSM); f32 (TF32 math) cannot
STSM = re.compile(r"\bSTSM\b")
SIXTEEN_BIT = re.compile(r"hopper_igemm_kernel<(__half|__nv_bfloat16|convnd_half|convnd_bf16)\b")

# The model (per SM and clock, H100/H200 SXM): dense 16-bit wgmma 4096 FLOP/clk; shared memory
# 128 bytes/clk. Per k16 step of a BM x BN tile (2 consumer warpgroups of 64 rows): each
# warpgroup's wgmma reads its 64 x 16 A slice and the whole BN x 16 B slice from shared memory,
# and TMA writes (BM + BN) x 16 elements into it.
TC_FLOP_PER_CLK = 4096.0
SMEM_BYTES_PER_CLK = 128.0


def model_ceiling(bm, bn, esize=2, k=16):
    flops = 2.0 * bm * bn * k
    reads = (bm // 64) * (64 * k + bn * k) * esize
    writes = (bm + bn) * k * esize
    t_mma = flops / TC_FLOP_PER_CLK
    t_smem = (reads + writes) / SMEM_BYTES_PER_CLK
    return min(1.0, t_mma / t_smem)


def dynamic_smem(dem):
    """Dynamic shared memory of a Hopper instance (convnd_hopper_smem_bytes in
    families/hopper_igemm/hopper_igemm.h: keep in sync): the A/B ring and its mbarriers, two 64-row epilogue
    staging tiles, 1 KiB of alignment; 0 for other kernels."""
    m = KERNEL.search(dem)
    if not m:
        return 0
    bn, stages = int(m["bn"]), int(m["stages"])
    return stages * ((128 + bn) * 128 + 16) + 2 * 64 * 128 + 1024


def sass_by_kernel(text):
    """{mangled kernel: [instruction lines]} from cuobjdump --dump-sass."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur:
            out[cur].append(line)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", help="keep the cubins in this folder")
    ap.add_argument("--from-build", metavar="DIR", help="read each kernel object and its ptxas "
                    "report from the CMake CUDA build in DIR (its sm_90a image) instead of "
                    "compiling")
    ap.add_argument("files", nargs="*", help="kernels to check (default: the sm_90a image's)")
    args = ap.parse_args()
    nvcc = sc.find_tool("nvcc")
    built = dict(sc.build_objects(args.from_build, ARCH)) if args.from_build else {}
    if not nvcc and not args.from_build:
        print("static_check_hopper: nvcc not found", file=sys.stderr)
        return 2
    cuobjdump, nvdisasm_dir = sc.sass_tools()
    files = args.files or sorted(  # the files declaring the sm_90a image
        f for f in sc.kernel_files()
        if sc.unit_declarations(os.path.basename(f)[:-3])[1] == ARCH)
    workdir = args.keep or tempfile.mkdtemp(prefix="convnd-static-check-hopper-")
    os.makedirs(workdir, exist_ok=True)
    failures, rows = [], []
    for cu in files:
        base = os.path.splitext(os.path.basename(cu))[0]
        cubin = os.path.join(workdir, base + ".cubin")
        cmd = [nvcc, "-cubin", f"-arch={ARCH}", "-O2", "--expt-relaxed-constexpr",
               "-DCONVND_GPU=1", "-DNDEBUG", *sc.NVCC_WERROR, "-Xptxas", "-v", "-o", cubin, cu]
        for inc in sc.INCLUDES:
            cmd[1:1] = ["-I", os.path.join(sc.ROOT, inc)]
        if args.from_build:
            cubin = built.get(base)
            log = sc.ptxas_report(cubin) if cubin else None
            if log is None:
                failures.append(f"{base}.cu: no {ARCH} object with a ptxas report in "
                                f"{args.from_build}")
                continue
        else:
            r = subprocess.run(cmd, capture_output=True, text=True)
            log = r.stdout + r.stderr
            if r.returncode != 0:
                failures.append(f"{base}.cu: compilation failed:\n{log}")
                continue
        for line in log.splitlines():
            if SERIALIZED.search(line):
                failures.append(f"{base}.cu: ptxas serialized wgmma: {line.strip()[:200]}")
        env = dict(os.environ, PATH=nvdisasm_dir + os.pathsep + os.environ.get("PATH", ""))
        s = subprocess.run([cuobjdump, "--dump-sass", cubin], capture_output=True, text=True,
                           env=env)
        if s.returncode != 0:
            failures.append(f"{base}.cu: disassembly failed: {s.stderr}")
            continue
        ptxas = sc.parse_ptxas(log)
        names = sc.demangle(sorted(ptxas))
        sass = sass_by_kernel(s.stdout)
        for mangled in sorted(ptxas, key=lambda n: names[n]):
            dem, info = names[mangled], ptxas[mangled]
            lines = sass.get(mangled, [])
            counts = {what: sum(1 for ln in lines if pat.search(ln)) for what, pat in SIGNATURES}
            m = KERNEL.search(dem)
            transposed = bool(m) and m["tr"] == "true"
            verdict = "ok"
            for what, n in counts.items():
                if n == 0 and not (transposed and what in EPILOGUE_TMA):
                    verdict = "FAIL"
                    failures.append(f"{sc.short_name(dem)}: no {what} in the SASS")
            stsm = sum(1 for ln in lines if STSM.search(ln))
            if SIXTEEN_BIT.search(dem) and not transposed and stsm == 0:
                verdict = "FAIL"
                failures.append(f"{sc.short_name(dem)}: no STSM in the SASS (stmatrix epilogue)")
            if info["spill"]:
                verdict = "FAIL"
                failures.append(f"{sc.short_name(dem)}: {info['spill']} spill bytes")
            dyn = dynamic_smem(dem)
            if info["smem"] + dyn > sc.MAX_SMEM:
                verdict = "FAIL"
                failures.append(f"{sc.short_name(dem)}: {info['smem'] + dyn} bytes of shared memory")
            rows.append((sc.short_name(dem), info["regs"], dyn, info["stack"], info["spill"],
                         counts["HGMMA"], counts["UTMALDG"], counts["UTMASTG"], counts["SYNCS"],
                         stsm, verdict))
    header = ("kernel", "regs", "dyn_smem", "stack", "spill", "HGMMA", "UTMALDG", "UTMASTG",
              "SYNCS", "STSM", "result")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    print("\nshared-memory model ceiling (a model, not a measurement), % of dense 16-bit peak:")
    for bm, bn in ((128, 256), (128, 128)):
        c = model_ceiling(bm, bn)
        print(f"  {bm}x{bn}x64: {100 * c:.0f}%")
        if bn == 256 and c < 0.90:
            failures.append(f"model ceiling of {bm}x{bn} is {100 * c:.0f}% < 90%")
    print(f"\nstatic_check_hopper: {len(rows)} kernel instances for {ARCH}; "
          f"{len(failures)} problem(s)")
    return sc.finish(failures, workdir, args.keep)


if __name__ == "__main__":
    sys.exit(main())
