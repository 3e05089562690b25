#!/usr/bin/env bash
# Benchmark (issue 35; not a test: it prints, never asserts): what it
# costs to record what each test needs (pytest.select = "affected",
# docs/pytest.md) on a suite shaped like a real ML library's, in the
# torch image: bench/pytest/torch_suite.py's 1,100 tests in 36 modules
# that import torch and do tensor work. Each round runs the same job
# twice, in a rotating order, every test each time and no results cache:
#   plain      pytest.select = "all": nothing recorded
#   recording  pytest.select = "affected" with --no-select: every test
#              runs, and the plugin traces each one (sys.settrace's call
#              events on Python 3.11; sys.monitoring from 3.12) and
#              writes what it needed
# and prints each attempt's wall time (from its summary.json), the
# medians and recording / plain (target <= 1.15x). Then the run a change
# makes: one module of the suite changed, select = "affected": how many
# tests ran and its wall time against plain's.
#
# usage: bench/pytest/deps.sh [path/to/tpuci]   (DOCKER_HOST with tpuci-test/torch:1)
# env: ROUNDS (3), SCALE (0.5: durations of the tests' sleeps), TESTS
#      (1100), MODULES (36); SMOKE=1: one round of 100 tests in 6 modules
#      (ctest bench_pytest_deps, label bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=$(readlink -f "${1:-$here/../../build/tpuci}")
rounds=${ROUNDS:-3} scale=${SCALE:-0.5} ntests=${TESTS:-1100} modules=${MODULES:-36}
if [ "${SMOKE:-0}" = 1 ]; then rounds=1 scale=0.05 ntests=100 modules=6; fi
image=${TPUCI_TORCH_IMAGE:-tpuci-test/torch:1}

docker version > /dev/null 2>&1 || { echo "bench: no engine at DOCKER_HOST" >&2; exit 1; }
docker image inspect "$image" > /dev/null 2>&1 ||
  TPUCI_TORCH_IMAGE=$image bash "$here/../../tests/images/build-torch.sh"
work=$(mktemp -d /tmp/tpuci-bench-deps.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$here/torch_suite.py" "$work/suite" --scale "$scale" --tests "$ntests" --modules "$modules"
spec() { # FILE SELECT
  cat > "$1" <<LUA
image "torch" { ref = "$image", pull = "never" }
job "suite" {
  image = "torch", workdir = "/src",
  mounts = { ["$work/suite"] = { target = "/src", readonly = true } },
  pytest = { args = { "tests/" }, select = "$2", failed_first = false },
}
LUA
}
spec "$work/plain.lua" all
spec "$work/recording.lua" affected
cd "$work"
# One attempt's wall time (its summary.json) and the tests that ran.
attempt() { # STATE
  python3 - "$1/runs/latest/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
i = s["instances"][0]
ran = sum(1 for t in i.get("tests", []) if t["outcome"] != "unaffected")
print("%.2f %d" % (i["attempts"][-1]["duration_ms"] / 1000, ran))
PY
}
declare -A times
run_one() { # KIND
  local kind=$1 got
  case $kind in
    plain) "$tpuci" run -q --no-cache --state-dir "$work/plain" plain.lua > /dev/null 2>&1 || true
           got=$(attempt "$work/plain") ;;
    recording) "$tpuci" run -q --no-cache --no-select --state-dir "$work/rec" recording.lua > /dev/null 2>&1 || true
           got=$(attempt "$work/rec") ;;
  esac
  times[$kind]="${times[$kind]:-} ${got% *}"
  printf '  %-10s %7s s  (%s tests)\n' "$kind" "${got% *}" "${got#* }"
}
echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $ntests tests in $modules modules, scale $scale, $rounds rounds"
# Warm both (the image's pages, the record's first write).
run_one plain > /dev/null
run_one recording > /dev/null
times=()
kinds=(plain recording)
for ((r = 0; r < rounds; r++)); do
  echo "round $((r + 1))"
  for ((k = 0; k < 2; k++)); do run_one "${kinds[(r + k) % 2]}"; done
done
# A change to one module: what select = "affected" runs.
echo "# changed" >> "$work/suite/tests/test_mod01.py"
"$tpuci" run -q --no-cache --state-dir "$work/rec" recording.lua > /dev/null 2>&1 || true
change=$(attempt "$work/rec")
python3 - "${times[plain]}" "${times[recording]}" "$change" "$ntests" <<'PY'
import statistics, sys
plain = [float(x) for x in sys.argv[1].split()]
rec = [float(x) for x in sys.argv[2].split()]
mp, mr = statistics.median(plain), statistics.median(rec)
secs, ran = sys.argv[3].split()
print("medians: plain %.2f s, recording %.2f s" % (mp, mr))
print("recording / plain: %.3fx (target <= 1.15x)" % (mr / mp))
print("after one test module changed: %s of %s tests ran in %s s (%.3fx plain's time)" % (
    ran, sys.argv[4], secs, float(secs) / mp))
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
