#!/usr/bin/env bash
# Host overhead in instructions (valgrind's callgrind: repeatable on a noisy machine) and in ns,
# of a bare launch, convnd_plan_execute and conv_nd, on the emulated device with launches
# stopped after their configuration check. Usage: bench/host_overhead.sh [build dir] [filter]
# (one suite problem per run gives per-problem instruction counts).
set -euo pipefail
build=${1:-build}
filter=${2:-}
calls=2000
bench=$build/bench/convnd-bench
args=(--device emulated --host-overhead "$calls" --quiet)
[ -n "$filter" ] && args+=(--filter "$filter")
export CONVND_DEVICE=emulated
unset CONVND_SCHEDULE
"$bench" "${args[@]}"
echo "instructions per call (callgrind, inclusive, 5 x $calls calls of each loop):"
tmp=$(mktemp -d)
for loop in host_loop_bare host_loop_plan host_loop_conv_nd; do
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$loop" \
    --callgrind-out-file="$tmp/$loop.out" "$bench" "${args[@]}" >/dev/null 2>"$tmp/$loop.log"
  total=$(grep -E '^(summary|totals):' "$tmp/$loop.out" | head -1 | awk '{print $2}')
  echo "  $loop: $((total / (5 * calls))) (summed over the selected problems)"
done
rm -rf "$tmp"
