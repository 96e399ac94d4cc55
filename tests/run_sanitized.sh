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
# glob; default: the whole suite), CONVND_TEST_ORDERS (default forward: below),
# CONVND_SANITIZE_SKIP_TC_CONFIGS (the tensor-core configurations not built, ;-separated; default
# the two 128x256/256x128 tiles). Any sanitizer report fails the test it happens in (the runtime
# aborts), so the suite's exit status is the verdict.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/install_deps.sh

build=${CONVND_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${CONVND_SANITIZE_JOBS:-$(nproc)}
# The 256-thread, 64-deep tensor-core tiles take over 10 minutes per forced-schedule test under
# ASan on the emulated device; the plain suite (tests/run.sh) runs them, this build leaves them
# out at compile time (CMake CONVND_SKIP_TC_CONFIGS: supports() refuses them, the tests skip them:
# tests/support/test_schedule_runs.h, test_config_skipped).
skip_tc=${CONVND_SANITIZE_SKIP_TC_CONFIGS-128x256x64_s4;256x128x64_s4}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_SANITIZE=ON -DCONVND_WERROR=ON -DCONVND_CUDA=OFF \
  -DCONVND_BUILD_BENCH=ON "-DCONVND_SKIP_TC_CONFIGS=$skip_tc" >/dev/null
cmake --build "$build" --target convnd_tests -j"$jobs"

export CONVND_DEVICE=emulated
export CONVND_ERRATA=${CONVND_ERRATA:-off} # every configuration is tried (docs/errata.md)
unset CONVND_SCHEDULE CONVND_FORCE_INDEX64
# One thread order (forward) instead of the plain suite's two: what this run adds is the
# sanitizers' view of every access, which does not depend on the order the emulated threads run
# in between barriers; the orders' own check (a race shows up as a wrong result in one of them)
# is tests/run.sh's, with both orders, and CI step 1b's, with early and mixed copies. It halves
# this run (634 s of test time against 1078 s). Determinism checks still compare two orders
# (tests/support/test_orders.h).
export CONVND_TEST_ORDERS=${CONVND_TEST_ORDERS:-forward}
# detect_stack_use_after_return works with the emulator's fibers: every switch is announced to
# ASan (device/emu_fiber.c), fake stacks included. Leaks are reported at each test's exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1}
# Leaks in third-party code only (Criterion's runner) are suppressed: tests/lsan.supp.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

filter=()
[ -n "${CONVND_SANITIZE_FILTER:-}" ] && filter=(--filter "$CONVND_SANITIZE_FILTER")
"$build"/tests/convnd_tests --jobs "$jobs" "${filter[@]}" "$@"
