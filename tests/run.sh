#!/usr/bin/env bash
# The test command: installs what the tests need when missing, builds (CUDA kernels too when nvcc
# is present), and runs the whole Criterion suite, then the Python package's tests. Without a GPU
# every kernel runs on the emulated device; with one, on the GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/install_deps.sh
# The suites try every configuration: a user's errata file (docs/errata.md) must not reroute them.
export CONVND_ERRATA=${CONVND_ERRATA:-off}

# With a GPU the kernels are built for it and the suite runs there; without one the suite runs
# on the emulated device, and the sm_90 build is checked by tools/static_check.py instead.
cuda=OFF
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then cuda=ON; fi
build=${CONVND_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVND_WERROR=ON -DCONVND_CUDA="${CONVND_CUDA:-$cuda}" \
  ${CONVND_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)"
"$build"/tests/convnd_tests --jobs "$(nproc)" "$@"

# The PyTorch package (python/): a wheel built against the libconvnd.so just built (the wheel
# carries it; checked here and by python/tests/test_package.py), installed, then its pytest suite
# (CPU tensors on the emulated device; CUDA tensors too when there is a GPU). Skipped when the
# Criterion run was filtered (arguments given) or CONVND_SKIP_PYTHON=1.
if [ $# -eq 0 ] && [ "${CONVND_SKIP_PYTHON:-0}" != 1 ]; then
  bash tests/install_python_deps.sh
  wheels="$build/wheel"
  rm -rf "$wheels"
  CONVND_LIB_DIR="$(cd "$build" && pwd)" \
    python3 -m build --wheel --no-isolation --outdir "$wheels" python >"$build/wheel.log" 2>&1 ||
    { cat "$build/wheel.log"; exit 1; }
  wheel=$(ls "$wheels"/convnd-*.whl)
  listing=$(python3 -m zipfile -l "$wheel") # whole: grep -q would close the pipe early
  grep -q 'convnd/libconvnd\.so\.0 ' <<<"$listing" ||
    { echo "tests/run.sh: $wheel does not carry libconvnd.so.0" >&2; exit 1; }
  python3 -m pip install -q --force-reinstall --no-deps "$wheel"
  python3 -m pytest -q python/tests
fi
