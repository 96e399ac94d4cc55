#!/usr/bin/env bash
# One command for a lent GPU (an H200): build for sm_90 with CUDA on, run convnd-selftest first
# (which configurations are right on this device: selftest.log, errata.txt), the whole test suite on
# the GPU and the emulator's primitive tests there (convnd_gpu_conformance), compute-sanitizer
# (memcheck and racecheck) on a representative subset, the benchmark on the suite; table, CSV,
# JSON, Markdown, plot and logs go to the output folder; a short summary comes last. Sized to
# finish within 9 minutes on the lent machine (run it with timeout_s 600).
#
#   bench/device-check.sh [OUT_DIR]          OUT_DIR defaults to $OUT, else out/device-check
#   bench/device-check.sh --prebuilt PACK [OUT_DIR]
#                                            runs the binaries bench/pack-device-build.sh built
#                                            and packed on another machine (PACK: its folder, with
#                                            pack.tar.xz) instead of building; when they do not
#                                            start here (a missing library), it builds as usual
#   DEVICE=emulated bench/device-check.sh    the same steps on the emulated device (no GPU): the
#                                            CUDA build, the benchmark's tests, bench --small;
#                                            the sanitizer needs a GPU and is skipped; time caps
#                                            are 4 times longer
#
# Environment: JOBS (build parallelism, default nproc), BUILD_DIR (default build-device-check),
# TEST_FILTER (Criterion --filter; default: all tests on the GPU, bench_*/* when emulated),
# BUILD_TYPE (default Release), CONVND_DEVICE_DEPS (a folder from bench/pack-device-deps.sh with
# Criterion's headers and libraries, for a machine without them), BUDGET_S (default 540 s; each
# step also has its own cap, and the sanitizer leaves BENCH_RESERVE_S = 130 s to the benchmark).
#
# What comes back from a lent machine's $OUT: build.log, selftest.log and errata.txt (the self-test,
# run first), tests.log, sanitizer.log, bench.txt (the table), results.csv, results.json,
# results.md (for bench/RESULTS.md), plot.png.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
prebuilt=
if [ "${1:-}" = --prebuilt ]; then
  prebuilt=${2:?"--prebuilt needs the pack's folder (bench/pack-device-build.sh)"}
  shift 2
fi
out=${1:-${OUT:-out/device-check}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
device=${DEVICE:-gpu}
build=${BUILD_DIR:-build-device-check}
jobs=${JOBS:-$(nproc)}
# the emulated device runs kernels on the CPU: its steps get 4 times longer (a local check only)
scale=1
[ "$device" != gpu ] && scale=4
budget=${BUDGET_S:-$((540 * scale))}
start=$(date +%s)
summary=()

elapsed() { echo $(($(date +%s) - start)); }
left() { echo $((budget - $(elapsed))); }
note() { summary+=("$*"); echo "== device-check: $*"; }
# Runs a step with at most `secs` seconds (never more than what the budget has left).
bounded() {
  local secs=$(($1 * scale)); shift
  local l; l=$(left)
  [ "$secs" -gt "$l" ] && secs=$l
  if [ "$secs" -lt 10 ]; then echo "out of time budget"; return 124; fi
  timeout --kill-after=10 "$secs" "$@"
}

echo "== device-check: device=$device out=$out build=$build jobs=$jobs"
if [ "$device" = gpu ]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
    2>&1 | tee "$out/build.log"
else
  export CONVND_DEVICE=emulated
  : >"$out/build.log"
fi

# ---- dependencies a bare machine may lack ---------------------------------------------------
test_libs=""
cmake_args=(-DCONVND_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}")
if [ -n "${CONVND_DEVICE_DEPS:-}" ] && [ -d "$CONVND_DEVICE_DEPS/include/criterion" ]; then
  deps=$(cd "$CONVND_DEVICE_DEPS" && pwd)
  cmake_args+=(-DCRITERION_INCLUDE_DIR="$deps/include" -DCRITERION_LIBRARY="$deps/lib/libcriterion.so")
  test_libs="$deps/lib" # for the test binary only: these must not shadow the build tools' own
fi
# cuDNN from the CUDA toolkit, else from the nvidia-cudnn Python wheel (which has no libcudnn.so)
if ! ls /usr/local/cuda/include/cudnn.h /usr/include/cudnn.h >/dev/null 2>&1; then
  cudnn_dir=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
  if [ -n "$cudnn_dir" ] && [ -f "$cudnn_dir/include/cudnn.h" ]; then
    lib=$(ls "$cudnn_dir"/lib/libcudnn.so* 2>/dev/null | head -1)
    cmake_args+=(-DCONVND_CUDNN_INCLUDE_DIR="$cudnn_dir/include" -DCONVND_CUDNN_LIBRARY="$lib")
    export LD_LIBRARY_PATH="$cudnn_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi

# ---- 1. build for sm_90, or unpack a build made elsewhere ---------------------------------------
t0=$(elapsed)
built_by=
if [ -n "$prebuilt" ]; then
  unpacked=${PREBUILT_DIR:-build-device-check-prebuilt}
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  if tar -C "$unpacked" -xJf "$prebuilt/pack.tar.xz" >>"$out/build.log" 2>&1 &&
    LD_LIBRARY_PATH="$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$unpacked/tests/convnd_tests" --list >/dev/null 2>>"$out/build.log" &&
    LD_LIBRARY_PATH="$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$unpacked/bench/convnd-bench" --help >/dev/null 2>>"$out/build.log"; then
    build=$unpacked
    test_libs="$(cd "$unpacked" && pwd)/lib${test_libs:+:$test_libs}"
    pack_commit=$(awk '$1 == "commit" { print $2 }' "$unpacked/MANIFEST")
    head_commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    built_by="prebuilt pack of ${pack_commit:0:12} ($(awk '$1 == "uncommitted_changes" { print $2 }' "$unpacked/MANIFEST") uncommitted change(s))"
    [ "$pack_commit" != "$head_commit" ] && built_by+=", NOT this checkout's commit ${head_commit:0:12}"
    cat "$unpacked/MANIFEST" >>"$out/build.log"
  else
    note "prebuilt: the pack in $prebuilt does not run here (build.log says why); building instead"
  fi
fi
if [ -z "$built_by" ]; then
  { bounded 60 cmake -S . -B "$build" "${cmake_args[@]}" &&
    bounded 330 cmake --build "$build" -j"$jobs"; } >>"$out/build.log" 2>&1
  build_rc=$?
  built_by="built here"
else
  build_rc=0
fi
# Seconds the build did not take go to the suite and the benchmark.
more=0
[ "$built_by" != "built here" ] && more=100
# cuobjdump: the toolkit's, else the copy tools/static_check.py installs from PyPI
cuobjdump=$(command -v cuobjdump || ls "${XDG_CACHE_HOME:-$HOME/.cache}"/convnd-static-check/*/nvidia/cu13/bin/cuobjdump 2>/dev/null | head -1)
lib=$build/libconvnd.a
[ -f "$lib" ] || lib=$build/libconvnd.so.0
sm90=$([ -n "$cuobjdump" ] && "$cuobjdump" --list-elf "$lib" 2>/dev/null | grep -c sm_90)
note "build: $built_by, rc=$build_rc in $(($(elapsed) - t0)) s; sm_90 ELF images in" \
     "$(basename "$lib"): ${sm90:-?}" \
     "$([ "$built_by" = "built here" ] && echo "(CUDA: $(grep -o 'CUDA kernels [A-Z]*' "$out/build.log" | head -1);" \
        "$(grep -o 'cuDNN peer\|cuDNN not found' "$out/build.log" | head -1))")"
if [ "$build_rc" -ne 0 ]; then tail -30 "$out/build.log"; fi

# ---- 1b. the self-test first: which configurations are right on this device ------------------
# convnd-selftest (docs/errata.md) runs every schedule:config on small cases against the CPU
# reference and the direct schedule, before anything is timed; what fails goes to errata.txt
# (returned with the rest), which the benchmark's planner then obeys. The test suite below runs
# with the errata off: it tries every configuration, the failing ones too.
selftest="$build/selftest/convnd-selftest"
selftest_line="not run (no $selftest)"
if [ -x "$selftest" ]; then
  t0=$(elapsed)
  rm -f "$out/errata.txt"
  LD_LIBRARY_PATH="${test_libs:+$test_libs:}${LD_LIBRARY_PATH:-}" \
    bounded 75 "$selftest" --quiet --seed 1 --errata "$out/errata.txt" >"$out/selftest.log" 2>&1
  rc=$?
  selftest_line="rc=$rc in $(($(elapsed) - t0)) s: $(grep -a '^convnd-selftest: [0-9]' "$out/selftest.log" | tail -1)"
  [ -s "$out/errata.txt" ] && export CONVND_ERRATA="$out/errata.txt"
fi
note "selftest: $selftest_line"

# ---- 2. the whole test suite on the device --------------------------------------------------
tests_line="not run"
if [ -x "$build/tests/convnd_tests" ]; then
  filter=${TEST_FILTER:-}
  [ -z "$filter" ] && [ "$device" != gpu ] && filter='bench_*/*'
  t0=$(elapsed)
  CONVND_ERRATA=off LD_LIBRARY_PATH="${test_libs:+$test_libs:}${LD_LIBRARY_PATH:-}" \
    bounded $((100 + more)) "$build/tests/convnd_tests" --jobs "$jobs" ${filter:+--filter "$filter"} \
    >"$out/tests.log" 2>&1
  rc=$?
  tests_line="rc=$rc in $(($(elapsed) - t0)) s${filter:+ (filter $filter)}: $(grep -a 'Synthesis' "$out/tests.log" | tail -1)"
else
  echo "no test binary (Criterion missing? see CONVND_DEVICE_DEPS)" >"$out/tests.log"
fi
note "tests: $tests_line"

# ---- 2b. the emulator's PTX tables on the hardware ---------------------------------------------
# ldmatrix, mma.sync, stmatrix, wgmma, mbarrier and TMA unit-test kernels, built by nvcc
# (tests/gpu/): the same checks the emulated device passes. Appended to tests.log.
conf="$build/tests/convnd_gpu_conformance"
if [ "$device" = gpu ] && [ "$built_by" = "built here" ]; then # not in `all`: its failure must not cost the rest
  bounded 90 cmake --build "$build" --target convnd_gpu_conformance -j"$jobs" >>"$out/build.log" 2>&1
fi
if [ "$device" = gpu ] && [ -x "$conf" ]; then
  t0=$(elapsed)
  echo "==== convnd_gpu_conformance" >>"$out/tests.log"
  LD_LIBRARY_PATH="${test_libs:+$test_libs:}${LD_LIBRARY_PATH:-}" \
    bounded 30 "$conf" --jobs "$jobs" >>"$out/tests.log" 2>&1
  rc=$?
  note "emulator vs GPU (convnd_gpu_conformance): rc=$rc in $(($(elapsed) - t0)) s:" \
       "$(grep -a 'Synthesis' "$out/tests.log" | tail -1)"
else
  note "emulator vs GPU: not run (device=$device, $( [ -x "$conf" ] && echo built || echo 'not built'))"
fi

# ---- 3. compute-sanitizer on a representative subset ----------------------------------------
# The benchmark's validation and one timed run of every schedule on the --small suite: every
# kernel family on real layer shapes, in a few thousand launches.
bench="$build/bench/convnd-bench"
san_args=(--small --no-peers --no-ceilings --reps 1 --quiet --seed 1)
: >"$out/sanitizer.log"
if [ "$device" = gpu ] && [ -x "$bench" ] && command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    t0=$(elapsed)
    secs=$((($(left) - ${BENCH_RESERVE_S:-130}) / scale))
    [ "$secs" -gt 60 ] && secs=60
    bounded "$secs" compute-sanitizer --tool "$tool" --error-exitcode 99 "$bench" "${san_args[@]}" \
      >>"$out/sanitizer.log" 2>&1
    rc=$?
    note "compute-sanitizer $tool: rc=$rc in $(($(elapsed) - t0)) s:" \
         "$(grep -a 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/sanitizer.log" | tail -1)"
  done
else
  echo "compute-sanitizer skipped: needs a GPU (device=$device)" | tee "$out/sanitizer.log"
  note "compute-sanitizer: skipped (device=$device)"
fi

# ---- 4. the benchmark ---------------------------------------------------------------------
bench_line="not run"
if [ -x "$bench" ]; then
  bench_args=(--out "$out")
  [ "$device" != gpu ] && bench_args+=(--small)
  t0=$(elapsed)
  CONVND_COMMIT=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) \
    bounded $((150 + more)) "$bench" "${bench_args[@]}" >"$out/bench.txt" 2>"$out/bench.err"
  rc=$?
  cat "$out/bench.err" >>"$out/bench.txt" && rm -f "$out/bench.err" "$out/plot.dat"
  bench_line="rc=$rc in $(($(elapsed) - t0)) s: $(grep -a 'rows:' "$out/bench.txt" | tail -1)"
  grep -a '^measured ceilings' "$out/bench.txt" | head -1 | sed 's/^/   /'
fi
note "bench: $bench_line"

# ---- 5. the PyTorch package on the device: its tests on CUDA tensors, the op timed from Python --
# Appended to tests.log and bench.txt (only 8 files come back from a lent machine).
if python3 -c 'import torch' 2>/dev/null && [ -f "$build/libconvnd.so" ]; then
  t0=$(elapsed)
  { echo "==== python: pip install ./python (CONVND_LIB_DIR=$build)"
    CONVND_LIB_DIR="$(cd "$build" && pwd)" bounded 120 python3 -m pip install -q --no-build-isolation ./python &&
    echo "==== python: pytest python/tests" &&
    bounded 120 python3 -m pytest -q python/tests 2>&1; } >>"$out/tests.log" 2>&1
  rc=$?
  note "python tests: rc=$rc in $(($(elapsed) - t0)) s: $(grep -a -E '[0-9]+ (passed|failed)' "$out/tests.log" | tail -1)"
  if [ "$device" = gpu ]; then
    bounded 60 python3 bench/torch_op.py --device cuda >>"$out/bench.txt" 2>&1
    note "python op bench: rc=$? (rows at the end of bench.txt)"
    # SPEC 14 on NCCL: 2 ranks sharing the one GPU (SHARED-GPU: the sharding's overhead only)
    bounded 60 python3 bench/spatial_parallel.py --ranks 2 >>"$out/bench.txt" 2>&1
    note "spatial parallel bench: rc=$? (rows at the end of bench.txt)"
  fi
else
  note "python: skipped (no torch, or no libconvnd.so)"
fi

# ---- summary last ----------------------------------------------------------------------------
echo
echo "==== device-check summary ($device, $(elapsed) s of ${budget} s) ===="
for line in "${summary[@]}"; do echo "  $line"; done
echo "  files in $out: $(cd "$out" && ls | tr '\n' ' ')"
