#!/usr/bin/env bash
# Fuzzes convnd with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer, two targets:
# the whole host path (tests/fuzz/fuzz_host.c) and the differential kernel target
# (tests/fuzz/fuzz_kernels.c: small problems run by the planner and every supporting
# schedule:config on the emulated device, against the CPU reference):
#   1. builds the targets with clang (tests/fuzz/CMakeLists.txt; build dir $CONVND_FUZZ_BUILD_DIR,
#      default build-fuzz),
#   2. replays the committed seed corpora tests/fuzz/corpus/ and tests/fuzz/corpus_kernels/ (one
#      seed per feature-table case; every seed must pass) and the scratch corpus of earlier runs,
#   3. fuzzes each for $CONVND_FUZZ_SECONDS (default 60) seconds of mutation, starting from that
#      corpus (the two targets side by side, one core each); new inputs go to a scratch corpus under the build dir, never into the repository.
#      Replay and fuzzing are one libFuzzer run (a replay takes minutes for the kernel target:
#      it is not run twice), interrupted that many seconds after its replay ends (libFuzzer's
#      INITED line); the time and executions after the replay are reported, and a run with no
#      execution past the replay fails.
# Exits non-zero on any finding (crash, sanitizer report, failed check, timeout, leak); libFuzzer
# writes the input to $build/findings/ (replay: $build/convnd_fuzz_host <file>, or
# $build/convnd_fuzz_kernels <file>).
# Runtime: about 2-4 minutes for the first build (2 cores), seconds after that, plus the fuzzing.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
command -v clang >/dev/null || missing+=(clang)
command -v cmake >/dev/null || missing+=(cmake)
clang_rt=$(clang -print-resource-dir 2>/dev/null || true)
[ -n "$clang_rt" ] && ls "$clang_rt"/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  missing+=("libclang-rt-$(clang -dumpversion 2>/dev/null | cut -d. -f1)-dev")
if [ ${#missing[@]} -gt 0 ]; then
  echo "tests/fuzz/run.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build=${CONVND_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${CONVND_FUZZ_SECONDS:-60}
jobs=${CONVND_FUZZ_BUILD_JOBS:-2}
CC=clang CXX=clang++ cmake -S tests/fuzz -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target convnd_fuzz_host convnd_fuzz_kernels -j"$jobs"

# The run must not depend on the caller's environment.
unset CONVND_SCHEDULE CONVND_FORCE_INDEX64
export CONVND_DEVICE=emulated
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

findings=$build/findings
mkdir -p "$findings"

# Fuzzes one target; its report goes to $build/fuzz_$target.report (the verdict in its exit code).
fuzz_target() {
  local target=$1
  local fuzzer=$build/convnd_fuzz_$target
  local seeds=tests/fuzz/corpus
  [ "$target" = kernels ] && seeds=tests/fuzz/corpus_kernels
  mkdir -p "$build/corpus_$target"
  # a kernel input runs every supporting configuration, unoptimised under ASan: tensor-core
  # tiles (up to 128 x 128 x 32 per k-step) pad a small grouped GEMM to seconds of emulation
  local timeout=10
  [ "$target" = kernels ] && timeout=300
  local inputs=$(($(ls "$seeds" | wc -l) + $(ls "$build/corpus_$target" | wc -l)))
  echo "== $target: replaying the seed and scratch corpora ($inputs inputs), then fuzzing for" \
    "${seconds} s"
  # One libFuzzer run: its own replay of the corpora (every seed must pass), then mutation,
  # stopped by SIGINT $seconds after the replay ends (its INITED line), which libFuzzer answers
  # with its final stats and exit code 72. -max_total_time only bounds a replay that never ends.
  # (The RSS limit: fiber stacks and ASan's shadow, not the heap, pass 2 GiB.)
  local log=$build/fuzz_$target.log
  local start=$SECONDS
  "$fuzzer" -max_total_time=$((seconds + 3600)) -timeout="$timeout" -rss_limit_mb=4096 \
    -max_len=512 -print_final_stats=1 -artifact_prefix="$findings/$target-" \
    "$build/corpus_$target" "$seeds" >"$log" 2>&1 &
  local pid=$!
  local inited='' timer='' stopped=$build/fuzz_$target.stopped
  rm -f "$stopped"
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$inited" ] && grep -q INITED "$log"; then
      inited=$((SECONDS - start))
      (sleep "$seconds" && touch "$stopped" && kill -INT "$pid" 2>/dev/null) &
      timer=$!
    fi
    sleep 1
  done
  local status=0
  wait "$pid" || status=$?
  [ -z "$timer" ] || kill "$timer" 2>/dev/null || true
  cat "$log"
  # 72 is libFuzzer's "interrupted": a finding only when this script did not interrupt it
  if [ "$status" -eq 72 ] && [ -e "$stopped" ]; then status=0; fi
  [ "$status" -eq 0 ] || { echo "tests/fuzz/run.sh: $target: finding (exit $status)"; return 1; }
  local total=$((SECONDS - start))
  inited=${inited:-$total}
  # "#N INITED": N executions were the replay; number_of_executed_units counts them all
  local at_init units
  at_init=$(sed -n 's/^#\([0-9]*\).*INITED.*/\1/p' "$log" | head -1)
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  local fuzzed=$((${units:-0} - ${at_init:-0}))
  echo "== $target: replay ${inited} s, then $((total - inited)) s of fuzzing:" \
    "$fuzzed executions past the replay (${units:-0} in all)"
  if [ "$fuzzed" -le 0 ]; then
    echo "tests/fuzz/run.sh: $target: no execution past the corpus replay (a loaded machine?):" \
      "this run fuzzed nothing"
    return 1
  fi
}

# The two targets run side by side (each libFuzzer run is one process on one core): the host
# target's minute overlaps the kernel target's replay. Each report is printed whole, in order.
failed=0
pids=()
for target in host kernels; do
  fuzz_target "$target" >"$build/fuzz_$target.report" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  target=$([ "$i" = 0 ] && echo host || echo kernels)
  wait "${pids[$i]}" || failed=1
  cat "$build/fuzz_$target.report"
done
[ "$failed" = 0 ] || exit 1
echo "tests/fuzz/run.sh: no findings"
