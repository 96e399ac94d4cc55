#!/usr/bin/env python3
"""A static performance MODEL of the convnd kernels, read from their sm_90 SASS (no GPU needed).

For every tensor-core and memory-bound kernel instance it finds the steady-state main loop (the
innermost backward branch holding the most HMMA, or the most FFMA / global traffic), counts its
instruction mix, computes the shared-memory bank behaviour of the kernel's layouts, its
occupancy, and from those two ceilings as % of peak:

  smem ceiling   tensor-core kernels: tensor-pipe clocks / shared-memory wavefronts per warp and
                 k-tile (reads by ldmatrix/LDS/generic LD plus the stage writes, x their bank
                 conflict ways; one 128-byte wavefront per clock per SM)
  issue ceiling  tensor-core kernels: tensor-pipe clocks / issued instructions per warp and
                 k-tile (one instruction per clock per scheduler);
                 memory-bound kernels: bytes of unique DRAM traffic per issued instruction of a
                 reference problem x 128 thread-instructions per clock per SM, against an SM's
                 share of DRAM bandwidth

These are MODEL figures from static instruction counts, not measurements: every path of the loop
is counted once, latency, occupancy limits on latency hiding, L2 and DRAM effects are ignored.
The bench's GPU rows (bench/RESULTS.md) are the only measurements. HARDWARE lists the
assumptions; bench/README.md states them next to the recorded table.
"""
import re

# ---- hardware assumptions (H200 SXM, sm_90), stated with the table -------------------------------
HARDWARE = {
    "sms": 132,
    "clock_hz": 1.98e9,  # boost clock
    "tensor_flop_per_clk_sm": {"f16": 4096, "bf16": 4096, "tf32": 2048},  # dense mma.sync peak
    "smem_bytes_per_clk_sm": 128,  # 32 banks x 4 B: one wavefront per clock
    "issue_per_clk_sm": 4,  # 4 schedulers, one warp-instruction each per clock
    "dram_bytes_per_s": 4.3e12,  # the issue's achievable figure (spec: 4.8 TB/s)
    "regs_per_sm": 65536,
    "max_warps_per_sm": 64,
    "max_blocks_per_sm": 32,
    "smem_per_sm": 233472,  # 228 KiB
    "smem_reserved_per_block": 1024,
}

HMMA_FLOP = {"16816": 16 * 8 * 16 * 2, "1688": 16 * 8 * 8 * 2, "1684": 16 * 8 * 4 * 2}


def assumptions_text():
    h = HARDWARE
    dram_clk = h["dram_bytes_per_s"] / (h["sms"] * h["clock_hz"])
    return ("MODEL assumptions (H200 SXM, sm_90): %d SMs at %.2f GHz; tensor peak per SM and clock "
            "%d FLOP f16/bf16, %d TF32 (dense mma.sync); shared memory %d B/clk/SM (one 128-byte "
            "wavefront per clock); %d warp-instructions issued per clock per SM; DRAM %.1f TB/s "
            "= %.1f B/clk/SM; static counts, each path of the loop counted once; latency, L2 and "
            "occupancy effects on latency hiding ignored." %
            (h["sms"], h["clock_hz"] / 1e9, h["tensor_flop_per_clk_sm"]["bf16"],
             h["tensor_flop_per_clk_sm"]["tf32"], h["smem_bytes_per_clk_sm"], h["issue_per_clk_sm"],
             h["dram_bytes_per_s"] / 1e12, dram_clk))


# ---- SASS parsing ---------------------------------------------------------------------------------
SASS_FUNCTION = re.compile(r"^\s*Function : (\S+)")
SASS_INSTR = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def parse_functions(text):
    """{mangled name: [(address, opcode with modifiers, full text)]} from cuobjdump --dump-sass."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = SASS_FUNCTION.match(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = SASS_INSTR.match(line)
        if not m:
            continue
        body = m.group(2).strip()
        if body.startswith("@"):
            body = body.split(None, 1)[1] if " " in body else ""
        op = body.split(None, 1)[0] if body else ""
        cur.append((int(m.group(1), 16), op, m.group(2)))
    return funcs


# Opcode (before the first '.') -> the model's instruction class.
OPCODE_CLASS = {"HMMA": "hmma", "HGMMA": "hgmma", "UTMALDG": "tma", "SYNCS": "mbarrier",
                "WARPGROUP": "warpgroup", "LDSM": "ldsm", "LDS": "lds", "STS": "sts", "LDGSTS": "ldgsts",
                "LDG": "ldg", "STG": "stg", "BAR": "bar",
                # generic accesses: in a tensor-core main loop, fragment reads without .shared
                "LD": "ld_generic", "ST": "st_generic"}
OPCODE_CLASS.update({op: "fp" for op in ("FFMA", "FMUL", "FADD", "HFMA2", "HMUL2", "HADD2", "FMNMX")})
OPCODE_CLASS.update({op: "int" for op in (
    "IMAD", "IADD3", "LEA", "ISETP", "LOP3", "SHF", "SEL", "P2R", "R2P", "PLOP3", "IABS", "IMNMX",
    "PRMT", "SGXT", "IDP", "BMSK", "FLO", "POPC", "VIADD", "VIMNMX", "UIADD3", "UIMAD", "ULOP3",
    "USEL", "ULEA", "USHF", "UISETP", "UPRMT", "UMOV")})
MOVES = ("MOV", "IMAD.MOV", "IMAD.MOV.U32")


def classify(op):
    """The model's instruction class of one opcode (with modifiers)."""
    if op in MOVES:
        return "move"
    return OPCODE_CLASS.get(op.split(".")[0], "other")


def access_bytes(op):
    """Bytes one thread moves in a load/store opcode (.128 -> 16 ...; default 4)."""
    for width, nbytes in ((".128", 16), (".64", 8), (".U16", 2), (".S16", 2), (".U8", 1), (".S8", 1)):
        if width in op:
            return nbytes
    return 4


def ldsm_matrices(op):
    """8x8 matrices of 16-bit elements an LDSM reads (x1, x2, x4)."""
    m = re.search(r"\.M(?:T)?88\.(\d)", op)
    return int(m.group(1)) if m else 1


def hmma_shape(op):
    m = re.match(r"HMMA\.(\d+)", op)
    return m.group(1) if m else "?"


HGMMA_ELEM_BITS = {"F16": 16, "BF16": 16, "TF32": 32, "E4M3": 8, "E5M2": 8}


def hgmma_work(op, text):
    """(FLOP, shared-memory bytes read) of one HGMMA (wgmma) instruction of a warpgroup:
    HGMMA.<M>x<N>x<K>.<acc>[.<in>] reads B (N x K) from shared memory, and A (M x K) too when its
    first source is a descriptor (gdesc: SS) rather than registers (RS). Without an input type
    the inputs are f16 (the PTX ISA's f16 wgmma)."""
    parts = op.split(".")
    m, n, k = (int(v) for v in parts[1].split("x"))
    bits = next((HGMMA_ELEM_BITS[p] for p in parts[3:] if p in HGMMA_ELEM_BITS), 16)
    body = text.split(None, 1)[1] if text.startswith("@") else text  # drop a predicate
    sources = body.split(None, 1)[1].split(",") if " " in body else []
    a_in_smem = len(sources) > 1 and sources[1].strip().startswith("gdesc")
    return 2 * m * n * k, (n * k + (m * k if a_in_smem else 0)) * bits // 8


def find_loops(instrs):
    """[(start index, end index)] of every backward branch's range, innermost first."""
    index = {a: i for i, (a, _, _) in enumerate(instrs)}
    loops = []
    for i, (addr, op, text) in enumerate(instrs):
        if op.split(".")[0] != "BRA":
            continue
        m = re.search(r"0x([0-9a-f]+)\s*$", text)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target < addr and target in index:
            loops.append((index[target], i))
    return sorted(loops, key=lambda r: r[1] - r[0])


def loop_mix(instrs, lo, hi):
    mix = {"instr": 0, "hmma_shape": set(), "hgmma_shape": set(), "ldsm_x": 0, "const": 0}
    for _, op, text in instrs[lo:hi + 1]:
        if op in ("NOP", ""):
            continue
        c = classify(op)
        mix["instr"] += 1
        mix[c] = mix.get(c, 0) + 1
        if c == "hmma":
            mix["hmma_shape"].add(hmma_shape(op))
            mix["hmma_flop"] = mix.get("hmma_flop", 0) + HMMA_FLOP.get(hmma_shape(op), 0)
        elif c == "ldsm":
            mix["ldsm_x"] += ldsm_matrices(op)
        elif c == "hgmma":
            flop, smem = hgmma_work(op, text)
            mix["hgmma_flop"] = mix.get("hgmma_flop", 0) + flop
            mix["hgmma_smem_bytes"] = mix.get("hgmma_smem_bytes", 0) + smem
            mix["hgmma_shape"].add(op.split(".")[1])
        elif c in ("lds", "sts", "ld_generic", "ldgsts", "ldg", "stg", "st_generic"):
            mix[c + "_bytes"] = mix.get(c + "_bytes", 0) + 32 * access_bytes(op)
            if c in ("lds", "sts"):  # a warp's access takes at least one wavefront, however narrow
                mix[c + "_wavefronts"] = mix.get(c + "_wavefronts", 0) + \
                    max(1.0, 32 * access_bytes(op) / 128)
        if c == "fp" and op.startswith("FFMA"):
            mix["ffma"] = mix.get("ffma", 0) + 1
        mix["const"] += text.count("c[0x")
    return mix


def main_loop(instrs, key):
    """(start, end, mix) of the steady-state loop: of the loops holding instructions of class
    `key` ('hmma', 'ffma' or 'global') and no inner loop that holds any, the one with the most;
    None when no loop has any."""
    found = []
    for lo, hi in find_loops(instrs):
        mix = loop_mix(instrs, lo, hi)
        if key == "global":
            weight = mix.get("ldg_bytes", 0) + mix.get("stg_bytes", 0)
        else:
            weight = mix.get(key, 0)
        if weight:
            found.append((weight, lo, hi, mix))
    inner = [f for f in found
             if not any(g is not f and f[1] <= g[1] and g[2] <= f[2] for g in found)]
    best = max(inner, key=lambda f: f[0], default=None)
    return best and (best[1], best[2], best[3])


# ---- shared-memory banks ---------------------------------------------------------------------------
def wavefronts(addresses, nbytes):
    """Wavefronts (clock cycles of the shared-memory pipe) one warp-wide access takes: threads are
    served 128 bytes at a time (8 threads of 16 B, 16 of 8 B, 32 of 4 B); within a group, the most
    distinct 4-byte words any bank must deliver. addresses: per-thread byte addresses."""
    per = max(1, 128 // max(nbytes, 4))
    total = 0
    for g in range(0, len(addresses), per):
        banks = {}
        for a in addresses[g:g + per]:
            for w in range(max(nbytes, 4) // 4):
                word = a // 4 + w
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(s) for s in banks.values())
    return total


def conflict_ways(addresses, nbytes):
    """Bank-conflict factor of an access: its wavefronts over the conflict-free minimum."""
    ideal = max(1, len(addresses) * max(nbytes, 4) // 128)
    return wavefronts(addresses, nbytes) / ideal


def swizzled_address(cpr):
    """Byte address of 16-byte chunk c of row r in an XOR-swizzled stage tile of cpr chunks a
    row: mirrors smem_swizzled_tile::chunk in primitives/smem_tile.cuh (keep in sync)."""
    def address(r, c):
        if cpr >= 8:
            return 16 * (r * cpr + (c ^ (r & 7)))
        per = 8 // cpr  # rows sharing a 128-byte line
        line = r // per
        return 16 * (line * 8 + (((r % per) * cpr + c) ^ (line & 7)))
    return address


def ldmatrix_ways(pitch, swizzle=None, address=None, cpr=8):
    """Conflict ways of one ldmatrix phase: 8 rows of 16 bytes at column chunk c, the first row
    a multiple of 8 (the worst over the chunks of a 128-byte row and two row groups). Rows
    `pitch` bytes apart (chunk swizzle(r, c) of the row), or at address(r, c) bytes."""
    worst = 1.0
    for r0 in (0, 8):
        for c in range(min(8, cpr) if address else 8):
            if address:
                addrs = [address(r0 + r, c) for r in range(8)]
            else:
                addrs = [r * pitch + 16 * (swizzle(r, c) if swizzle else c) for r in range(8)]
            worst = max(worst, conflict_ways(addrs, 16))
    return worst


def cp_async_ways(pitch, row_bytes, swizzle=None, address=None):
    """Conflict ways of a warp's 16-byte cp.async writes: thread t writes chunk t % (row_bytes/16)
    of row t / (row_bytes/16) (families/igemm/igemm_load.cuh, convT_kmajor.cuh)."""
    cpr = max(1, row_bytes // 16)
    if address:
        addrs = [address(t // cpr, t % cpr) for t in range(32)]
    else:
        addrs = [(t // cpr) * pitch + 16 * (swizzle(t // cpr, t % cpr) if swizzle else t % cpr)
                 for t in range(32)]
    return conflict_ways(addrs, 16)


# ---- kernel families: template arguments -> threads, config name, shared-memory layouts ---------------
# The tensor-core families mirror families/igemm/igemm_mma.cuh / convT_kmajor.cuh: mma.sync + ldmatrix
# on XOR-swizzled stage tiles (primitives/smem_tile.cuh, swizzled_address above).
ELEM = {"float": 4, "__half": 2, "__nv_bfloat16": 2}
DTYPE = {"float": "tf32", "__half": "f16", "__nv_bfloat16": "bf16"}
IGEMM_TC = re.compile(r"igemm_kernel<(\w+), [\w:]+igemm_tc_mma<\w+, (\d+), (\d+), (\d+), (\d+), "
                      r"(\d+)>, \d+, \d+, \d+, (\d+), (\d+)>")
# the prefix/state instances (igemm_io_kernel, SPEC §12): the same tile over cat(prefix, x)
IGEMM_IO_TC = re.compile(r"igemm_io_kernel<(\w+), [\w:]+igemm_tc_mma<\w+, (\d+), (\d+), (\d+), (\d+), "
                         r"(\d+)>, \d+, \d+, \d+, (\d+), (\d+)>")
CONVT_TC = re.compile(r"convT_kernel<(\w+), [\w:]+convT_tc_mma_kmajor<\w+, (\d+), (\d+), (\d+), (\d+), "
                      r"(\d+)>, \d+, \d+, \d+, (\d+), (\d+)>")
MEMORY_BOUND = re.compile(r"\b(depthwise_cl|depthwise_stream|depthwise_tile|grouped|(?:im2col|col2im)\w*|"
                          r"pad_copy)_kernel<(\w+)(?:, \w+)?(?:, \w+)?(?:, \w+)?(?:, (\d+))?>")
# the weight gradient's tensor-core instances (families/wgrad/wgrad_igemm.cuh): two stages of dy and x rows
# padded by 16 bytes, filled by plain stores (16-bit) or 4-byte cp.async (f32), read by tc_warp_mma
WGRAD_TC = re.compile(r"wgrad_igemm_kernel<(\w+), \w+, [\w:]+wgrad_tc_mma<\w+, (\d+), (\d+), (\d+), "
                      r"(\d+), (\d+)>")
# the weight gradient's vector path (families/wgrad/wgrad_vec.cuh): STAGES k-major swizzled tiles of
# dy (BK x BM) and x (BK x BN) filled by 16-byte cp.async, read by ldmatrix.trans
WGRAD_VEC_TC = re.compile(r"wgrad_vec_kernel<(\w+), [\w:]*tc_warp_mma_on<\w+, (\d+), (\d+), (\d+), "
                          r"(\d+), (\d+), .*, (\d+)>\(")
PATHS = {"0": "gather", "1": "vec", "2": "pointwise"}


def tensor_core_family(dem):
    """(family, dtype, config name, threads, {what: conflict ways}) of a tensor-core kernel."""
    m = IGEMM_TC.search(dem)
    if m:
        t, bm, bn, bk, wm, wn, stages, path = m.groups()
        la = stage_tile(ELEM[t], int(bk))
        ways = {"ldsm A": la[0], "ldsm B": la[0], "cp.async A": la[1], "cp.async B": la[1]}
        return ("igemm_tc", DTYPE[t], f"{bm}x{bn}x{bk}_s{stages}", 32 * int(wm) * int(wn), ways,
                PATHS.get(path, path))
    m = IGEMM_IO_TC.search(dem)
    if m:
        t, bm, bn, bk, wm, wn, stages, path = m.groups()
        la = stage_tile(ELEM[t], int(bk))
        ways = {"ldsm A": la[0], "ldsm B": la[0], "cp.async A": la[1], "cp.async B": la[1]}
        return ("igemm_io_tc", DTYPE[t], f"{bm}x{bn}x{bk}_s{stages}", 32 * int(wm) * int(wn), ways,
                PATHS.get(path, path))
    m = CONVT_TC.search(dem)
    if m:
        t, bm, bn, bk, wm, wn, stages, path = m.groups()
        la, lb = stage_tile(ELEM[t], int(bk)), stage_tile(ELEM[t], int(bn))  # B is k-major
        ways = {"ldsm A": la[0], "ldsm B": lb[0], "cp.async A": la[1], "cp.async B": lb[1]}
        return ("convT_tc", DTYPE[t], f"{bm}x{bn}x{bk}_s{stages}", 32 * int(wm) * int(wn), ways,
                PATHS.get(path, path))
    m = WGRAD_VEC_TC.search(dem)
    if m:
        t, bm, bn, bk, wm, wn, stages = m.groups()
        la, lb = stage_tile(ELEM[t], int(bm)), stage_tile(ELEM[t], int(bn))  # both k-major
        ways = {"ldsm A": la[0], "ldsm B": lb[0], "cp.async A": la[1], "cp.async B": lb[1]}
        return ("wgrad_vec_tc", DTYPE[t], f"{bm}x{bn}x{bk}", 32 * int(wm) * int(wn), ways,
                f"{stages} stages")
    m = WGRAD_TC.search(dem)
    if m:
        t, bm, bn, bk, wm, wn = m.groups()
        pitch = (int(bk) + 16 // ELEM[t]) * ELEM[t]
        # a warp's stage stores: 32 threads on consecutive columns kk of one row, conflict-free
        ways = {"ldsm A": ldmatrix_ways(pitch), "ldsm B": ldmatrix_ways(pitch),
                "cp.async A": 1.0, "cp.async B": 1.0}
        return ("wgrad_tc", DTYPE[t], f"{bm}x{bn}x{bk}", 32 * int(wm) * int(wn), ways, "2 stages")
    return None


def stage_tile(size, cols):
    """(ldmatrix ways, cp.async ways) of a tensor-core stage tile of `cols` elements a row
    (tc_stage_tile in primitives/tc_warp_mma.cuh): XOR-swizzled for 16-bit elements, rows padded by
    16 bytes for TF32 (ldmatrix reads A and n-major B; the k-major B's LDS count conflict-free)."""
    cpr = cols * size // 16
    if size == 2:
        addr = swizzled_address(cpr)
        return ldmatrix_ways(0, address=addr, cpr=cpr), cp_async_ways(0, cpr * 16, address=addr)
    return ldmatrix_ways(cpr * 16 + 16), cp_async_ways(cpr * 16 + 16, cpr * 16)


# Reference problems of the memory-bound model: FFMA per output element (taps x input channels)
# and unique DRAM bytes per output element in units of the element size (x read once, y written
# once; weights and halo re-reads ignored).
MEMORY_REFERENCE = {
    "depthwise_cl": (9, 2, "3x3 depthwise, stride 1"),
    "depthwise_tile": (9, 2, "3x3 depthwise, stride 1"),
    "depthwise_stream": (4, 2, "1-D causal depthwise, k=4"),
    "grouped": (36, 2, "3x3, 4 channels per group"),
    "im2col": (0, 2, "copy"),
    "pad_copy": (0, 2, "copy"),
}


# Block sizes of the memory-bound kernels (families/depthwise/depthwise_configs.h: CONVND_DW_THREADS and
# CONVND_DW_STREAM_THREADS); None where the launcher picks it at run time.
MEMORY_THREADS = {"depthwise_cl": 256, "depthwise_tile": 256, "grouped": 256, "depthwise_stream": 128}


def memory_family(dem):
    m = MEMORY_BOUND.search(dem)
    if not m:
        return None
    fam = m.group(1)
    key = "im2col" if fam.startswith(("im2col", "col2im")) else fam
    return key, m.group(2), int(m.group(3)) if fam == "depthwise_cl" and m.group(3) else 0


def occupancy(regs, smem, threads):
    """Resident warps per SM from registers (allocated per warp in units of 256), shared memory
    and the block/warp limits; None when the block size is unknown."""
    h = HARDWARE
    if not threads:
        return None
    warps = (threads + 31) // 32
    regs_warp = ((max(regs, 1) * 32 + 255) // 256) * 256
    by_regs = (h["regs_per_sm"] // regs_warp) // warps
    by_smem = h["smem_per_sm"] // (smem + h["smem_reserved_per_block"]) if smem else h["max_blocks_per_sm"]
    blocks = min(by_regs, by_smem, h["max_blocks_per_sm"], h["max_warps_per_sm"] // warps)
    return blocks * warps


def tensor_core_model(instrs, dem):
    """The model of a tensor-core kernel, or None for other kernels."""
    fam = tensor_core_family(dem)
    if not fam:
        return None
    family, dtype, config, threads, ways, path = fam
    loop = main_loop(instrs, "hmma")
    if not loop:
        return {"family": family, "dtype": dtype, "config": config, "path": path, "threads": threads,
                "error": "no HMMA main loop found"}
    _, _, mix = loop
    model = {"family": family, "dtype": dtype, "config": config, "path": path, "threads": threads,
             "mix": mix}
    model.update(mma_sync_ceilings(mix, dtype, max(ways["ldsm A"], ways["ldsm B"]),
                                   max(ways["cp.async A"], ways["cp.async B"])))
    return model


def mma_sync_ceilings(mix, dtype, ldsm_ways, cp_ways):
    """The two ceilings of an mma.sync main loop (its loop_mix), per warp and loop iteration:
    tensor-pipe clocks against shared-memory wavefronts (ldmatrix matrices x their conflict
    ways, LDS/STS and generic loads, cp.async writes x their ways) and against issued
    instructions."""
    h = HARDWARE
    peak = h["tensor_flop_per_clk_sm"][dtype]
    flop = mix.get("hmma_flop", 0)
    tensor_clk = flop / peak  # clocks of the SM's tensor cores per warp and k-tile
    wf = (mix["ldsm_x"] * ldsm_ways + mix.get("lds_wavefronts", 0)
          + mix.get("ld_generic_bytes", 0) / 128
          + mix.get("ldgsts_bytes", 0) / 128 * cp_ways + mix.get("sts_wavefronts", 0))
    smem_ceiling = min(1.0, tensor_clk * h["smem_bytes_per_clk_sm"] / 128 / wf) if wf else 1.0
    pipe = flop / (peak / h["issue_per_clk_sm"])  # tensor-pipe clocks of one scheduler
    issue_ceiling = min(1.0, pipe / mix["instr"]) if mix["instr"] else 0.0
    return {"ldsm_ways": ldsm_ways, "cp_ways": cp_ways, "wavefronts": wf,
            "smem_ceiling": smem_ceiling, "issue_ceiling": issue_ceiling,
            "ceiling": min(smem_ceiling, issue_ceiling)}


def hgmma_ceilings(consumer, producer, dtype, tile, consumer_warpgroups):
    """The two ceilings of a warp-specialized wgmma kernel, per k-tile of a BM x BN x BK block
    tile, from the loop_mix of its consumer loop (one warpgroup's HGMMAs) and of its producer
    loop (the TMA loads; A and B one UTMALDG each per k-tile, as both designs here issue them):
      smem   tensor clocks against shared-memory wavefronts: every HGMMA reads its B slice (and
             A, when SS) from shared memory, and TMA writes (BM + BN) x BK elements a k-tile;
      issue  tensor clocks against the instructions the busiest scheduler issues: one warp of
             each consumer warpgroup, plus the producer warp's loop.
    consumer_warpgroups: how many warpgroups share the block tile's rows."""
    h = HARDWARE
    bm, bn, bk = tile
    peak = h["tensor_flop_per_clk_sm"][dtype]
    size = 4 if dtype == "tf32" else 2
    flop_ktile = 2 * bm * bn * bk
    ktiles_per_consumer_iter = consumer.get("hgmma_flop", 0) * consumer_warpgroups / flop_ktile
    if not ktiles_per_consumer_iter or not producer.get("tma"):
        return {"error": "no HGMMA consumer loop or no TMA producer loop found"}
    ktiles_per_producer_iter = producer["tma"] / 2
    tensor_clk = flop_ktile / peak
    reads = consumer["hgmma_smem_bytes"] * consumer_warpgroups / ktiles_per_consumer_iter
    writes = (bm + bn) * bk * size
    smem_ceiling = min(1.0, tensor_clk * h["smem_bytes_per_clk_sm"] / (reads + writes))
    issued = (consumer_warpgroups * consumer["instr"] / ktiles_per_consumer_iter +
              producer["instr"] / ktiles_per_producer_iter)
    issue_ceiling = min(1.0, tensor_clk / issued)
    return {"smem_ceiling": smem_ceiling, "issue_ceiling": issue_ceiling,
            "ceiling": min(smem_ceiling, issue_ceiling), "ktiles_per_iter": ktiles_per_consumer_iter,
            "smem_bytes_per_ktile": reads + writes}


def memory_model(instrs, dem):
    """The model of a memory-bound kernel, or None for other kernels."""
    fam = memory_family(dem)
    if not fam:
        return None
    family, t, width = fam
    size = ELEM.get(t, 4)
    dtype = {"float": "f32"}.get(t, DTYPE.get(t, t))
    ffma_ref, bytes_ref, what = MEMORY_REFERENCE[family]
    if width:  # depthwise_cl's kernel-width instances: 1-D causal for even widths, else square
        ffma_ref, what = ((width, f"1-D depthwise, k={width}") if width % 2 == 0 else
                          (width * width, f"{width}x{width} depthwise, stride 1"))
    h = HARDWARE
    dram_clk = h["dram_bytes_per_s"] / (h["sms"] * h["clock_hz"])
    threads_per_clk = h["issue_per_clk_sm"] * 32
    if ffma_ref:
        loop = main_loop(instrs, "ffma")
        if not loop:
            return {"family": family, "dtype": dtype, "reference": what,
                    "error": "no FFMA loop found"}
        mix = loop[2]
        instr_per_output = ffma_ref * mix["instr"] / mix["ffma"]
        bytes_per_instr = bytes_ref * size / instr_per_output
    else:
        loop = main_loop(instrs, "global")
        if not loop:
            return {"family": family, "dtype": dtype, "reference": what,
                    "error": "no copy loop found"}
        mix = loop[2]
        bytes_per_instr = (mix.get("ldg_bytes", 0) + mix.get("stg_bytes", 0)) / 32 / mix["instr"]
    issue_ceiling = min(1.0, bytes_per_instr * threads_per_clk / dram_clk)
    return {"family": family, "dtype": dtype, "reference": what, "mix": mix, "width": width,
            "threads": MEMORY_THREADS.get(family),
            "bytes_per_instr": bytes_per_instr, "issue_ceiling": issue_ceiling,
            "ceiling": issue_ceiling}


# ---- verdicts: floors each configuration declares, and known defects -------------------------------
# Model floors (fraction of peak) per tensor-core (family, config, dtype) and memory-bound
# (family, dtype[, kernel width]); a modelled instance below its floor, or without one, fails.
# Tensor cores: the issue's targets (#13) for the mma.sync core on XOR-swizzled stages -- >= 0.70
# for the largest configs (128x256 / 256x128 blocks of 64x64 warp tiles: 72% in the model),
# >= 0.55 for the mid-size 128x128 (4 warps of 64x64: 65-66%) -- and a little under today's
# figures for the small-problem tiles (64x64: 23-32%, 32x64: 23-28%, bounded by 32x32 and 32x16
# warp tiles' ldmatrix traffic).
FLOORS = {}
for _fam in ("igemm_tc", "convT_tc"):
    for _t in ("f16", "bf16"):
        FLOORS.update({(_fam, "128x256x64_s4", _t): 0.70, (_fam, "256x128x64_s4", _t): 0.70})
    for _t in ("f16", "bf16", "tf32"):
        FLOORS.update({(_fam, "128x128x32_s3", _t): 0.60, (_fam, "64x64x32_s3", _t): 0.20,
                       (_fam, "32x64x32_s2", _t): 0.20})
# The prefix/state instances (igemm_io_kernel, SPEC §12, §14): the vector loader keeps per-row
# bases in x, the prefix and the suffix and tap masks as igemm_tc's does, plus a prefix mask and a
# before-the-suffix mask along the io axis (f16 128x128x32 vec loop: 324 instructions against
# igemm_tc's 232; 283 before the suffix, 343 before the masks); figures (smem/issue %, 2026-12-05,
# with the suffix): 128x128x32 vec 59/79 (f16, bf16), 59/64 (TF32; 65/90 and 66/66 before the
# suffix), gather 89-90/76-77; 64x64x32 and 32x64x32 vec 27-31/32-40, gather 40-41/23-30. Floors
# a little under them: this instance runs only problems with a halo or a state.
for _t in ("f16", "bf16", "tf32"):
    FLOORS.update({("igemm_io_tc", "128x128x32_s3", _t): 0.55,
                   ("igemm_io_tc", "64x64x32_s3", _t): 0.20,
                   ("igemm_io_tc", "32x64x32_s2", _t): 0.20})
# The weight gradient's tensor-core kernel (wgrad_tc): scalar 2-/4-byte gathers of dy and x, one
# thread per reduction column, 64-bit offsets and bounds checks, ~1,050 instructions a k-tile
# (tools/peer_sass.py: CUTLASS's wgrad loop is 171, 16-byte channel vectors): 6% (16-bit) and
# 10-11% (TF32) of peak; 2% and 4% before its loader stopped dividing in the loop. Floors a little
# under today's figures.
for _t in ("f16", "bf16"):
    FLOORS.update({("wgrad_tc", "64x64x32", _t): 0.05, ("wgrad_tc", "32x32x32", _t): 0.05})
FLOORS.update({("wgrad_tc", "64x64x32", "tf32"): 0.09, ("wgrad_tc", "32x32x32", "tf32"): 0.09})
# The weight gradient's vector path (wgrad_vec_tc, families/wgrad/wgrad_vec.cuh): 16-byte cp.async
# of channels-last dy and x into k-major stages, ldmatrix.trans. Floors a little under its figures
# (smem/issue %, f16 and bf16 alike, 2026-12-07): 128x128x32 65/79 (loop 324 instructions),
# 128x64x32 43/43 (301: its dy and x rows differ, two sets of cursors), 64x64x32 31/38 (167);
# 65/57, 43/41, 31/27 before the stages rotated without a 64-bit modulo and the two operands of
# equal width shared their rows' cursors.
for _t in ("f16", "bf16"):
    FLOORS.update({("wgrad_vec_tc", "128x128x32", _t): 0.60, ("wgrad_vec_tc", "128x64x32", _t): 0.40,
                   ("wgrad_vec_tc", "64x64x32", _t): 0.28})
FLOORS.update({
    ("depthwise_cl", "f16"): 0.45, ("depthwise_cl", "bf16"): 0.45, ("depthwise_cl", "f32"): 0.85,
    ("depthwise_stream", "f16"): 0.45, ("depthwise_stream", "bf16"): 0.45,
    ("depthwise_stream", "f32"): 0.85,
    ("depthwise_tile", "f16"): 0.20, ("depthwise_tile", "bf16"): 0.20, ("depthwise_tile", "f32"): 0.40,
    ("grouped", "f16"): 0.10, ("grouped", "bf16"): 0.10, ("grouped", "f32"): 0.20,
    ("im2col", "f16"): 0.04, ("im2col", "bf16"): 0.04, ("im2col", "f32"): 0.08,
    ("pad_copy", "f16"): 0.10, ("pad_copy", "bf16"): 0.10, ("pad_copy", "f32"): 0.20,
})

# depthwise_cl's fixed-width kernels, per width (reference: 1-D for even widths, square for odd):
# the issue's depthwise target (bf16 >= 0.90 of DRAM bandwidth) applies to the 3x3 reference.
for _t in ("f16", "bf16", "f32"):
    FLOORS.update({("depthwise_cl", _t, 2): 0.90, ("depthwise_cl", _t, 3): 0.90,
                   ("depthwise_cl", _t, 4): 0.90, ("depthwise_cl", _t, 5): 0.35,
                   ("depthwise_cl", _t, 7): 0.20, ("depthwise_cl", _t, 9): 0.12,
                   ("depthwise_cl", _t, 31): 0.01})

# Known defects the model shows and another change fixes: (family, dtype) -> (rule, why). The
# row says "waived"; a waiver whose defect is gone fails, so it is removed with the fix. Empty
# since the mma.sync + ldmatrix core replaced WMMA (whose bf16/tf32 fragments were generic LD).
WAIVERS = {}


def floor_of(model):
    if "config" in model:
        return FLOORS.get((model["family"], model["config"], model["dtype"]))
    width = model.get("width")
    return FLOORS.get((model["family"], model["dtype"], width)) if width else \
        FLOORS.get((model["family"], model["dtype"]))


def model_of(instrs, dem):
    """The model dict of one kernel instance, or None for kernels it does not cover."""
    m = tensor_core_model(instrs, dem)
    if m is None:
        m = memory_model(instrs, dem)
    return m


def judge(model, label):
    """(verdict, [failures], [waived]) of one modelled instance."""
    fails, waived = [], []
    if "error" in model:
        return "FAIL", [f"{label}: {model['error']}"], []
    if "config" in model and model["mix"].get("ld_generic", 0):
        w = WAIVERS.get((model["family"], model["dtype"]))
        text = f"{label}: {model['mix']['ld_generic']} generic LD in the tensor-core main loop"
        if w and w[0] == "LD.E":
            waived.append(f"{text} (waived: {w[1]})")
        else:
            fails.append(text)
    floor = floor_of(model)
    if floor is None:
        fails.append(f"{label}: declares no model floor (add it to FLOORS in tools/sass_model.py)")
    elif model["ceiling"] + 1e-9 < floor:
        fails.append(f"{label}: model ceiling {100 * model['ceiling']:.0f}% below its floor "
                     f"{100 * floor:.0f}%")
    return ("FAIL" if fails else "waived" if waived else "ok"), fails, waived


def stale_waivers(models):
    """Waivers whose defect no modelled instance shows any more."""
    seen = {(m["family"], m["dtype"]) for m in models
            if "config" in m and "mix" in m and m["mix"].get("ld_generic", 0)}
    present = {(m["family"], m["dtype"]) for m in models if "config" in m}
    return [f"waiver {k} ({v[0]}) is stale: no instance shows it; remove it from WAIVERS"
            for k, v in WAIVERS.items() if k in present and k not in seen]


def label_of(model, short):
    if "config" in model:
        return f"{model['family']} {model['dtype']} {model['config']} {model['path']}"
    return short


def columns(model, regs, smem, threads):
    """The table's model columns of one instance."""
    occ = occupancy(regs, smem, threads or model.get("threads"))
    mix = model.get("mix", {})
    pct = lambda v: f"{100 * v:.0f}" if v is not None else "-"
    hmma = f"{mix.get('hmma', 0)}x{'/'.join(sorted(mix.get('hmma_shape', []))) or '-'}" if "config" in model else "-"
    ways = f"{model['ldsm_ways']:g}/{model['cp_ways']:g}" if "config" in model else "-"
    return {
        "occ": str(occ) if occ is not None else "-",
        "loop": str(mix.get("instr", "-")),
        "HMMA": hmma,
        "LDSM": str(mix.get("ldsm", 0)),
        "LDS": str(mix.get("lds", 0)),
        "LD.E": str(mix.get("ld_generic", 0)),
        "LDGSTS": str(mix.get("ldgsts", 0)),
        "LDG": str(mix.get("ldg", 0)),
        "STG": str(mix.get("stg", 0)),
        "FFMA": str(mix.get("ffma", 0)),
        "int": str(mix.get("int", 0)),
        "mov": str(mix.get("move", 0)),
        "BAR": str(mix.get("bar", 0)),
        "ways": ways,
        "smem%": pct(model.get("smem_ceiling")),
        "issue%": pct(model.get("issue_ceiling")),
        "B/ins": f"{model['bytes_per_instr']:.3f}" if "bytes_per_instr" in model else "-",
        "floor%": pct(floor_of(model)),
    }
