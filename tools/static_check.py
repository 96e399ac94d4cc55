#!/usr/bin/env python3
"""Static performance check of every CUDA kernel instance, no GPU needed (run by CI).

Compiles each families/*/*.cu for sm_90 with nvcc (-Xptxas -v; the tensor-core launchers' files one
configuration at a time, as the CMake build does), disassembles each cubin with
cuobjdump --dump-sass and prints one row per kernel instance: registers, static and dynamic
shared memory, stack and spill bytes, HMMA instructions, 128-bit global loads. It fails (exit 1)
when
  - any kernel spills (spill stores or loads > 0),
  - a tensor-core kernel (the rules below) has no HMMA instruction, or a 16-bit one no LDSM,
  - a kernel that must load 16 bytes at a time (the channels-last vector path of the implicit
    GEMM) has no 128-bit global load (LDGSTS.E.BYPASS.128 or LDG.E.128),
  - a tensor-core implicit GEMM (igemm_tc, convT_tc: every instance serves channels-last y)
    has no 128-bit global store (STG.E.128: the register epilogue's 16-byte channel runs,
    families/igemm/tc_epilogue.cuh), or has an indirect branch (BRX: the activation is a template
    parameter of the epilogue, picked once per thread, never a switch per element),
  - a kernel needs more than 227 KiB of shared memory,
  - the performance MODEL (tools/sass_model.py) of a tensor-core or memory-bound instance finds
    a generic LD in a tensor-core main loop (unless waived there as a known defect) or a model
    ceiling below the floor its configuration declares.
It prints one table: resources, the steady-state loop's instruction mix and the model's
ceilings (% of peak; MODEL figures, not measurements), with the model's assumptions after it.
A kernel's row says which rules applied to it.

cuobjdump and nvdisasm are not in every CUDA install; when missing they are installed from PyPI
(NVIDIA's nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm wheels) into a cache folder.

With --from-build DIR it compiles nothing: it reads the kernel objects of the CMake CUDA build in
DIR (families/kernel_objects.txt lists them; each has ptxas's report beside it, written by
tools/ptxas_report.sh), so CI compiles each kernel once.

Usage: tools/static_check.py [--jobs N] [--keep DIR | --from-build DIR] [FILE.cu ...]
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_model  # noqa: E402  (a sibling file)
import sass_model_selftest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES = os.path.join(ROOT, "families")
# every family's folder (families/NAME/) holds its kernels; the include path is the build's
FAMILY_DIRS = sorted(os.path.join("families", d) for d in os.listdir(FAMILIES)
                     if os.path.isdir(os.path.join(FAMILIES, d)))
INCLUDES = ["include", "core", "device", "primitives", *FAMILY_DIRS]


def kernel_files():
    """Every kernel file of the build (families/*/*.cu), by path."""
    return sorted(os.path.join(ROOT, d, f) for d in FAMILY_DIRS
                  for f in os.listdir(os.path.join(ROOT, d)) if f.endswith(".cu"))


def kernel_path(base):
    """The path of families/FAMILY/BASE.cu (BASE names are unique across the families)."""
    for path in kernel_files():
        if os.path.basename(path) == base + ".cu":
            return path
    return os.path.join(FAMILIES, base + ".cu")  # absent: callers report it
ARCH = "sm_90"
# warnings are errors, as in the CMake build (CONVND_WARNINGS_CUDA): nvcc's front end and ptxas
NVCC_WERROR = ["--Werror", "all-warnings", "-Xptxas", "-Werror"]
MAX_SMEM = 232448  # 227 KiB, an sm_90 block's limit
TOOLS_VERSION = "13.2.51"  # oldest wheels on PyPI; they read nvcc 13.0's cubins

# (what, regex on the demangled kernel name, requirement)
RULES = [
    ("HMMA", re.compile(r"(?:igemm_tc_mma|convT_tc_mma_kmajor)<"), "hmma"),
    # 16-bit tensor-core fragments come from shared memory through ldmatrix (tc_warp_mma.cuh)
    ("LDSM", re.compile(r"(?:igemm_tc_mma|convT_tc_mma_kmajor)<(?:__half|__nv_bfloat16),"), "ldsm"),
    # igemm_kernel<T, Mma, BM, BN, BK, STAGES, PATH>: PATH 1 and 2 are the 16-byte vector paths
    ("LDG128", re.compile(r"igemm_kernel<.*, [12]>\("), "ldg128"),
    # igemm_io_kernel<..., PATH> (the prefix/state instances): PATH 1 is the vector path
    ("LDG128", re.compile(r"igemm_io_kernel<.*, 1>\("), "ldg128"),
    # convT_kernel<..., PATH> (families/igemm/convT_kernel.cuh): likewise
    ("LDG128", re.compile(r"convT_kernel<.*, [12]>\("), "ldg128"),
    # depthwise_cl / depthwise_stream / grouped kernels with VECIO = true: 16-byte channel vectors
    ("LDG128", re.compile(r"(?:depthwise_cl|depthwise_stream|grouped)_kernel<.*, true>\("), "ldg128"),
    # the weight gradient's vector path (families/wgrad/wgrad_vec.cuh): mma.sync on ldmatrix
    # fragments (.trans) of stages filled by 16-byte cp.async
    ("HMMA", re.compile(r"wgrad_vec_kernel<"), "hmma"),
    ("LDSM", re.compile(r"wgrad_vec_kernel<"), "ldsm"),
    ("LDG128", re.compile(r"wgrad_vec_kernel<"), "ldg128"),
    # the tensor-core register epilogue's 16-byte channels-last stores (tc_epilogue.cuh)
    ("STG128", re.compile(r"(?:igemm_tc_mma|convT_tc_mma_kmajor)<"), "stg128"),
]

# (what, regex on the demangled kernel name, instruction count that must be 0)
FORBIDDEN = [
    # an indirect branch (a jump table: the per-element activation switch the epilogue had)
    ("BRX", re.compile(r"(?:igemm_tc_mma|convT_tc_mma_kmajor)<"), "brx"),
]


MODEL_COLUMNS = ["occ", "loop", "HMMA", "LDSM", "LDS", "LD.E", "LDGSTS", "LDG", "STG", "FFMA", "int",
                 "mov", "BAR", "ways", "smem%", "issue%", "B/ins", "floor%"]


def find_tool(name):
    found = shutil.which(name)
    if found:
        return found
    for d in ("/usr/local/cuda/bin", os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin")):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


def sass_tools():
    """cuobjdump and the nvdisasm it runs; installed from PyPI into a cache when missing."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    if cuobjdump and nvdisasm:
        return cuobjdump, os.path.dirname(nvdisasm)
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "convnd-static-check", TOOLS_VERSION)
    bindir = os.path.join(cache, "nvidia", "cu13", "bin")
    if not (os.access(os.path.join(bindir, "cuobjdump"), os.X_OK) and
            os.access(os.path.join(bindir, "nvdisasm"), os.X_OK)):
        print(f"static_check: installing cuobjdump and nvdisasm {TOOLS_VERSION} from PyPI into {cache}",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--target", cache, f"nvidia-cuda-cuobjdump=={TOOLS_VERSION}",
                        f"nvidia-cuda-nvdisasm=={TOOLS_VERSION}"], check=True)
    return os.path.join(bindir, "cuobjdump"), bindir


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, out))


PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)' for")
PTXAS_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def parse_ptxas(text):
    """{mangled name: {regs, smem, stack, spill}} from ptxas -v output."""
    kernels, current = {}, None
    for line in text.splitlines():
        m = PTXAS_ENTRY.search(line)
        if m:
            current = kernels.setdefault(m.group(1), {"regs": 0, "smem": 0, "stack": 0, "spill": 0})
            continue
        if current is None:
            continue
        m = PTXAS_PROPS.search(line)
        if m:
            current["stack"] = int(m.group(1))
            current["spill"] = int(m.group(2)) + int(m.group(3))
            continue
        m = PTXAS_USED.search(line)
        if m:
            current["regs"] = int(m.group(1))
            current["smem"] = int(m.group(2) or 0)
    return kernels


LDG128 = re.compile(r"\bLDGSTS\.E\.BYPASS(\.LTC128B)?\.128\b|\bLDG\.E\.(CONSTANT\.)?128\b")
STG128 = re.compile(r"\bSTG\.E(\.\w+)*\.128\b")
EMPTY_COUNTS = {"hmma": 0, "ldg128": 0, "ldsm": 0, "stg128": 0, "brx": 0}


def parse_sass(functions):
    """{mangled name: {hmma, ldg128, ldsm, stg128, brx}} instruction counts of
    sass_model.parse_functions' output."""
    counts = {}
    for name, instrs in functions.items():
        c = counts.setdefault(name, dict(EMPTY_COUNTS))
        for _, op, _ in instrs:
            if op.startswith("HMMA."):
                c["hmma"] += 1
            if op.startswith("LDSM."):
                c["ldsm"] += 1
            if LDG128.search(op):
                c["ldg128"] += 1
            if STG128.search(op):
                c["stg128"] += 1
            if op == "BRX" or op.startswith("BRX."):
                c["brx"] += 1
    return counts


IGEMM_KERNEL = re.compile(  # also convT_kernel and the prefix igemm_io_kernel: the same layout
    r"(?:igemm|igemm_io|convT)_kernel<(\w+), [\w:]+<[^>]*>, (\d+), (\d+), (\d+), (\d+), (\d+)>\(")


WGRAD_VEC_KERNEL = re.compile(r"wgrad_vec_kernel<(\w+), .*, (\d+), (\d+), (\d+), (\d+)>\(")


def dynamic_smem(demangled):
    """Dynamic shared memory of an implicit-GEMM instance, from its template arguments. Mirrors
    igemm_smem_layout in families/igemm/igemm_kernel.cuh and wgrad_vec_launch_tile in
    families/wgrad/wgrad_vec.cuh (keep in sync); 0 for other kernels."""
    m = WGRAD_VEC_KERNEL.search(demangled)
    if m:  # STAGES k-major swizzled tiles of BK x BM (dy) and BK x BN (x), 16-bit
        bm, bn, bk, stages = (int(m.group(i)) for i in range(2, 6))
        return stages * bk * (bm + bn) * 2
    m = IGEMM_KERNEL.search(demangled)
    if not m:
        return 0
    size = 4 if m.group(1) == "float" else 2
    bm, bn, bk, stages = (int(m.group(i)) for i in range(2, 6))
    tc = re.search(r"_tc_mma", demangled)
    # 16-bit tensor-core tiles: XOR-swizzled rows; TF32 and CUDA cores: rows padded by 16 bytes
    pad = 0 if tc and size == 2 else 16 // size
    a = bm * (bk + pad)
    b = bk * (bn + pad) if demangled.startswith("convT_kernel") or "convT_kernel<" in demangled \
        else bn * (bk + pad)  # the transposed kernels' B tile is k-major
    pipe = stages * (a + b) * size
    c = 0 if tc else bm * (bn + 4) * 4  # tc: register epilogue
    return (max(pipe, c) + 127) // 128 * 128 + bm * 4


def short_name(demangled):
    s = re.sub(r"\bconvnd_gpu::", "", demangled)
    s = s.split("(")[0]
    return s


COMPILE_SECONDS = {}  # per unit, the nvcc run's wall time (with --jobs of them side by side)

# What the build does with a file, as the file declares it (families/CMakeLists.txt reads the same
# lines): CONVND_TC_UNIT (config_shard.cuh) -> one unit per configuration plus the launcher, as
# the CMake build compiles it (whole, one such file takes nearly 6 minutes, and the last such
# file left a core idle while the other finished it); "/* convnd-image: sm_90a" -> the sm_90a
# image (the Hopper tier: wgmma, setmaxnreg).
DECLARATION = re.compile(r"^(CONVND_TC_UNIT\(|/\* convnd-image: sm_90a)", re.M)


def unit_declarations(base):
    """(per_config, arch) that families/FAMILY/BASE.cu declares."""
    try:
        with open(kernel_path(base)) as f:
            found = {m.group(1) for m in DECLARATION.finditer(f.read())}
    except OSError:
        return False, ARCH
    return "CONVND_TC_UNIT(" in found, "sm_90a" if any("sm_90a" in d for d in found) else ARCH


def tc_config_count():
    """How many entries CONVND_IGEMM_TC_CONFIGS has: the table expanded by the C preprocessor."""
    src = '#include "igemm_configs.h"\n#define N(name, ...) name;\nCONVND_IGEMM_TC_CONFIGS(N)\n'
    r = subprocess.run(["cc", "-E", "-P", "-I", os.path.join(FAMILIES, "igemm"), "-x", "c", "-"],
                       input=src, capture_output=True, text=True, check=True)
    return len([n for n in r.stdout.replace("\n", "").split(";") if n.strip()])


def units_of(files):
    """(cu, shard, shards) for each compile: shard None for a whole file; -1 (the launcher) and
    each configuration's index for a sharded one. The sharded units first (the longest)."""
    count = tc_config_count()
    units = []
    for cu in files:
        if unit_declarations(os.path.splitext(os.path.basename(cu))[0])[0]:
            units += [(cu, k, count) for k in range(-1, count)]
        else:
            units.append((cu, None, count))
    return sorted(units, key=lambda u: u[1] is None)


def build_objects(build, arch):
    """[(unit name, object)] of a CMake CUDA build's kernels for ARCH (sm_90 or sm_90a), from the
    manifest it writes (families/kernel_objects.txt); each object has its ptxas report beside it
    (tools/ptxas_report.sh)."""
    manifest = os.path.join(build, "families", "kernel_objects.txt")
    if not os.path.exists(manifest):
        raise SystemExit(f"static_check: {manifest} not found: --from-build needs a CMake build "
                         "configured with -DCONVND_CUDA=ON")
    objects = []
    with open(manifest) as f:
        for line in f:
            a, _, obj = line.rstrip("\n").partition("\t")
            if a == arch and obj:
                objects.append((os.path.basename(obj)[:-len(".cu.o")], obj))
    return objects


def ptxas_report(obj):
    """The ptxas report tools/ptxas_report.sh kept beside a build's object, or None."""
    try:
        with open(obj + ".ptxas.log") as log:
            return log.read()
    except OSError:
        return None


def from_build_units(build, files):
    """(units, problems): the build's objects of FILES (the Hopper tier from its sm_90a image, as
    compile_one compiles it), and what the build lacks: a file, or a configuration's shard (a
    build may leave some out, CONVND_SKIP_TC_CONFIGS; this check covers all of them)."""
    units = build_objects(build, ARCH) + [
        u for u in build_objects(build, "sm_90a")
        if unit_declarations(u[0].split(".")[0])[1] == "sm_90a"]
    names = {name for name, _ in units}
    wanted = {os.path.splitext(os.path.basename(cu))[0] for cu in files}
    problems = [f"{base}.cu: no object in the build in {build}"
                for base in sorted(wanted - {n.split(".")[0] for n in names})]
    with open(os.path.join(build, "families", "tc_configs.txt")) as f:
        configs = len(f.read().split())
    for base in sorted({n.split(".")[0] for n in names if ".shard" in n}):
        problems += [f"{base}.cu: shard {k} was not built in {build}"
                     for k in range(configs + 1) if f"{base}.shard{k}" not in names]
    return [u for u in units if u[0].split(".")[0] in wanted], problems


def read_object(unit, cuobjdump, nvdisasm_dir):
    """compile_one's result for an object a CMake build made (build_objects)."""
    name, obj = unit
    base = name.split(".")[0]
    report = ptxas_report(obj)
    if report is None:
        return base, None, None, f"{obj}: no ptxas report beside it; is the build complete?"
    return (base,) + disassemble(obj, report, cuobjdump, nvdisasm_dir)


def disassemble(binary, report, cuobjdump, nvdisasm_dir):
    """(ptxas info, (SASS counts, functions), error) of a cubin or object and its ptxas report."""
    env = dict(os.environ, PATH=nvdisasm_dir + os.pathsep + os.environ.get("PATH", ""))
    s = subprocess.run([cuobjdump, "--dump-sass", binary], capture_output=True, text=True, env=env)
    if s.returncode != 0:
        return None, None, s.stdout + s.stderr
    functions = sass_model.parse_functions(s.stdout)
    return parse_ptxas(report), (parse_sass(functions), functions), ""


def compile_one(unit, nvcc, cuobjdump, nvdisasm_dir, workdir):
    cu, shard, count = unit
    base = os.path.splitext(os.path.basename(cu))[0]
    name = base if shard is None else f"{base}.shard{shard + 1}"  # CMake's names
    cubin = os.path.join(workdir, name + ".cubin")
    # the sm_90a image's files (the Hopper tier): tools/static_check_hopper.py
    arch = unit_declarations(base)[1]
    cmd = [nvcc, "-cubin", f"-arch={arch}", "-O2", "--expt-relaxed-constexpr", "-DCONVND_GPU=1",
           "-DNDEBUG", *NVCC_WERROR, "-Xptxas", "-v", "-o", cubin, cu]
    if shard is not None:
        cmd[1:1] = [f"-DCONVND_SHARD={shard}", f"-DCONVND_SHARDS={count}"]
    for inc in INCLUDES:
        cmd[1:1] = ["-I", os.path.join(ROOT, inc)]
    start = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    COMPILE_SECONDS[name] = time.monotonic() - start
    # ptxas's report beside the cubin (kept with --keep)
    with open(os.path.join(workdir, name + ".ptxas.log"), "w") as log:
        log.write(r.stdout + r.stderr)
    if os.environ.get("CONVND_UNIT_TIMES"):  # tools/build_times.sh's log format
        with open(os.environ["CONVND_UNIT_TIMES"], "a") as log:
            log.write(f"{COMPILE_SECONDS[name]:.1f}\t{name}.cu ({arch})\n")
    if r.returncode != 0:
        return base, None, None, r.stdout + r.stderr
    return (base,) + disassemble(cubin, r.stdout + r.stderr, cuobjdump, nvdisasm_dir)


def finish(failures, workdir, keep):
    """The checks' common end: each failure on its line, the work folder removed unless kept,
    and the exit status (1 when anything failed)."""
    for f in failures:
        print("  FAIL " + f)
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--keep", help="keep the cubins (and ptxas's reports) in this folder")
    ap.add_argument("--from-build", metavar="DIR", help="read the kernel objects of the CMake "
                    "CUDA build in DIR (their SASS and ptxas reports) instead of compiling")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--only", help="print only the rows whose kernel matches this regex (the "
                    "checks still cover every instance)")
    ap.add_argument("files", nargs="*", help="kernels to check (default: families/*/*.cu)")
    args = ap.parse_args()

    sass_model_selftest.main()  # raises when the model's own arithmetic is wrong
    nvcc = find_tool("nvcc")
    if not nvcc and not args.from_build:
        print("static_check: nvcc not found", file=sys.stderr)
        return 2
    cuobjdump, nvdisasm_dir = sass_tools()
    files = args.files or kernel_files()
    workdir = args.keep or tempfile.mkdtemp(prefix="convnd-static-check-")
    os.makedirs(workdir, exist_ok=True)

    rows, failures, waived, models = [], [], [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        if args.from_build:
            units, problems = from_build_units(args.from_build, files)
            failures += problems
            results = list(pool.map(lambda u: read_object(u, cuobjdump, nvdisasm_dir), units))
        else:
            units = units_of(files)
            results = list(pool.map(
                lambda u: compile_one(u, nvcc, cuobjdump, nvdisasm_dir, workdir), units))
    for base, ptxas, sass, err in results:
        if ptxas is None:
            failures.append(f"{base}.cu: compilation or disassembly failed:\n{err}")
            continue
        counts, functions = sass
        names = demangle(sorted(ptxas))
        for mangled in sorted(ptxas, key=lambda n: names[n]):
            info, ins = ptxas[mangled], counts.get(mangled, dict(EMPTY_COUNTS))
            dem = names[mangled]
            dyn = dynamic_smem(dem)
            checks, verdict = [], "ok"
            if info["spill"]:
                verdict = "FAIL"
                failures.append(f"{short_name(dem)}: {info['spill']} spill bytes")
            if info["smem"] + dyn > MAX_SMEM:
                verdict = "FAIL"
                failures.append(f"{short_name(dem)}: {info['smem'] + dyn} bytes of shared memory")
            for what, pattern, key in RULES:
                if pattern.search(dem):
                    checks.append(what)
                    if ins[key] == 0:
                        verdict = "FAIL"
                        failures.append(f"{short_name(dem)}: no {what} instruction in the SASS")
            for what, pattern, key in FORBIDDEN:
                if pattern.search(dem):
                    checks.append("no " + what)
                    if ins[key]:
                        verdict = "FAIL"
                        failures.append(f"{short_name(dem)}: {ins[key]} {what} instruction(s) in "
                                        "the SASS")
            model = sass_model.model_of(functions.get(mangled, []), dem)
            cols = {}
            if model is not None:
                models.append(model)
                checks.append("model")
                m_verdict, m_fail, m_waived = sass_model.judge(
                    model, sass_model.label_of(model, short_name(dem)))
                failures += m_fail
                waived += m_waived
                if m_verdict == "FAIL" or verdict == "FAIL":
                    verdict = "FAIL"
                elif m_verdict == "waived":
                    verdict = "waived"
                cols = sass_model.columns(model, info["regs"], info["smem"] + dyn, None)
            name = sass_model.label_of(model, short_name(dem)) if model else short_name(dem)
            rows.append([base, name, info["regs"], info["smem"], dyn, info["stack"],
                         info["spill"], ins["hmma"], ins["ldg128"]] +
                        [cols.get(c, "") for c in MODEL_COLUMNS] + [",".join(checks) or "-", verdict])
    failures += sass_model.stale_waivers(models)

    rows.sort(key=lambda r: r[0])  # by file (stable: each file's rows stay by kernel name)
    shown = [r for r in rows if not args.only or re.search(args.only, r[1])]
    header = ["file", "kernel", "regs", "smem", "dyn_smem", "stack", "spill", "HMMA", "LDG128"] + \
        MODEL_COLUMNS + ["requires", "result"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in shown:
            print("| " + " | ".join(str(v) for v in r) + " |")
    else:
        widths = [max(len(str(r[i])) for r in shown + [header]) for i in range(len(header))]
        for r in [header] + shown:
            print("  ".join(str(v).ljust(w) if i < 2 or i >= len(header) - 2 else str(v).rjust(w)
                            for i, (v, w) in enumerate(zip(r, widths))))
    print("\n" + sass_model.assumptions_text())
    print("Columns from 'occ' on are the MODEL (tools/sass_model.py): occ = resident warps per SM; "
          "loop = instructions in the steady-state loop and its mix (HMMA count x shape, LDSM, LDS, "
          "generic LD.E, LDGSTS, LDG, STG, FFMA, integer/predicate, moves, barriers); ways = bank "
          "conflict ways of the ldmatrix reads / cp.async writes computed from the layout; smem% and "
          "issue% = model ceilings as % of peak (memory-bound: issue% = DRAM bandwidth the issue rate "
          "can feed for the row's reference problem; B/ins = unique DRAM bytes per thread-instruction); "
          "floor% = the floor the configuration declares.")
    print(f"\nstatic_check: {len(rows)} kernel instances in {len(files)} files for {ARCH}; "
          f"{len(models)} modelled; {len(failures)} problem(s), {len(waived)} waived")
    slowest = sorted(COMPILE_SECONDS.items(), key=lambda kv: -kv[1])[:5]
    if args.from_build:
        print(f"static_check: read {len(units)} objects of the build in {args.from_build} "
              "(no compile)")
    else:
        print(f"static_check: nvcc took {sum(COMPILE_SECONDS.values()):.0f} s over {len(units)} "
              f"units ({args.jobs} at a time); slowest: " +
              ", ".join(f"{b} {t:.0f} s" for b, t in slowest))
    for w in waived:
        print("  WAIVED " + w)
    return finish(failures, workdir, args.keep)


if __name__ == "__main__":
    sys.exit(main())
