#!/usr/bin/env bash
# A compiler launcher for the kernel objects of a CUDA build (families/CMakeLists.txt): runs
# `ptxas_report.sh compiler args... -o OBJ ...` and keeps what the compiler printed (the kernels
# are compiled with -Xptxas -v: registers, stack, spills, shared memory per kernel) in
# OBJ.ptxas.log beside the object, so that tools/static_check.py --from-build reads the build's
# own objects instead of compiling the kernels again. Printed to stderr too when the compile fails.
out=
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
[ -n "$out" ] || exec "$@"
"$@" >"$out.ptxas.log" 2>&1
rc=$?
[ $rc -ne 0 ] && cat "$out.ptxas.log" >&2
exit $rc
