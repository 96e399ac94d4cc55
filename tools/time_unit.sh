#!/usr/bin/env bash
# A compiler launcher that times each compile unit: CMake runs `time_unit.sh LOG compiler args...`
# when configured with -DCONVND_TIME_UNITS=ON, and each unit appends "seconds<TAB>object" to LOG.
# tools/build_times.sh reads the log.
log=$1
shift
start=$(date +%s%N)
"$@"
rc=$?
out=unknown
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  prev=$a
done
printf '%s\t%s\n' "$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')" \
  "$out" >>"$log"
exit $rc
