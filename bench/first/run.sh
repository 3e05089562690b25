#!/usr/bin/env bash
# Time to first failure (issue 22.7): a 500-test pytest suite whose one
# failing test sits at the end, run twice by tpuci; the second run starts
# the test that failed first (failing first). Prints, for each run, the
# time from the attempt's start to the failing test's report (from
# progress.jsonl's own clock), and the ratio. Needs /usr/bin/python3 with
# pytest. Usage: bench/first/run.sh [tpuci]; SLEEP (per test, default
# 0.01 s), N (default 500).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=${1:-$here/../../build/tpuci}
tpuci=$(readlink -f "$tpuci")
n=${N:-500}
# SMOKE=1: 50 tests (ctest bench_first, label bench): it runs, its figures
# mean nothing.
[ "${SMOKE:-0}" = 1 ] && n=50
work=$(mktemp -d /tmp/tpuci-bench-first.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tests"
cat > "$work/tests/test_suite.py" <<PY
import time
import pytest


@pytest.mark.parametrize("n", range($n - 1))
def test_pass(n):
    time.sleep(${SLEEP:-0.01})


def test_zz_last_fails():
    assert False
PY
cat > "$work/spec.lua" <<'LUA'
job "suite" { pytest = { python = "/usr/bin/python3", args = { "tests/" } }, workdir = tpuci.spec_dir }
LUA

# first_failure: seconds from the first test's start to the failing
# test's failed report, in the latest run.
first_failure() {
  /usr/bin/python3 - "$work/.tpuci/runs/latest/suite/results-1/progress.jsonl" <<'PY'
import json, sys
t0 = t_start = None
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "start" in o and t0 is None:
        t0 = o["t"]
    if "start" in o and o["start"].endswith("test_zz_last_fails"):
        t_start = o["t"]
print("%.3f" % (t_start - t0))
PY
}

cd "$work"
"$tpuci" run -q --plain spec.lua > first.out 2>&1 || true
one=$(first_failure)
"$tpuci" run -q --plain spec.lua > second.out 2>&1 || true
two=$(first_failure)
echo "$n tests, one failing at the end:"
echo "  first run:  the failing test started ${one} s after the first"
echo "  second run: the failing test started ${two} s after the first"
/usr/bin/python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('  second / first: %.4fx' % (b / a if a > 0 else 0))" "$one" "$two"
