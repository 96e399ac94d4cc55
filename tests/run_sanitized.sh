#!/usr/bin/env bash
# The Criterion suite under AddressSanitizer and UndefinedBehaviorSanitizer (CMake option
# CONVND_SANITIZE, CUDA off), on the emulated device: every kernel runs on the CPU, so ASan sees
# out-of-bounds tensor accesses (device buffers are exact-size host allocations) and UBSan sees
# overflowing index arithmetic in the kernels as well as in the host code.
#
#   tests/run_sanitized.sh [criterion args...]
#
# Environment: CONVND_SANITIZE_BUILD_DIR (default build-sanitize), CONVND_SANITIZE_JOBS (build and
# test parallelism, default: the number of cores), CONVND_SANITIZE_FILTER (a Criterion --filter
# glob; default: the whole suite). Any sanitizer report fails the test it happens in (the
# runtime aborts), so the suite's exit status is the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/install_deps.sh

build=${CONVND_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${CONVND_SANITIZE_JOBS:-$(nproc)}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_SANITIZE=ON -DCONVND_CUDA=OFF \
  -DCONVND_BUILD_BENCH=ON >/dev/null
cmake --build "$build" --target convnd_tests -j"$jobs"

export CONVND_DEVICE=emulated
unset CONVND_SCHEDULE CONVND_FORCE_INDEX64
# The 256-thread, 64-deep tensor-core tiles take over 10 minutes per forced-schedule test under
# ASan on the emulated device; the plain suite (tests/run.sh) runs them, this one leaves them out
# (tests/support/test_schedule_runs.h: test_config_skipped).
export CONVND_TEST_SKIP_CONFIGS=${CONVND_TEST_SKIP_CONFIGS-igemm_tc:128x256,igemm_tc:256x128,convT_tc:128x256,convT_tc:256x128}
# detect_stack_use_after_return works with the emulator's fibers: every switch is announced to
# ASan (device/emu_fiber.c), fake stacks included. Leaks are reported at each test's exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1}
# Leaks in third-party code only (Criterion's runner) are suppressed: tests/lsan.supp.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

filter=()
[ -n "${CONVND_SANITIZE_FILTER:-}" ] && filter=(--filter "$CONVND_SANITIZE_FILTER")
"$build"/tests/convnd_tests --jobs "$jobs" "${filter[@]}" "$@"
