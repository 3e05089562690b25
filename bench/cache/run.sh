#!/usr/bin/env bash
# Benchmark of the results cache (docs/cache.md; not a test: it prints,
# never asserts).
#
# 1. An ignite-shaped suite: a git checkout with a package (src/) and six
#    test areas of 10 files x 20 tests (1,200 tests), one pytest job per
#    area in the tpuci-test/python:1 image, each mounting src/ and its own
#    area. Run cold, then again with nothing changed (target: the second
#    run's wall <= 5% of the first's), then with one test file of one area
#    changed (target: only that area's instance reruns).
# 2. The key of a 5,000-file git checkout (target: under 200 ms): `tpuci
#    plan --keys` of a local job on it, less `tpuci plan` of the same
#    spec (loading), median of 9; clean, then with 50 modified and 50
#    untracked files; and the same folder without git (every file read).
#
# usage: bench/cache/run.sh [path/to/tpuci]   (DOCKER_HOST with the image)
# SMOKE=1: tiny sizes (2 areas of 2 files of 5 tests, a 100-file
# checkout, medians of 3): it runs, its figures mean nothing (ctest
# bench_cache, label bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=${1:-$here/../../build/tpuci}
tpuci=$(readlink -f "$tpuci")
unset TPUCI_NO_CACHE
work=$(mktemp -d /tmp/tpuci-bench-cache.XXXXXX)
trap 'rm -rf "$work"' EXIT
git_q() { git -c user.email=b@b -c user.name=b "$@" > /dev/null; }
now() { date +%s.%N; }

files=10 tests=20 dirs=50 per_dir=100 reps=9
areas="engine handlers metrics contrib distributed utils"
if [ "${SMOKE:-0}" = 1 ]; then
  files=2 tests=5 dirs=5 per_dir=20 reps=3 areas="engine metrics"
fi
# ---------------------------------------------------------------- 1.
repo=$work/suite
mkdir -p "$repo/src/pkg"
echo 'def add(a, b):
    return a + b' > "$repo/src/pkg/__init__.py"
for a in $areas; do
  mkdir -p "$repo/tests/$a"
  for f in $(seq "$files"); do
    {
      echo "import sys; sys.path.insert(0, '/src/src')"
      echo "import time, pytest, pkg"
      echo "@pytest.mark.parametrize('i', range($tests))"
      echo "def test_$a$f(i):"
      echo "    time.sleep(0.01)"
      echo "    assert pkg.add(i, 1) == i + 1"
    } > "$repo/tests/$a/test_$f.py"
  done
done
printf '.tpuci/\n' > "$repo/.gitignore"
{
  echo 'image "py" { ref = "tpuci-test/python:1", pull = "never" }'
  for a in $areas; do
    echo "job \"$a\" { image = \"py\", workdir = \"/src\", pytest = { args = { \"tests/$a\" } },"
    echo "  mounts = { src = { target = \"/src/src\", readonly = true },"
    echo "             [\"tests/$a\"] = { target = \"/src/tests/$a\", readonly = true } } }"
  done
} > "$repo/spec.lua"
cd "$repo"
git init -q && git add . && git_q commit -qm suite

run() {  # LABEL: one run, its wall time and what ran
  local t0 t1 ran
  t0=$(now)
  "$tpuci" run -q -j 2 spec.lua > "$work/out.txt" 2>&1 || true
  t1=$(now)
  ran=$(/usr/bin/python3 -c 'import json; s=json.load(open(".tpuci/runs/latest/summary.json"))
print(" ".join(i["name"] for i in s["instances"] if i["outcome"] != "cached") or "nothing")')
  wall=$(echo "$t1 - $t0" | bc -l)
  printf '  %-34s wall %7.3fs   ran: %s\n' "$1" "$wall" "$ran"
}
set -- $areas
echo "ignite-shaped suite: $# instances, $(($# * files)) files, $(($# * files * tests)) tests (tpuci-test/python:1, -j 2)"
run "cold (nothing stored)"; cold=$wall
run "again, nothing changed"; warm=$wall
printf '  second run / first run: %.3f (target <= 0.05)\n' "$(echo "$warm / $cold" | bc -l)"
sed -i 's/time.sleep(0.01)/time.sleep(0.01)  # edited/' tests/metrics/test_2.py
run "tests/metrics/test_2.py changed"
printf '  (target: only metrics ran)\n'

# ---------------------------------------------------------------- 2.
big=$work/big
mkdir -p "$big"
/usr/bin/python3 - "$big" "$dirs" "$per_dir" <<'PY'
import os, sys
root, dirs, per_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    os.makedirs(f"{root}/pkg/m{d}", exist_ok=True)
    for f in range(per_dir):
        with open(f"{root}/pkg/m{d}/f{f}.py", "w") as fh:
            fh.write(f"# module {d}.{f}\n" + "x = 1\n" * 40)
PY
cat > "$work/keys.lua" <<LUA
job "k" { workdir = "$big", run = "true" }
LUA
# CMD...: the median of $reps runs' wall and CPU (user + system, with the
# git it spawns) times, in ms: "WALL CPU".
median() {
  local i
  for i in $(seq "$reps"); do
    /usr/bin/time -f '%e %U %S' -o "$work/time.txt" "$@" > /dev/null 2>&1 || true
    awk '{printf "%.1f %.1f\n", $1 * 1000, ($2 + $3) * 1000}' "$work/time.txt"
  done > "$work/times.txt"
  local mid=$(((reps + 1) / 2))
  echo "$(sort -n -k1 "$work/times.txt" | sed -n "${mid}{s/ .*//;p}") $(sort -n -k2 "$work/times.txt" | sed -n "${mid}{s/.* //;p}")"
}
keys() {
  local base k
  base=$(median "$tpuci" plan "$work/keys.lua")
  k=$(median "$tpuci" plan --keys --state-dir "$work/state" "$work/keys.lua")
  printf '  %-36s wall %6.1f ms (plan alone %5.1f), cpu %5.1f ms (plan alone %5.1f): the key %5.1f ms wall, %5.1f ms cpu\n' \
    "$1" "${k% *}" "${base% *}" "${k#* }" "${base#* }" \
    "$(echo "${k% *} - ${base% *}" | bc -l)" "$(echo "${k#* } - ${base#* }" | bc -l)"
}
echo "key of a $((dirs * per_dir))-file checkout (medians of $reps; target < 200 ms for 5,000); load average: $(cut -d" " -f1-3 /proc/loadavg)"
(cd "$big" && git init -q && git add . && git_q commit -qm big)
keys "git, clean"
for f in $(seq 0 $((dirs - 1))); do echo "y = 2" >> "$big/pkg/m$f/f1.py"; echo new > "$big/pkg/m$f/new.txt"; done
keys "git, $dirs modified and $dirs untracked"
rm -rf "$big/.git"
keys "no git (every file read)"
