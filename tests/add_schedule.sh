#!/usr/bin/env bash
# Adding a schedule, done for real and undone: copies the throwaway 1x1 schedule
# (tests/add_schedule/) into a family folder of its own, adds its one registry line and the
# README's regenerated table, and checks that this is the whole change (git status: the folder's
# two files, schedules/registry.h, README.md), that the build picks it up, that it is listed and
# forceable, that the self-test runs it against the CPU reference and passes, that the docs test
# still passes — and, with an off-by-one channel loop planted in its kernel, that the self-test
# fails. The tree and the build are restored at the end. Usage: tests/add_schedule.sh [BUILD_DIR]
# (an existing build of this checkout; default build/). CI runs it after the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
name=throwaway_pointwise
family=families/$name
[ -x "$build/selftest/convnd-selftest" ] || { echo "add_schedule: no build in $build" >&2; exit 2; }
[ ! -e "$family" ] || { echo "add_schedule: $family exists" >&2; exit 2; }
git diff --quiet -- schedules/registry.h README.md ||
  { echo "add_schedule: schedules/registry.h or README.md has changes; commit them first" >&2; exit 2; }

status() { git status --porcelain --untracked-files=all -- . | sort; }
before=$(status)
restore() {
  rm -rf "$family"
  git checkout -q -- schedules/registry.h README.md
  cmake --build "$build" -j"$(nproc)" >/dev/null
}
trap restore EXIT

# 1. The change: a folder with the host file and the kernel, one registry line, the README table.
mkdir "$family"
cp tests/add_schedule/$name.c tests/add_schedule/$name.cu "$family/"
sed -i "s|^    X(direct) |    X($name) /* throwaway (tests/add_schedule.sh) */ \\\\\n    X(direct) |" \
  schedules/registry.h
grep -q "X($name)" schedules/registry.h || { echo "add_schedule: the registry line did not go in" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" >/dev/null
table=$("$build/bench/convnd-bench" --list-markdown)
python3 - "$table" <<'EOF'
import sys
readme = open("README.md").read()
start = "<!-- schedule table: convnd-bench --list-markdown -->\n"
end = "<!-- end of the schedule table -->"
a, b = readme.index(start) + len(start), readme.index(end)
open("README.md", "w").write(readme[:a] + sys.argv[1] + "\n" + readme[b:])
EOF
changed=$(comm -13 <(echo "$before") <(status))
want=$(printf '%s\n' " M README.md" " M schedules/registry.h" "?? $family/$name.c" \
  "?? $family/$name.cu" | sort)
if [ "$changed" != "$want" ]; then
  printf 'add_schedule: the change is not the documented one:\n%s\nwant:\n%s\n' "$changed" "$want" >&2
  exit 1
fi
echo "add_schedule: 2 new files in $family, 1 registry line, the README's table regenerated"

# 2. Listed, forced, run against the reference by the self-test; the docs test agrees.
"$build/bench/convnd-bench" --list | grep -q "$name" || { echo "add_schedule: not listed" >&2; exit 1; }
CONVND_ERRATA=off "$build/tests/convnd_tests" --filter 'docs_spec/*' >/dev/null 2>&1
# the forced-schedule suite's random problems, every schedule:config (the new one among them)
CONVND_ERRATA=off "$build/tests/convnd_tests" --filter 'forced_schedules/random_problems' \
  --jobs "$(nproc)" >"$build/add_schedule.log" 2>&1 ||
  { tail -n 20 "$build/add_schedule.log"; echo "add_schedule: forced_schedules fails" >&2; exit 1; }
echo "add_schedule: forced_schedules/random_problems: $(grep '^\[====\]' "$build/add_schedule.log")"
out=$("$build/selftest/convnd-selftest" --only "$name" --full --quiet --no-errata --seed 3 | tail -n 1)
echo "add_schedule: $out"
case "$out" in
  *" 0 failed"*) ;;
  *) echo "add_schedule: the throwaway schedule fails its self-test" >&2; exit 1 ;;
esac
case "$out" in
  *" 0 cases"*) echo "add_schedule: the self-test ran no case of it" >&2; exit 1 ;;
esac

# 3. A planted bug in its kernel (the last input channel skipped) is found.
sed -i 's|ci < p.cin_g; ++ci) /\* THROWAWAY_CHANNEL_LOOP|ci < p.cin_g - 1; ++ci) /* THROWAWAY_CHANNEL_LOOP|' \
  "$family/$name.cu"
grep -q "p.cin_g - 1" "$family/$name.cu" || { echo "add_schedule: the bug was not planted" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" >/dev/null
if planted=$("$build/selftest/convnd-selftest" --only "$name" --full --quiet --no-errata --seed 3); then
  echo "add_schedule: the planted bug passed the self-test" >&2
  exit 1
fi
echo "add_schedule: planted bug found: $(tail -n 1 <<<"$planted")"
if CONVND_ERRATA=off "$build/tests/convnd_tests" --filter 'forced_schedules/random_problems' \
  --jobs "$(nproc)" >"$build/add_schedule.log" 2>&1; then
  echo "add_schedule: the planted bug passed forced_schedules/random_problems" >&2
  exit 1
fi
grep -q "$name" "$build/add_schedule.log" ||
  { echo "add_schedule: forced_schedules failed, but not on $name" >&2; exit 1; }
echo "add_schedule: and by forced_schedules/random_problems: $(grep '^\[====\]' "$build/add_schedule.log")"
