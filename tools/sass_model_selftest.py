#!/usr/bin/env python3
"""Self-test of the SASS performance model (tools/sass_model.py), run by static_check.py
before it models anything: bank-conflict counts against hand-computed layouts, the main-loop
finder on a synthetic listing, the issue's worked ceilings, and every verdict rule."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_model as sm  # noqa: E402

SYNTHETIC = """
        Function : _Z4testv
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x0 */
        /*0010*/                   LDGSTS.E.BYPASS.128 [R2], desc[UR4][R4.64] ;  /* 0x0 */
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;          /* 0x0 */
        /*0030*/                   LDSM.16.M88.4 R8, [R3] ;               /* 0x0 */
        /*0040*/                   HMMA.16816.F32.BF16 R12, R8, R10, R12 ; /* 0x0 */
        /*0050*/                   LD.E R9, desc[UR4][R6.64] ;            /* 0x0 */
        /*0060*/                   IADD3 R3, R3, 0x10, RZ ;               /* 0x0 */
        /*0070*/               @P0 BRA 0x10 ;                             /* 0x0 */
        /*0080*/                   FFMA R1, R2, R3, R1 ;                  /* 0x0 */
        /*0090*/               @P1 BRA 0x80 ;                             /* 0x0 */
        /*00a0*/                   EXIT ;                                 /* 0x0 */
"""


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    # 80-byte rows (32 bf16 + 16 bytes of padding): ldmatrix rows land on distinct banks, but a
    # quarter-warp of 16-byte cp.async writes wraps onto bank 0 twice (issue #13: 2-way)
    check(sm.ldmatrix_ways(80) == 1, "ldmatrix on 80-byte rows is conflict-free")
    check(sm.cp_async_ways(80, 64) == 2, "cp.async on 80-byte rows is 2-way")
    # unpadded rows without swizzle: 64-byte rows put 4 of the 8 ldmatrix rows on each bank group
    check(sm.ldmatrix_ways(64) == 4, "ldmatrix on unpadded 64-byte rows is 4-way")
    check(sm.ldmatrix_ways(128) == 8, "ldmatrix on unpadded 128-byte rows is 8-way")
    # the XOR swizzle the new core uses removes it
    check(sm.ldmatrix_ways(128, lambda r, c: c ^ (r % 8)) == 1, "swizzled 128-byte rows")
    check(sm.cp_async_ways(128, 128, lambda r, c: c ^ (r % 8)) == 1, "swizzled cp.async")
    # primitives/smem_tile.cuh's swizzle (4, 8, 16, 32 chunks a row) for both; a wrong key is not
    for cpr in (4, 8, 16, 32):
        addr = sm.swizzled_address(cpr)
        check(sm.ldmatrix_ways(0, address=addr, cpr=cpr) == 1, f"swizzled ldmatrix, {cpr} chunks")
        check(sm.cp_async_ways(0, 16 * cpr, address=addr) == 1, f"swizzled cp.async, {cpr} chunks")
        check(sorted(addr(r, c) for r in range(16) for c in range(cpr)) ==
              [16 * i for i in range(16 * cpr)], f"the swizzle permutes the tile, {cpr} chunks")
    check(sm.ldmatrix_ways(0, address=lambda r, c: 16 * (8 * r + (c ^ (r & 3))), cpr=8) == 2,
          "a swizzle keyed on row % 4 is 2-way")

    funcs = sm.parse_functions(SYNTHETIC)
    instrs = funcs["_Z4testv"]
    lo, hi, mix = sm.main_loop(instrs, "hmma")
    check((instrs[lo][0], instrs[hi][0]) == (0x10, 0x70), "HMMA loop is 0x10..0x70")
    check(mix["hmma"] == 1 and mix["ldsm_x"] == 4 and mix["ld_generic"] == 1 and
          mix["ldgsts"] == 1 and mix["bar"] == 1 and mix["instr"] == 7, f"mix {mix}")
    lo, hi, mix = sm.main_loop(instrs, "ffma")
    check((instrs[lo][0], instrs[hi][0]) == (0x80, 0x90), "FFMA loop is 0x80..0x90")

    # the worked figure: a 128x256 block of 64x64 warp tiles, BK=32 bf16, conflict-free:
    # per warp and k-tile 64 HMMA.16816 = 64 tensor clocks, 64 ldmatrix wavefronts, and the
    # block's 24 KiB of stage writes shared by 8 warps = 24 wavefronts -> 64 / 88 = 73%
    check(abs(64 / (64 + 24) - 0.727) < 0.001, "worked example")
    tensor_clk = 64 * sm.HMMA_FLOP["16816"] / sm.HARDWARE["tensor_flop_per_clk_sm"]["bf16"]
    check(tensor_clk == 64, "an HMMA.16816 is one tensor clock of an SM")

    # wgmma: an SS HGMMA reads A (64x16) and B (Nx16) from shared memory, an RS one only B
    ss = "HGMMA.64x128x16.F32 R24, gdesc[UR4], R24, gsb0"
    rs = "HGMMA.64x128x16.F32.BF16 R24, R152, gdesc[UR8], R24"
    check(sm.hgmma_work("HGMMA.64x128x16.F32", ss) == (2 * 64 * 128 * 16, (128 + 64) * 16 * 2),
          "SS HGMMA work")
    check(sm.hgmma_work("HGMMA.64x128x16.F32.BF16", rs) == (2 * 64 * 128 * 16, 128 * 16 * 2),
          "RS HGMMA work")
    check(sm.hgmma_work("HGMMA.64x256x8.F32.TF32", "HGMMA.64x256x8.F32.TF32 R0, gdesc[UR4], R0")
          == (2 * 64 * 256 * 8, (256 + 64) * 8 * 4), "TF32 HGMMA work")
    # static_check_hopper's worked ceilings from a consumer loop of 4 SS 64xBNx16 HGMMAs per
    # warpgroup (2 warpgroups, BK = 64) and a producer loop of 2 TMA loads: 128x128 reads 48 KiB
    # and writes 32 KiB a k-tile for 512 tensor clocks (80%); 128x256 128 KiB for 1024 (100%)
    for bn, want in ((128, 0.8), (256, 1.0)):
        flop, smem = sm.hgmma_work(f"HGMMA.64x{bn}x16.F32", ss)
        consumer = {"instr": 68, "hgmma": 4, "hgmma_flop": 4 * flop, "hgmma_smem_bytes": 4 * smem}
        got = sm.hgmma_ceilings(consumer, {"instr": 150, "tma": 2}, "f16", (128, bn, 64), 2)
        check(abs(got["smem_ceiling"] - want) < 1e-9 and got["ktiles_per_iter"] == 1,
              f"wgmma smem ceiling 128x{bn}: {got}")
        check(got["issue_ceiling"] == min(1.0, (2 * 128 * bn * 64 / 4096) / (2 * 68 + 150)),
              "wgmma issue ceiling: the busiest scheduler's consumer and producer warps")

    # verdicts
    base = {"family": "igemm_tc", "dtype": "f16", "config": "128x128x32_s3", "path": "vec",
            "ceiling": 0.65, "mix": {"ld_generic": 0}}
    check(sm.judge(dict(base), "x")[0] == "ok", "a clean row passes")
    check(sm.judge(dict(base, mix={"ld_generic": 3}), "x")[0] == "FAIL", "LD.E fails")
    sm.WAIVERS[("igemm_tc", "bf16")] = ("LD.E", "self-test waiver")
    check(sm.judge(dict(base, dtype="bf16", mix={"ld_generic": 3}), "x")[0] == "waived",
          "a waived LD.E is reported, not failed")
    check(sm.judge(dict(base, ceiling=0.1), "x")[0] == "FAIL", "below the floor fails")
    check(sm.judge(dict(base, config="999x1x1_s9"), "x")[0] == "FAIL", "no floor fails")
    check(sm.judge({"family": "x", "error": "no loop"}, "x")[0] == "FAIL", "no loop fails")
    stale = sm.stale_waivers([dict(base, dtype="bf16", mix={"ld_generic": 0})])
    check(any("igemm_tc', 'bf16'" in s for s in stale), "a waiver nothing needs is stale")
    del sm.WAIVERS[("igemm_tc", "bf16")]
    print("sass_model self-test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
