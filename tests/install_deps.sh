#!/usr/bin/env bash
# Installs what building and running the tests needs, when missing (Debian packages): Criterion,
# OpenBLAS (the emulated device's host GEMM for cublas_im2col), CMake. Used by tests/run.sh and
# tests/run_sanitized.sh.
set -euo pipefail
missing=()
[ -f /usr/include/criterion/criterion.h ] || missing+=(libcriterion-dev)
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || missing+=(libopenblas-dev)
command -v cmake >/dev/null || missing+=(cmake)
if [ ${#missing[@]} -gt 0 ]; then
  echo "tests/install_deps.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
