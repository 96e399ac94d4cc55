#!/usr/bin/env bash
# Compile time per unit: the ten slowest units and the total of a build.
#
#   tools/build_times.sh LOG...                 report on logs written by tools/time_unit.sh
#   tools/build_times.sh --build KIND [DIR]     a fresh timed build, then its report
#
# KIND: plain (tests/run.sh's emulated build), sanitize (tests/run_sanitized.sh's ASan/UBSan
# build), fuzz (tests/fuzz/run.sh's clang build), gpu (the CUDA build for sm_90, as
# bench/device-check.sh makes it), static (tools/static_check.py's own nvcc runs). DIR defaults
# to build-times-KIND and is emptied first. A CMake build is configured with
# -DCONVND_TIME_UNITS=ON: each compile goes through tools/time_unit.sh, which appends
# "seconds<TAB>object" to DIR/unit_times.tsv. Seconds are wall time of one compiler process with
# the build's other jobs running beside it (-j$(nproc)), so on a loaded machine they overstate
# a unit's own cost; the total is the sum (CPU-ish time), and the build's wall time is printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
top=${CONVND_TIMES_TOP:-10}

report() {
  local log=$1
  [ -s "$log" ] || { echo "build_times: $log is empty" >&2; return 1; }
  echo "== $log: the $top slowest of $(wc -l <"$log") units"
  sort -t$'\t' -k1,1gr "$log" | head -n "$top" | awk -F'\t' '{ printf "%8.1f s  %s\n", $1, $2 }'
  awk -F'\t' '{ s += $1 } END { printf "   total %.1f s (%.1f min) over %d units\n", s, s / 60, NR }' "$log"
}

if [ "${1:-}" != --build ]; then
  [ $# -gt 0 ] || { sed -n '2,16p' "$0"; exit 2; }
  for log in "$@"; do report "$log"; done
  exit 0
fi

kind=${2:?"--build needs a KIND: plain, sanitize, fuzz, gpu or static"}
dir=${3:-build-times-$kind}
rm -rf "$dir"
mkdir -p "$dir"
log=$(cd "$dir" && pwd)/unit_times.tsv
jobs=$(nproc)
start=$SECONDS
case $kind in
plain)
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_CUDA=OFF -DCONVND_TIME_UNITS=ON >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null ;;
sanitize)
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_SANITIZE=ON -DCONVND_CUDA=OFF \
    -DCONVND_TIME_UNITS=ON >/dev/null
  cmake --build "$dir" --target convnd_tests -j"$jobs" >/dev/null ;;
fuzz)
  CC=clang CXX=clang++ cmake -S tests/fuzz -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCONVND_TIME_UNITS=ON >/dev/null
  cmake --build "$dir" --target convnd_fuzz_host convnd_fuzz_kernels -j"$jobs" >/dev/null ;;
gpu)
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCONVND_TIME_UNITS=ON >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null ;;
static)
  CONVND_UNIT_TIMES=$log python3 tools/static_check.py --jobs "$jobs" >"$dir/static_check.txt" ;;
*)
  echo "build_times: unknown KIND $kind (plain, sanitize, fuzz, gpu, static)" >&2
  exit 2 ;;
esac
echo "build_times: $kind build took $((SECONDS - start)) s of wall time on $jobs cores"
report "$log"
