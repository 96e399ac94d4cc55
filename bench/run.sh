#!/usr/bin/env bash
# The main job: build convnd and convnd-bench, then validate every schedule against the CPU
# reference and compare them on the benchmark suite. Without a GPU this is the reduced suite on
# the emulated device (--small, every row labelled EMULATED); with one, the full suite.
# Results (table, CSV, JSON, PNG plot) go to ${CONVND_BENCH_OUT:-build/bench-out}.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || missing+=(libopenblas-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench/run.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
build=${CONVND_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_WERROR=ON \
  -DCONVND_CUDA="$([ $gpu = 1 ] && echo ON || echo OFF)" ${CONVND_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)" --target convnd-bench
out=${CONVND_BENCH_OUT:-$build/bench-out}
if [ $gpu = 1 ]; then
  exec "$build"/bench/convnd-bench --suite bench/suites/suite.csv --out "$out" "$@"
else
  exec "$build"/bench/convnd-bench --small --out "$out" "$@"
fi
