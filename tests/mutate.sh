#!/usr/bin/env bash
# Mutation check for the kernels: applies each planted bug of the list below, one at a time, to a
# scratch copy of the tree (never to this one), rebuilds only what changed (one build dir, ccache),
# runs the tests meant to catch it, and reports KILLED (some test failed) or SURVIVED. Not in CI
# (each mutant recompiles one or more kernels: minutes each on 2 cores); run it before calling a
# kernel change done and record the last result in the README's testing section.
#
#   tests/mutate.sh            every mutant
#   tests/mutate.sh 3 7        mutants 3 and 7 only
# Scratch: $CONVND_MUTATE_DIR (default build-mutate/). Exit status: the number of survivors.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${CONVND_MUTATE_DIR:-$root/build-mutate}
src=$work/src
build=$work/build

# Each mutant: id | file | exact text | replacement | test filter | extra environment.
# The text must occur exactly once in the file.
early='CONVND_EMU_COPIES=early CONVND_TEST_ORDERS=warp_ahead,reverse'
mutants=(
  "1|kernels/igemm_kernel.cuh|if (CONVND_PLANTED_BUG != CONVND_PLANT_PREFETCH_ABOVE_BARRIER) __syncthreads();|;|forced_schedules/feature_table|$early"
  "2|kernels/igemm_kernel.cuh|if (CONVND_PLANTED_BUG != CONVND_PLANT_NO_BARRIER_BEFORE_C_STORE) __syncthreads();|;|forced_schedules/feature_table|$early"
  "3|kernels/igemm_kernel.cuh|convnd_cp_async_wait<STAGES - 2>();|convnd_cp_async_wait<STAGES - 1>();|forced_schedules/feature_table|"
  "4|kernels/depthwise_common.cuh|if (!xrow \|\| i2 < 0 \|\| i2 >= (Idx)p.in[2]) {|if (!xrow \|\| i2 < 0 \|\| i2 > (Idx)p.in[2]) {|depthwise/*|"
  "5|kernels/convT_geometry.cuh|const int64_t kappa = S / convT_gcd(S, D);|const int64_t kappa = S;|transposed/*|"
  "6|kernels/depthwise_cl.cu|    g.runs = (p.out[2] + R - 1) / R;|    g.runs = p.out[2] / R > 0 ? p.out[2] / R : 1;|depthwise/*|"
  "7|kernels/depthwise_common.cuh|const T *q = xrow + i2 * (Idx)p.xs[4] + lc.base;|const T *q = xrow + i2 * (int32_t)p.xs[4] + lc.base;|extreme_geometry/sparse*|"
  "8|kernels/direct.cu|    const Idx x_nc = at.n * (Idx)p.xs[0] + ci0 * (Idx)p.xs[1];\n    const Idx w_c = at.c * (Idx)p.ws[0];|    const Idx x_nc = (int32_t)(at.n * (Idx)p.xs[0] + ci0 * (Idx)p.xs[1]);\n    const Idx w_c = at.c * (Idx)p.ws[0];|extreme_geometry/sparse*|"
  "9|kernels/depthwise_cl.cu|                __syncthreads(); /* the previous stage is no longer read */|                /* barrier removed */|depthwise/*|"
  "10|kernels/depthwise_stream.cu|            for (Idx s = S > (Idx)WIN ? S - (Idx)WIN : 0; s < S; ++s) {|            for (Idx s = S > (Idx)WIN ? S - (Idx)WIN + 1 : 0; s < S; ++s) {|depthwise/*|"
)

want=("$@")
source /work/helper_env.sh 2>/dev/null || true
mkdir -p "$work"
rsync -a --delete --exclude '/build*' --exclude '/.git' "$root"/ "$src"/
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_CUDA=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null || { echo "mutate: the unmutated tree does not build"; exit 99; }

survivors=0
report=$work/report.txt
: >"$report"
for m in "${mutants[@]}"; do
  IFS='|' read -r id file old new filter env <<<"$m"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " =~ " $id " ]]; then continue; fi
  old=${old//\\|/|}
  new=${new//\\|/|}
  cp "$src/$file" "$work/orig"
  if ! python3 - "$src/$file" "$old" "$new" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2].replace('\\n', '\n'), sys.argv[3].replace('\\n', '\n')
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"mutant text occurs {s.count(old)} times in {path}")
open(path, 'w').write(s.replace(old, new))
PY
  then
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
  cp "$work/orig" "$src/$file"
  echo "mutant $id ($file, tests $filter${env:+, $env}): $result" | tee -a "$report"
done
cmake --build "$build" -j"$(nproc)" >/dev/null # leave the scratch build unmutated
echo "mutate: $survivors survivor(s); report in $report"
exit "$survivors"
