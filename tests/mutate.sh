#!/usr/bin/env bash
# Mutation check for the kernels: applies each planted bug of the list below, one at a time, to
# the source tree, rebuilds only what changed (the build dir $CONVND_BUILD_DIR, default build/;
# ccache), runs the tests meant to catch it, restores the file (also on Ctrl-C or failure), and
# reports KILLED (some test failed, or it does not compile) or SURVIVED. Not in CI (each mutant
# recompiles one or more kernels: minutes on 2 cores); run it on a clean tree before calling a
# kernel change done, do not edit kernels while it runs, and record the last result in
# tests/MUTANTS.md.
#
#   tests/mutate.sh            every mutant
#   tests/mutate.sh 3 7        mutants 3 and 7 only
# Exit status: the number of survivors. The report goes to $build/mutate-report.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CONVND_BUILD_DIR:-build}
work=$build/mutate
mkdir -p "$work"

# Each mutant: id ^ file ^ exact text ^ replacement ^ test filter ^ extra environment.
# The text must occur exactly once in the file; \n is a newline, \x5e a "^" (the separator).
# Mutants 1 and 2 plant the bugs of primitives/planted_bugs.h (barrier moved below the prefetch;
# barrier before the C-tile store removed) in the library's own implicit GEMM and transposed
# kernels. Mutants 6 and 9 are in the
# staged-rows skeleton that depthwise_cl and grouped share. Mutant 14 plants a wrong XOR swizzle
# (a permutation still, so results stay right: only bank conflicts), mutant 15 an A-fragment read
# that ignores the swizzle the loader wrote with. Mutants 17-19 are the Hopper tier's transposed
# mode: a phase's input offset P0' off by one, the phase's taps walked unflipped (k0 upwards),
# and a phase no tap reaches skipping its tiles' epilogue. Mutants 20-25 are the prefix input and
# state output (SPEC §12): the prefix/x boundary off by one and the state taken from X's start
# (primitives/io_axis.cuh, shared by direct and the implicit GEMM's prefix kernel); in the implicit
# GEMM's prefix kernel, the prefix read at x's spatial strides, the gather path's channel stride
# always x's, the vector path taken for a misaligned prefix, and the state loop's block index
# dropping the grid's y and z.
# Mutants 67-70 are the suffix (SPEC §14): the x/suffix boundary off by one (io_axis.cuh, shared
# by direct and the prefix kernel), the vector path's suffix mask one row late, the vector path
# taken for a misaligned suffix, and the gather path's suffix rows at the prefix's batch stride.
# Mutants 26-28 are the tensor-core register epilogue's 16-byte stores: a wrong shuffle lane in
# the quad transpose, the channel-tail predicate of the wide store dropped, the wide store taken
# on a misaligned y.
# Mutants 29-33 are depthwise_cl's two-halves path (8-output 16-bit fixed-width kernels): the
# second half reading the first half's channels, the tail predicate of the combined store
# removed, the padding compare off by one, the halves swapped in the 16-byte store, and a 64-bit
# row offset truncated to 32 bits.
# Mutants 34-38 are the implicit GEMM's incremental x loader (igemm_load.cuh; the masks:
# igemm_tap_mask, igemm_geometry.cuh): a tap mask bit
# set for the position just past the input, the k1 step's wrap back over k2 dropped, mask bits
# one tap off, the vector path taken for a filter one tap wider than the masks, and the
# transposed kernels' per-phase tap deltas not set.
# Mutants 39-40 are depthwise_cl's width-31 tap loop (dw_for_taps): a chunk of taps skipped,
# and the tail's ring slots shifted by one.
# Mutants 41-46 are depthwise_cl's generic row in two halves (8-output 16-bit vector kernels, any
# stride and dilation) and width 31's per-half stores: the second half reading the first half's
# channels, the input walk stepping one position per output instead of the stride, the second
# half using the first half's weights, the walk over taps ignoring the dilation, the padding
# compare off by one, and width 31's second half stored over the first (since width 31 keeps
# its first half in shared memory: its combined 16-byte store taking the second half's words for
# the first); mutant 47 narrows the generic halves' 64-bit element offset to 32 bits where the
# load forms its address.
# Mutants 48-50 are the prefix kernel's incremental vector loader (igemm_io.cuh): the prefix
# mask one position too long, x's row base not moved back by the prefix length, and the
# prefix's tap term at x's stride along dimension 1.
# Mutants 51-53 are width 31's kept first half in shared memory (8-output 16-bit kernels): the
# second half reading another output's slot, the slots indexed by threadIdx.x alone (the block's
# item rows share them), and the slots placed over the staged weights. Mutants 54-56 are the
# element-wise 8-output 16-bit kernels in halves: the second half reading the first half's input
# channels, the second half stored over the first half's channels, and the store's lane-tail
# mask one lane too wide.
# Mutant 57 is the gather x loader's per-tap state (igemm_load.cuh), kept between k-tiles:
# re-derived only when the k2 tap starts from 0, so a new k2 tap reads the previous tap's rows.
# Mutants 58-59 are the fragment reads at a tile base plus a byte offset (convnd_ldmatrix_at):
# in the kernels, the B read of columns j, j+1 taken at j & ~2 (16-bit tiles with 4+ column
# pairs read the wrong columns); in the emulator's twin, the byte offset off by one row.
# Mutant 60 is TF32's n-major B fragments through ldmatrix: the second k half read 8 elements
# on (the 16-bit distance) instead of 4.
# Mutant 61 is the emulator's mbarrier.try_wait without the ISA's time-limit freedom (it blocks
# at once, as before): a kernel that does not loop on try_wait's result would pass.
# Mutants 62-63 are a row's start plus a column in a stage tile (L::row_start, L::at: the gather
# loaders): the swizzled tile's column added instead of XORed in, and the gather x loader writing
# its elements one column over within the row (a permutation of the row's columns).
# Mutants 64-66 are the weight gradient's loader (wgrad_igemm.cuh), which carries each thread's
# reduction column from k-tile to k-tile and decodes the x tile's taps once per block: a digit's
# carry one position late, the carry into the batch index dropped, and no barrier between the
# tap table's fill and the first load that reads it.
early='CONVND_EMU_COPIES=early CONVND_TEST_ORDERS=warp_ahead,reverse'
early_tma='CONVND_EMU_COPIES=early CONVND_TEST_ORDERS=forward,warp_ahead'
mutants=(
  "1^families/igemm/igemm_kernel.cuh^#include \"planted_bugs.h\"^#ifndef CONVND_PLANTED_BUG\n#define CONVND_PLANTED_BUG 1\n#endif\n#include \"planted_bugs.h\"^forced_schedules/feature_table^$early"
  "2^families/igemm/igemm_kernel.cuh^#include \"planted_bugs.h\"^#ifndef CONVND_PLANTED_BUG\n#define CONVND_PLANTED_BUG 2\n#endif\n#include \"planted_bugs.h\"^forced_schedules/feature_table^$early"
  "3^families/igemm/igemm_kernel.cuh^convnd_cp_async_wait<STAGES - 2>();^convnd_cp_async_wait<STAGES - 1>();^forced_schedules/feature_table^"
  "4^families/depthwise/depthwise_common.cuh^if (!xrow || i2 < 0 || i2 >= (Idx)p.in[2]) {^if (!xrow || i2 < 0 || i2 > (Idx)p.in[2]) {^depthwise/*^"
  "5^families/igemm/convT_phase.h^    e.kappa = S / g;^    e.kappa = S;^transposed/*^"
  "6^families/depthwise/depthwise_common.cuh^    g.runs = (p.out[2] + R - 1) / R;^    g.runs = p.out[2] / R > 0 ? p.out[2] / R : 1;^depthwise/*^"
  "7^families/depthwise/depthwise_common.cuh^const T *q = xrow + i2 * (Idx)p.xs[4] + lc.base;^const T *q = xrow + (int32_t)(i2 * (Idx)p.xs[4]) + lc.base;^extreme_geometry/sparse*^"
  "8^primitives/io_axis.cuh^    return {x + conv_offset<Idx>(p.xs, n, ci0, i0, i1, i2), (Idx)p.xs[1]};^    return {x + (int32_t)conv_offset<Idx>(p.xs, n, ci0, i0, i1, i2), (Idx)p.xs[1]};^extreme_geometry/sparse*^"
  "9^families/depthwise/depthwise_common.cuh^                __syncthreads(); /* the previous stage is no longer read */^                /* barrier removed */^depthwise/*^"
  "10^families/depthwise/depthwise_stream.cu^            for (Idx s = S > (Idx)WIN ? S - (Idx)WIN : 0; s < S; ++s) {^            for (Idx s = S > (Idx)WIN ? S - (Idx)WIN + 1 : 0; s < S; ++s) {^@(depthwise|extreme_geometry)/*^"
  "11^families/depthwise/depthwise_cl.cu^    if (i2 < 0 || i2 >= (Idx)p.in[2]) return make_uint4(0u, 0u, 0u, 0u);^    if (i2 < 0 || i2 > (Idx)p.in[2]) return make_uint4(0u, 0u, 0u, 0u);^depthwise/*^"
  "12^families/depthwise/depthwise_cl.cu^    return convnd_ld_vec(reinterpret_cast<const uint4 *>(xrow + i2 * (Idx)p.xs[4] + lc.base));^    return convnd_ld_vec(reinterpret_cast<const uint4 *>(xrow + (int32_t)(i2 * (Idx)p.xs[4]) + lc.base));^extreme_geometry/sparse*^"
  "13^families/hopper_igemm/hopper_igemm.cu^            convnd_wgmma_wait_group<1>(); /* the previous K block's MMAs are done */^            convnd_wgmma_wait_group<2>();^hopper_igemm/domain*^$early_tma"
  "14^primitives/smem_tile.cuh^return row * CPR + (c \x5e (row & 7));^return row * CPR + (c \x5e (row & 3));^smem_swizzle/*^"
  "15^primitives/tc_warp_mma.cuh^return LA::offset(wm0 + 16 * i + lane % 16, k + (lane / 16) * QUAD);^return (wm0 + 16 * i + lane % 16) * BK + k + (lane / 16) * QUAD;^forced_schedules/feature_table^"
  "16^families/depthwise/depthwise_cl.cu^    const uintptr_t ptrs = (uintptr_t)a->x | (uintptr_t)a->y |^    const uintptr_t ptrs = (uintptr_t)a->y |^depthwise/misaligned*^"
  "17^families/hopper_igemm/hopper_igemm.cu^                    g.p0[d] = (int32_t)e.P0;^                    g.p0[d] = (int32_t)e.P0 + 1;^hopper_igemm/transposed*^"
  "18^families/hopper_igemm/hopper_igemm.cu^                    g.w_tap0 += (int32_t)e.k_last * wstride[d];\n                    g.w_tap_step[d] = -(int32_t)e.kappa * wstride[d];^                    g.w_tap0 += (int32_t)(e.k_last - (e.T - 1) * e.kappa) * wstride[d];\n                    g.w_tap_step[d] = (int32_t)e.kappa * wstride[d];^hopper_igemm/transposed*^"
  "19^families/hopper_igemm/hopper_igemm.cu^        convnd_wgmma_wait_group<0>();^        if (kiters == 0) continue;\n        convnd_wgmma_wait_group<0>();^hopper_igemm/transposed*^"
  "20^primitives/io_axis.cuh^    if (along < prefix_len) return true;^    if (along <= prefix_len) return true;^io_axis/*^"
  "21^primitives/io_axis.cuh^    const Idx src = pos[p.io_dim] + (Idx)p.in[p.io_dim] - (Idx)p.state_len;^    const Idx src = pos[p.io_dim];^io_axis/*^"
  "22^families/igemm/igemm_io.cuh^        return in_prefix ? prefix + (p_base + a * ps[2] + b * ps[3] + e * ps[4])^        return in_prefix ? prefix + (p_base + a * g.xs[2] + b * g.xs[3] + e * g.xs[4])^io_axis/forced_schedules*^"
  "23^families/igemm/igemm_io.cuh^        const int32_t cs = in_prefix ? this->ps[1] : g.xs[1];^        const int32_t cs = g.xs[1];^io_axis/forced_schedules*^"
  "24^families/igemm/igemm_io.cuh^    bool ok = p.ps[1] == 1 && (uintptr_t)a->x_prefix % 16 == 0;^    bool ok = p.ps[1] == 1;^io_axis/forced_schedules*^"
  "25^families/igemm/igemm_io.cuh^        (int64_t)gridDim.x * ((int64_t)blockIdx.y + (int64_t)gridDim.y * blockIdx.z);^        (int64_t)0 * ((int64_t)blockIdx.y + (int64_t)gridDim.y * blockIdx.z);^io_axis/forced_schedules*^"
  "26^primitives/tc_warp_mma.cuh^                rx[m] = __shfl_xor_sync(0xffffffffu, pick4(px, t \x5e m), m);^                rx[m] = __shfl_xor_sync(0xffffffffu, pick4(px, t \x5e m), m == 3 ? 1 : m);^tc_epilogue/*^"
  "27^families/igemm/tc_epilogue.cuh^            const bool whole = n0 + c + 8 <= g.cout_g;^            const bool whole = true;^tc_epilogue/*^"
  "28^families/igemm/tc_epilogue.cuh^const bool aligned = (reinterpret_cast<uintptr_t>(y + off) % 16 == 0) &&^const bool aligned = true &&^tc_epilogue/*^"
  "29^families/depthwise/depthwise_cl.cu^    const T *q0 = xrow + (lc.base + (Idx)(h * HALF) + i0 * xs);^    const T *q0 = xrow + (lc.base + i0 * xs);^depthwise/*^"
  "30^families/depthwise/depthwise_cl.cu^                    if (ow >= (Idx)p.out[2]) continue; /* not break: the loop must unroll */^^depthwise/*^"
  "31^families/depthwise/depthwise_cl.cu^        if ((U)k_next < in2) v = convnd_ld_vec(^        if ((U)k_next <= in2) v = convnd_ld_vec(^depthwise/*^"
  "32^families/depthwise/depthwise_cl.cu^{kept[r][0], kept[r][1], half[0], half[1]}^{half[0], half[1], kept[r][0], kept[r][1]}^depthwise/*^"
  "33^families/depthwise/depthwise_cl.cu^    const T *q0 = xrow + (lc.base + (Idx)(h * HALF) + i0 * xs);^    const T *q0 = xrow + (lc.base + (Idx)(h * HALF) + (int32_t)(i0 * xs));^extreme_geometry/sparse*^"
  "34^families/igemm/igemm_geometry.cuh^if ((uint32_t)(c + t * D) < (uint32_t)I)^if ((uint32_t)(c + t * D) <= (uint32_t)I)^igemm/load_paths^"
  "35^families/igemm/igemm_geometry.cuh^    g.xd[1] = step[1] - back[2];^    g.xd[1] = step[1];^igemm/load_paths^"
  "36^families/igemm/igemm_geometry.cuh^bits |= 0x80000000u >> t;^bits |= 0x40000000u >> t;^igemm/load_paths^"
  "37^families/igemm/igemm_geometry.cuh^        if (p.k[t] > CONVND_IGEMM_MASK_TAPS) return false;^        if (p.k[t] > CONVND_IGEMM_MASK_TAPS + 1) return false;^igemm/load_paths^"
  "38^families/igemm/convT_geometry.cuh^    igemm_set_x_deltas(b.g); /* from the phase's K */^^transposed/phase_cases^"
  "39^families/depthwise/depthwise_cl.cu^        for (int c = 0; c < KW / SLOTS; ++c) {^        for (int c = 0; c + 1 < KW / SLOTS; ++c) {^depthwise/*^"
  "40^families/depthwise/depthwise_cl.cu^            tap(KW / SLOTS * SLOTS + u, u);^            tap(KW / SLOTS * SLOTS + u, (u + 1) % SLOTS);^depthwise/*^"
  "41^families/depthwise/depthwise_cl.cu^    const T *xh = xrow + (lc.base + (Idx)(h * HALF));^    const T *xh = xrow + lc.base;^depthwise/*^"
  "42^families/depthwise/depthwise_cl.cu^    const U dq = (U)S * (U)xs;^    const U dq = (U)xs;^depthwise/*^"
  "43^families/depthwise/depthwise_cl.cu^    const float *wh = wrow + h * HALF;^    const float *wh = wrow;^depthwise/*^"
  "44^families/depthwise/depthwise_cl.cu^        const U dk = (U)D * (U)xs;^        const U dk = (U)xs;^depthwise/*^"
  "45^families/depthwise/depthwise_cl.cu^    if ((U)i2 < (U)in2) raw = convnd_ld_vec(^    if ((U)i2 <= (U)in2) raw = convnd_ld_vec(^depthwise/*^"
  "46^families/depthwise/depthwise_cl.cu^{first.x, first.y, half[0], half[1]}^{half[0], half[1], half[0], half[1]}^depthwise/*^"
  "47^families/depthwise/depthwise_cl.cu^reinterpret_cast<const uint2 *>(xh + (Idx)off)^reinterpret_cast<const uint2 *>(xh + (int32_t)off)^extreme_geometry/sparse*^"
  "48^families/igemm/igemm_io.cuh^            pmask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len);^            pmask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len + 1);^io_axis/forced_schedules*^"
  "49^families/igemm/igemm_io.cuh^x_base[p] += (c[d] - (d == io ? this->prefix_len : 0)) * g.xs[2 + d];^x_base[p] += c[d] * g.xs[2 + d];^io_axis/forced_schedules*^"
  "50^families/igemm/igemm_io.cuh^it.t[1] * g.D[1] * this->ps[3]^it.t[1] * g.D[1] * g.xs[3]^io_axis/forced_schedules*^"
  "51^families/depthwise/depthwise_cl.cu^convnd_ld_vec(kept_sm + r * CONVND_DW_THREADS)^convnd_ld_vec(kept_sm + (r \x5e 1) * CONVND_DW_THREADS)^depthwise/*^"
  "52^families/depthwise/depthwise_cl.cu^const int tid = (int)(threadIdx.y * blockDim.x) + tx;^const int tid = tx;^depthwise/*^"
  "53^families/depthwise/depthwise_cl.cu^reinterpret_cast<uint2 *>(wsm + g.rows_per_stage * (int)p.k[2] * cb) + tid^reinterpret_cast<uint2 *>(wsm) + tid^depthwise/*^"
  "54^families/depthwise/depthwise_cl.cu^hl.lane[jj] = (Idx)lc.delta[h * HALF + jj] * (Idx)p.xs[1];^hl.lane[jj] = (Idx)lc.delta[jj] * (Idx)p.xs[1];^depthwise/*^"
  "55^families/depthwise/depthwise_cl.cu^y_off + (Idx)j * (Idx)p.ys[1]);^y_off + (Idx)jj * (Idx)p.ys[1]);^depthwise/*^"
  "56^families/depthwise/depthwise_cl.cu^                            if (j < lc.lanes)\n^                            if (j <= lc.lanes)\n^depthwise/*^"
  "57^families/igemm/igemm_load.cuh^        if (it.c0 == 0) {^        if (it.c0 == 0 && it.t[2] == 0) {^@(igemm|transposed)/*^"
  "58^primitives/tc_warp_mma.cuh^convnd_ldmatrix_at<4, B_KMAJOR>(b, b_tile, (int)sizeof(T) * b_ldsm_offset(k, j));^convnd_ldmatrix_at<4, B_KMAJOR>(b, b_tile, (int)sizeof(T) * b_ldsm_offset(k, j & ~2));^forced_schedules/*^"
  "59^device/mma_sync_emu.cuh^static_cast<const char *>(base) + byte_off^static_cast<const char *>(base) + (byte_off \x5e 16)^emu_mma_sync/*^"
  "60^primitives/tc_warp_mma.cuh^k + ((lane / 8) % 2) * QUAD);^k + ((lane / 8) % 2) * 8);^forced_schedules/*^"
  "61^device/emu_mbarrier.c^            t->timed_out_parity = parity;\n            return 0;\n^            t->timed_out_parity = parity;\n^emu_mbarrier/*^"
  "62^primitives/smem_tile.cuh^return start \x5e col;^return start + col;^@(smem_swizzle|igemm|transposed)/*^"
  "63^families/igemm/igemm_load.cuh^igemm_copy_elem(tile + L::at(start, kc), ok ? x +^igemm_copy_elem(tile + L::at(start, kc \x5e 1), ok ? x +^@(igemm|transposed)/*^"
  "64^families/wgrad/wgrad_igemm.cuh^carry = c.o[t] >= p.out[t];^carry = c.o[t] > p.out[t];^wgrad/*^"
  "65^families/wgrad/wgrad_igemm.cuh^c.n += step.n + carry;^c.n += step.n;^wgrad/*^"
  "66^families/wgrad/wgrad_igemm.cuh^    __syncthreads(); /* the decoded columns, before any load reads them */\n^^wgrad/*^"
  "67^primitives/io_axis.cuh^const bool suffix = along >= prefix_len + x_len;^const bool suffix = along > prefix_len + x_len;^io_axis/*^"
  "68^families/igemm/igemm_io.cuh^smask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len + this->x_len);^smask[p] = igemm_tap_mask(c_io, k_io, d_io, this->prefix_len + this->x_len + 1);^io_axis/*^"
  "69^families/igemm/igemm_io.cuh^igemm_io_source_vectorizes<T>(p, p.fs, a->x_suffix)^igemm_io_source_vectorizes<T>(p, p.fs, a->x_prefix)^io_axis/*^"
  "70^families/igemm/igemm_io.cuh^f_base = r.n * this->fs[0] + group^f_base = r.n * this->ps[0] + group^io_axis/*^"
)

want=("$@")
source /work/helper_env.sh 2>/dev/null || true
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_CUDA=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null || { echo "mutate: the unmutated tree does not build"; exit 99; }

restore() { [ -n "${current:-}" ] && cp "$work/orig" "$current" && current=; }
trap 'restore; exit 130' INT TERM
trap restore EXIT

survivors=0
report=$build/mutate-report.txt
: >"$report"
for m in "${mutants[@]}"; do
  IFS='^' read -r id file old new filter env <<<"$m"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " =~ " $id " ]]; then continue; fi
  cp "$file" "$work/orig"
  current=$file
  if ! python3 - "$file" "$old" "$new" <<'PY'
import sys
def unescape(t):  # \n a newline, \x5e a '^' (the field separator)
    return t.replace('\\n', '\n').replace('\\x5e', '^')
path, old, new = sys.argv[1], unescape(sys.argv[2]), unescape(sys.argv[3])
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"mutant text occurs {s.count(old)} times in {path}")
open(path, 'w').write(s.replace(old, new))
PY
  then
    current=
    echo "mutant $id: NOT APPLIED ($file changed?)" | tee -a "$report"
    survivors=$((survivors + 1))
    continue
  fi
  if ! cmake --build "$build" -j"$(nproc)" >"$work/build_$id.log" 2>&1; then
    result="KILLED (does not compile)"
  elif env $env "$build/tests/convnd_tests" --filter "$filter" --jobs "$(nproc)" \
      >"$work/test_$id.log" 2>&1; then
    result="SURVIVED"
    survivors=$((survivors + 1))
  else
    result="KILLED"
  fi
  restore
  echo "mutant $id ($file, tests $filter${env:+, $env}): $result" | tee -a "$report"
done
cmake --build "$build" -j"$(nproc)" >/dev/null # leave the build unmutated
echo "mutate: $survivors survivor(s); report in $report"
exit "$survivors"
