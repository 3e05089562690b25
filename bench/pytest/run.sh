#!/usr/bin/env bash
# Benchmark of pytest shards (not a test: it prints, never asserts).
#
# A synthetic suite of 200 tests with skewed durations (a few long ones)
# runs as 4 shards through tpuci twice in a fresh state folder: first with
# nothing recorded (tests dealt by count), then with the durations the
# first run recorded in .tpuci/timings.json. For each run it prints every
# shard's test time (from the merged JUnit) and wall time, and the
# makespan against the ideal (total test time / 4).
# Target: within 1.1x of ideal with recorded durations.
#
# usage: bench/pytest/run.sh [path/to/tpuci]   (needs /usr/bin/python3 with pytest)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=${1:-$here/../../build/tpuci}
tpuci=$(cd "$(dirname "$tpuci")" && pwd)/$(basename "$tpuci")
/usr/bin/python3 -c 'import pytest' || { echo "bench: /usr/bin/python3 has no pytest" >&2; exit 1; }

# The second run must run, not take the first's passes (docs/cache.md).
export TPUCI_NO_CACHE=1
work=$(mktemp -d /tmp/tpuci-bench-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/suite/tests"
/usr/bin/python3 - "$work/suite/tests/test_skewed.py" <<'PY'
import random, sys
random.seed(7)
long = [2.0, 1.6, 1.2, 1.0, 0.8]
short = [round(random.uniform(0.01, 0.06), 3) for _ in range(195)]
d = long + short
random.shuffle(d)
with open(sys.argv[1], "w") as f:
    f.write("import time\nimport pytest\nD = %r\n\n" % d)
    f.write("@pytest.mark.parametrize('i', range(len(D)))\n")
    f.write("def test_t(i):\n    time.sleep(D[i])\n")
PY
cat > "$work/spec.lua" <<LUA
job "suite" {
  pytest = { python = "/usr/bin/python3", args = { "tests/" }, shards = 4 },
  workdir = "$work/suite",
}
LUA
cd "$work"
for label in "by count (nothing recorded)" "by recorded durations"; do
  "$tpuci" run -q -j 4 --junit junit.xml spec.lua > out.txt 2>&1 || true
  echo "== $label: $(grep -o 'predicted.*' out.txt | head -n 1)"
  /usr/bin/python3 - junit.xml .tpuci/runs/latest/summary.json <<'PY'
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
rep = {i["name"]: i for i in json.load(open(sys.argv[2]))["instances"]}
loads, walls, total = [], [], 0.0
for s in root.findall("testsuite"):
    t = sum(float(c.get("time") or 0) for c in s.findall("testcase"))
    loads.append(t)
    walls.append(rep[s.get("name")]["attempts"][-1]["duration_ms"] / 1000)
    total += t
    print(f"  {s.get('name'):<22} {len(s.findall('testcase')):>4} tests  test time {t:6.2f}s  wall {walls[-1]:6.2f}s")
ideal = total / len(loads)
print(f"  makespan (test time) {max(loads):.2f}s, ideal {ideal:.2f}s: {max(loads)/ideal:.3f}x of ideal")
print(f"  makespan (wall)      {max(walls):.2f}s (includes pytest start-up per shard)")
PY
done
