#!/usr/bin/env bash
# The concurrency scenarios under ThreadSanitizer (CMake option CONVND_SANITIZE_THREAD, CUDA off),
# on the emulated device: conv_nd from several host threads at once, and one plan executed from
# several threads at once (tests/tsan/tsan_concurrency.c, which mirrors the Criterion tests
# concurrency/* and plan/many_threads*: Criterion's sandbox cannot start under TSan), with 4
# emulator worker threads per launch. The host library, the emulator (its fibers annotated for
# TSan: device/emu_fiber.c) and the driver are instrumented; the emulated kernels are not (one
# block runs on one worker only).
#
#   tests/run_tsan.sh
#
# Environment: CONVND_TSAN_BUILD_DIR (default build-tsan), CONVND_TSAN_JOBS (build parallelism,
# default: the number of cores). Any TSan report (data race, lock-order inversion...) aborts the
# run (halt_on_error), so the exit status is the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${CONVND_TSAN_BUILD_DIR:-build-tsan}
jobs=${CONVND_TSAN_JOBS:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_SANITIZE_THREAD=ON -DCONVND_WERROR=ON \
  -DCONVND_CUDA=OFF -DCONVND_BUILD_TESTS=ON -DCONVND_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target convnd_tsan_concurrency -j"$jobs"

export CONVND_DEVICE=emulated
unset CONVND_SCHEDULE CONVND_FORCE_INDEX64
export CONVND_EMU_THREADS=${CONVND_EMU_THREADS:-4}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:second_deadlock_stack=1}
"$build"/tests/convnd_tsan_concurrency
echo "tests/run_tsan.sh: no ThreadSanitizer report"
