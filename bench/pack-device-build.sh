#!/usr/bin/env bash
# Builds here what bench/device-check.sh runs on a lent GPU, and packs it, so that the GPU's time
# goes to the suite, the conformance tests and the benchmark instead of compiling (the CUDA build
# takes about 19 minutes on this 2-core machine; the lent machine's budget is 15 minutes in all).
#
#   bench/pack-device-build.sh [PACK_DIR]     PACK_DIR defaults to build-device-pack/pack
#   then, on the lent machine:  bench/device-check.sh --prebuilt PACK_DIR
#   (the device tool's carry: ["build-device-pack/pack"]; at most 60 MiB, checked here)
#
# The build: CUDA on, sm_90 and sm_90a machine code only (no PTX: the pack runs on an H200),
# fatbins compressed for size (nvcc --compress-mode=size: about 8 times smaller than the default),
# Release, fixtures found relative to the repository root the binaries run in
# (CONVND_TESTS_DATA_DIR, CONVND_BENCH_DATA_DIR). The pack: the test suite, the conformance tests,
# the benchmark and libconvnd.so (for the Python package), in the build's own layout, plus lib/
# with every shared library they load that a stock CUDA 13 machine lacks (Criterion and its
# dependencies: not the C runtime, CUDA runtime, cuBLAS, cuDNN), and MANIFEST (commit, flags,
# sizes). The binaries are compressed into one pack.tar.xz (they share the kernels: one large
# dictionary stores them about once).
#
# Environment: BUILD_DIR (default build-device-pack/build; reused when configured the same),
# JOBS (default nproc), PACK_MAX_MIB (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-device-pack/build}
pack=${1:-build-device-pack/pack}
jobs=${JOBS:-$(nproc)}
max_mib=${PACK_MAX_MIB:-60}

bash tests/install_deps.sh
start=$SECONDS
cmake -S . -B "$build" -DCONVND_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCONVND_WERROR=ON \
  "-DCMAKE_CUDA_ARCHITECTURES=90-real" "-DCMAKE_CUDA_FLAGS=--compress-mode=size" \
  -DCONVND_TESTS_DATA_DIR=tests -DCONVND_BENCH_DATA_DIR=bench >/dev/null
cmake --build "$build" -j"$jobs" --target convnd_tests convnd-bench convnd-selftest convnd_gpu_conformance convnd_shared
echo "pack-device-build: built in $((SECONDS - start)) s"

# What the binaries need at run time that a stock CUDA 13 machine does not have.
binaries=(tests/convnd_tests tests/convnd_gpu_conformance bench/convnd-bench selftest/convnd-selftest
  libconvnd.so.0)
stock='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcudart|libcublas|libcublasLt|libcudnn)\.so'
rm -rf "$pack"
mkdir -p "$pack/stage/lib"
for b in "${binaries[@]}"; do
  mkdir -p "$pack/stage/$(dirname "$b")"
  cp -L "$build/$b" "$pack/stage/$b"
  ldd "$build/$b" | awk '$2 == "=>" { print $1, $3 }' | while read -r name path; do
    [[ $name =~ $stock ]] && continue
    [ -e "$pack/stage/lib/$name" ] || cp -L "$path" "$pack/stage/lib/$name"
  done
done
ln -s libconvnd.so.0 "$pack/stage/libconvnd.so" # what pip install ./python links against
commit=$(git rev-parse HEAD)
dirty=$(git status --porcelain --untracked-files=no | grep -c . || true)
{
  echo "commit $commit"
  echo "uncommitted_changes $dirty"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version | head -1)"
  echo "nvcc $(nvcc --version | grep -o 'release [0-9.]*')"
  echo "cmake CONVND_CUDA=ON CMAKE_BUILD_TYPE=Release CMAKE_CUDA_ARCHITECTURES=90-real" \
    "CMAKE_CUDA_FLAGS=--compress-mode=size CONVND_TESTS_DATA_DIR=tests CONVND_BENCH_DATA_DIR=bench"
  (cd "$pack/stage" && find . -type f ! -name MANIFEST | sort | xargs ls -l | awk '{ print "file", $9, $5 }')
} >"$pack/stage/MANIFEST"
# One stream, a dictionary larger than a binary: the copies of the kernels compress to little.
tar -C "$pack/stage" -cf - . | xz -T1 --lzma2=preset=6,dict=256MiB >"$pack/pack.tar.xz"
cp "$pack/stage/MANIFEST" "$pack/MANIFEST"
rm -rf "$pack/stage"
bytes=$(stat -c %s "$pack/pack.tar.xz")
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "pack-device-build: $pack/pack.tar.xz is $mib MiB (limit $max_mib MiB); commit ${commit:0:12}" \
  "($dirty uncommitted change(s) to tracked files)"
awk '$1 == "file" { printf "  %-34s %6.1f MiB\n", $2, $3 / 1048576 }' "$pack/MANIFEST"
if [ "$bytes" -gt $((max_mib * 1048576)) ]; then
  echo "pack-device-build: the pack is over $max_mib MiB" >&2
  exit 1
fi
