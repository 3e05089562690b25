#!/usr/bin/env bash
# Benchmark (issue 23.4; not a test: it prints, never asserts): tpuci's
# pytest shards against pytest-xdist and serial pytest, in the same
# container image, through the same engine, back to back.
#
# The suite (torch_suite.py): about 1,100 tests in 36 modules that import
# torch at module level and do a little tensor work per test, mixed
# durations (a dozen of 1.6-6 s), 8 tests that always fail. The image
# (image.sh): tpuci-test/torch:1 (Debian's python3-torch) with Debian's
# python3-pytest-xdist. Each round runs, in a rotating order:
#   serial   docker run IMAGE python3 -m pytest -p no:cacheprovider tests/
#   xdist    the same with -n 2
#   tpuci    tpuci run -j 2 spec.lua, pytest.shards = 2, retries on failed
# tpuci runs first once, unmeasured, so that the measured runs have what
# a CI job that keeps .tpuci/ has: the recorded durations and collection.
# Prints each run, where tpuci's time went (its shards' and retries'
# starts and ends), the medians, the ratios and the load average.
#
# With BASELINE=path/to/another/tpuci (an older build), that one runs too,
# as "before", with a state folder of its own, so that a change is
# measured against the same load as its peers.
#
# WARMUP=N (default 1) makes that N unmeasured runs: with 5, the
# history is a CI job's that kept .tpuci/ for a week, and the 8 tests
# that always fail are known to (no failing first and no retry for them,
# docs/pytest.md).
#
# usage: bench/pytest/xdist.sh [path/to/tpuci]
# env: ROUNDS (3), SCALE (2: ~114 s of test time in all), WARMUP (1),
#      BASELINE, DOCKER_HOST.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=$(readlink -f "${1:-$here/../../build/tpuci}")
rounds=${ROUNDS:-3}
scale=${SCALE:-2}
warmup=${WARMUP:-1}
ntests=1100 modules=36
# SMOKE=1: one round of 100 tests in 6 modules, 40 times faster (ctest
# bench_pytest_xdist, label bench): it runs, its figures mean nothing.
if [ "${SMOKE:-0}" = 1 ]; then rounds=1 scale=0.05 ntests=100 modules=6; fi
image=${TPUCI_BENCH_IMAGE:-tpuci-bench/torch-xdist:1}
export TPUCI_BENCH_IMAGE=$image

docker version >/dev/null 2>&1 || { echo "bench: no engine at DOCKER_HOST" >&2; exit 1; }
bash "$here/image.sh"
work=$(mktemp -d /tmp/tpuci-bench-xdist.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$here/torch_suite.py" "$work/suite" --scale "$scale" --tests "$ntests" --modules "$modules"
cat > "$work/spec.lua" <<LUA
image "torch" { ref = "$image", pull = "never" }
job "suite" {
  image = "torch", workdir = "/src",
  mounts = { ["$work/suite"] = { target = "/src", readonly = true } },
  pytest = { args = { "tests/" }, shards = 2 },
  retries = { attempts = 2, on = { "failed" } },
}
LUA
cd "$work"
label="tpuci-bench=$$"
peer() { # peer [pytest options...]: the suite in one container
  docker run --rm --label "$label" -v "$work/suite:/src:ro" -w /src \
    -e PYTHONDONTWRITEBYTECODE=1 "$image" \
    python3 -m pytest -q -p no:cacheprovider --junitxml=/tmp/junit.xml "$@" tests/ \
    > "$work/peer.log" 2>&1 || true
}
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
declare -A times
run_one() {
  local tool=$1 t0 t1
  t0=$(now)
  case $tool in
    serial) peer ;;
    xdist) peer -n 2 ;;
    tpuci) "$tpuci" run -q -j 2 spec.lua > "$work/tpuci.log" 2>&1 || true ;;
    before) "$BASELINE" run -q -j 2 --state-dir "$work/before" spec.lua > "$work/before.log" 2>&1 || true ;;
  esac
  t1=$(now)
  times[$tool]="${times[$tool]:-} $(secs "$t0" "$t1")"
  printf '  %-7s %8s s\n' "$tool" "$(secs "$t0" "$t1")"
  if [ "$tool" = tpuci ]; then breakdown .tpuci/runs/latest "$work/tpuci.log"; fi
  if [ "$tool" = before ]; then breakdown "$work/before/runs/latest" "$work/before.log"; fi
}
# Where tpuci's time went, from the run's summary.json and attempts.jsonl.
breakdown() {
  python3 - "$1" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
t0 = s["start_ms"]
rows = [json.loads(l) for l in open(d + "/attempts.jsonl")]
for r in sorted(rows, key=lambda r: r["start_ms"]):
    st = (r["start_ms"] - t0) / 1000
    end = st + r["duration_ms"] / 1000
    # The attempt's phases from its progress.jsonl (pytest's own clock):
    # start to its first test (container, python, imports, collection),
    # its tests, its last test's start to the attempt's end (the last
    # test, reports, exit, the container's removal).
    phases = ""
    try:
        folder = r["log"].rsplit("/", 1)[0]
        ts = [json.loads(l).get("t") for l in open("%s/results-%d/progress.jsonl" % (folder, r["attempt"]))]
        ts = [t - t0 / 1000 for t in ts if t]
        phases = "  (to first test %5.2f s, tests %6.2f s, after the last %5.2f s)" % (
            ts[0] - st, ts[-1] - ts[0], end - ts[-1])
    except (OSError, IndexError, TypeError, ValueError, AttributeError):
        pass
    print("          %-18s attempt %d  %6.2f s -> %6.2f s  %-6s%s" % (
        r["instance"], r["attempt"], st, end, r["outcome"], phases))
wall = s["duration_ms"] / 1000
print("          run ends at %.2f s (tpuci's own clock)" % wall)
# The shards' imbalance: when the last shard's last attempt ended, less
# when the first's did (issue 44: under 5% of the wall).
ends = {}
for r in rows:
    if "shard=" in r["instance"]:
        e = (r["start_ms"] - t0 + r["duration_ms"]) / 1000
        ends[r["instance"]] = max(ends.get(r["instance"], 0), e)
if len(ends) > 1:
    gap = max(ends.values()) - min(ends.values())
    print("          shard imbalance: %.2f s, %.1f%% of the wall (target < 5%%)" % (gap, 100 * gap / wall))
# Time to the first failure: the first failed test's start plus its
# duration, over every process (the failing-first process too).
first = None
for r in rows:
    folder = r["log"].rsplit("/", 1)[0]
    name = "first" if r["attempt"] == 0 else str(r["attempt"])
    try:
        starts = {}
        for l in open("%s/results-%s/progress.jsonl" % (folder, name)):
            o = json.loads(l)
            if "start" in o and "t" in o:
                starts[o["start"]] = o["t"]
            elif o.get("outcome") == "failed" and o.get("id") in starts:
                at = starts[o["id"]] + (o.get("duration") or 0) - t0 / 1000
                first = at if first is None else min(first, at)
    except (OSError, ValueError, KeyError):
        pass
if first is not None:
    print("          time to the first failure: %.2f s, %.1f%% of the wall" % (first, 100 * first / wall))
PY
  grep -E 'tests in [0-9]+ shards' "$2" | sed 's/^/          /' || true
}

echo "bench: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), scale $scale, $rounds rounds"
for ((w = 1; w <= warmup; w++)); do
  t0=$(now)
  "$tpuci" run -q -j 2 spec.lua > "$work/tpuci.log" 2>&1 || true
  echo "unmeasured tpuci run $w of $warmup: $(secs "$t0" "$(now)") s"
done
breakdown .tpuci/runs/latest "$work/tpuci.log"
tools=(serial xdist tpuci)
if [ -n "${BASELINE:-}" ]; then
  BASELINE=$(readlink -f "$BASELINE")
  for ((w = 1; w <= warmup; w++)); do
    "$BASELINE" run -q -j 2 --state-dir "$work/before" spec.lua > "$work/before.log" 2>&1 || true
  done
  tools+=(before)
fi
for ((r = 0; r < rounds; r++)); do
  echo "round $((r + 1)) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  for ((k = 0; k < ${#tools[@]}; k++)); do run_one "${tools[(r + k) % ${#tools[@]}]}"; done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${times[serial]}" "${times[xdist]}" "${times[tpuci]}" "${times[before]:-}" <<'PY'
import statistics, sys
med = [statistics.median(float(x) for x in a.split()) if a.strip() else None
       for a in sys.argv[1:5]]
print("medians: serial %.2f s, pytest -n 2 %.2f s, tpuci shards=2 %.2f s" % tuple(med[:3]))
print("tpuci / pytest -n 2: %.3fx (target <= 1.0x)" % (med[2] / med[1]))
print("tpuci / serial:      %.3fx (target <= 0.55x)" % (med[2] / med[0]))
print("pytest -n 2 / serial: %.3fx" % (med[1] / med[0]))
if med[3]:
    print("before: %.2f s; before / pytest -n 2: %.3fx; tpuci / before: %.3fx" % (
        med[3], med[3] / med[1], med[2] / med[3]))
# The same per round (its tools ran back to back), and their medians.
rounds = [[float(x) for x in a.split()] for a in sys.argv[1:5] if a.strip()]
per = []
for i, r in enumerate(zip(*rounds)):
    per.append((r[2] / r[1], r[2] / r[0]) + ((r[3] / r[1],) if len(r) > 3 else ()))
    print("round %d: tpuci / pytest -n 2 %.3fx, tpuci / serial %.3fx%s" % (
        i + 1, per[-1][0], per[-1][1], ", before / pytest -n 2 %.3fx" % per[-1][2] if len(r) > 3 else ""))
print("median of the rounds: tpuci / pytest -n 2 %.3fx, tpuci / serial %.3fx%s" % (
    statistics.median(p[0] for p in per), statistics.median(p[1] for p in per),
    ", before / pytest -n 2 %.3fx" % statistics.median(p[2] for p in per) if len(per[0]) > 2 else ""))
PY
