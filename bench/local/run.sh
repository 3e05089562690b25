#!/usr/bin/env bash
# Benchmark of the local runtime (not a test: it prints, never asserts).
#
# 1. N trivial jobs (`true`, default 2000) at -j 2 through tpuci, xargs -P2
#    and GNU parallel, in one run; wall and CPU time and the ratios.
#    Targets: tpuci within 1.3x of xargs, at least 4x faster than parallel.
# 2. `tpuci plan` on a spec whose matrix expands to 10,000 instances: time
#    and peak RSS. Targets: under 200 ms and 30 MB.
#
# usage: bench/local/run.sh [path/to/tpuci]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=${1:-$here/../../build/tpuci}
tpuci=$(cd "$(dirname "$tpuci")" && pwd)/$(basename "$tpuci")
n=${N:-2000}
m="python3 $here/../measure.py"
command -v parallel >/dev/null || { echo "bench: GNU parallel is missing (apt-get install parallel)" >&2; exit 1; }

work=$(mktemp -d /tmp/tpuci-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > jobs.lua <<LUA
local n = {}
for i = 1, $n do n[#n + 1] = i end
job "t" { matrix = { i = n }, cmd = { "true" } }
LUA
cat > plan10k.lua <<'LUA'
local function r(k) local t = {} for i = 1, k do t[i] = i end return t end
job "big" {
  matrix = { a = r(10), b = r(10), c = r(10), d = r(10) },
  run = "pytest -m tpu -k 'a${matrix.a} and b${matrix.b}'",
  env = { C = "${matrix.c}", D = "${matrix.d}" },
  timeout = "20m", retries = 2,
}
LUA

results=$work/results.jsonl
"$tpuci" run -q -j 2 jobs.lua > /dev/null # warm up caches once
$m tpuci "$tpuci" run -q -j 2 jobs.lua >> "$results"
$m xargs sh -c "seq $n | xargs -P2 -n1 sh -c 'exec true' x" >> "$results"
$m xargs-direct sh -c "seq $n | xargs -P2 -I{} true" >> "$results"
$m parallel sh -c "seq $n | parallel -j2 true" >> "$results"
$m plan10k "$tpuci" plan plan10k.lua >> "$results"
$m plan10k-json "$tpuci" plan --json plan10k.lua >> "$results"

python3 - "$results" "$n" <<'PY'
import json, sys
rows = {r["label"]: r for r in map(json.loads, open(sys.argv[1]))}
n = int(sys.argv[2])
print(f"{'tool':<14}{'wall s':>9}{'cpu s':>9}{'rss MB':>9}{'status':>8}")
for k, r in rows.items():
    print(f"{k:<14}{r['wall_s']:>9.3f}{r['cpu_s']:>9.3f}{r['maxrss_mb']:>9.1f}{r['status']:>8}")
t, x, xd, p = rows["tpuci"], rows["xargs"], rows["xargs-direct"], rows["parallel"]
print()
print(f"{n} jobs at -j 2:")
print(f"  tpuci / xargs (sh -c true)  wall {t['wall_s']/x['wall_s']:.2f}x   (target <= 1.3x)")
print(f"  tpuci / xargs (true)        wall {t['wall_s']/xd['wall_s']:.2f}x")
print(f"  parallel / tpuci            wall {p['wall_s']/t['wall_s']:.2f}x   (target >= 4x)")
print(f"  cpu per job: tpuci {1000*t['cpu_s']/n:.2f} ms, xargs {1000*x['cpu_s']/n:.2f} ms, parallel {1000*p['cpu_s']/n:.2f} ms")
pl = rows["plan10k"]
print(f"tpuci plan, 10,000 instances: {1000*pl['wall_s']:.0f} ms, peak RSS {pl['maxrss_mb']:.1f} MB (targets 200 ms, 30 MB)")
pj = rows["plan10k-json"]
print(f"tpuci plan --json, 10,000 instances: {1000*pj['wall_s']:.0f} ms, peak RSS {pj['maxrss_mb']:.1f} MB")
PY
