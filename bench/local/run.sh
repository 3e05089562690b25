#!/usr/bin/env bash
# Benchmark of the local runtime (not a test: it prints, never asserts).
# Every figure is the median of RUNS runs (default 5) taken with hyperfine
# in this one invocation, tpuci and its peers interleaved by hyperfine's
# order, so that a loaded machine slows both sides alike.
#
# 1. N trivial jobs (`true`, default 2000) at -j 2 through tpuci, xargs -P2
#    (exec'ing `true` directly, and through `sh -c`) and GNU parallel.
#    Targets: tpuci <= 1.3x xargs -P2 (direct), GNU parallel >= 4x tpuci.
# 2. How it grows: tpuci and xargs at N = 500, 2000, 8000.
# 3. Output: one job printing 1 GiB to stdout, captured to its log,
#    against `head -c 1G > file` (the page-cache floor) and its peak RSS.
#    Targets: >= 500 MB/s, RSS < 50 MB.
# 4. Plans: `tpuci plan` of 10,000 and 100,000 instances (and --json):
#    time and peak RSS. Target: 100,000 in < 2 s and < 300 MB.
#
# usage: bench/local/run.sh [path/to/tpuci]     (RUNS=5 N=2000 by default)
# SMOKE=1: tiny sizes (20 jobs, growth 5/10/20, 1 MiB of output, plans of
# 1,000 and 10,000 instances, 2 runs): it runs, its figures mean nothing
# (ctest bench_local, label bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tpuci=${1:-$here/../../build/tpuci}
tpuci=$(cd "$(dirname "$tpuci")" && pwd)/$(basename "$tpuci")
n=${N:-2000}
runs=${RUNS:-5}
growth=(500 2000 8000)
out_bytes=1073741824
plan_keys=(4 5)
if [ "${SMOKE:-0}" = 1 ]; then
  n=20 runs=2 growth=(5 10 20) out_bytes=1048576 plan_keys=(3 4)
fi
for tool in hyperfine parallel; do
  command -v $tool >/dev/null || { echo "bench: $tool is missing (apt-get install $tool)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/tpuci-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
jobs_spec() { # N FILE
  printf 'local n = {}\nfor i = 1, %s do n[#n + 1] = i end\njob "t" { matrix = { i = n }, cmd = { "true" } }\n' "$1" > "$2"
}
plan_spec() { # KEYS FILE: a matrix of KEYS keys of 10 values each
  {
    echo 'local function r(k) local t = {} for i = 1, k do t[i] = i end return t end'
    printf 'job "big" {\n  matrix = {'
    for k in $(seq 1 "$1"); do printf ' k%s = r(10),' "$k"; done
    printf ' },\n  run = "pytest -m tpu -k '"'"'a${matrix.k1} and b${matrix.k2}'"'"'",\n'
    printf '  env = { C = "${matrix.k3}" }, timeout = "20m", retries = 2,\n}\n'
  } > "$2"
}
for m in "${growth[@]}" "$n"; do jobs_spec "$m" "jobs$m.lua"; done
plan_spec "${plan_keys[0]}" plan10k.lua
plan_spec "${plan_keys[1]}" plan100k.lua
echo "job \"big\" { cmd = { \"head\", \"-c\", \"$out_bytes\", \"/dev/zero\" } }" > out1g.lua

hf() { # JSON CMD...: hyperfine, median in seconds per command
  local json=$1
  shift
  hyperfine -N --runs "$runs" --warmup 1 --export-json "$json" "$@" >/dev/null 2>&1 ||
    hyperfine --runs "$runs" --warmup 1 --export-json "$json" "$@" >/dev/null
}
# A run of tpuci starts with an empty state folder each time.
tp() { echo "rm -rf $work/.tpuci; $tpuci run -q -j 2 $1 >/dev/null"; }

echo "bench: $n trivial jobs at -j 2, $runs runs each (median)" >&2
hyperfine --runs "$runs" --warmup 1 --export-json jobs.json \
  "$(tp "jobs$n.lua")" \
  "seq $n | xargs -P2 -I{} true" \
  "seq $n | xargs -P2 -n1 sh -c 'exec true' x" \
  "seq $n | parallel -j2 true" >/dev/null

echo "bench: growth at N = ${growth[*]}" >&2
hyperfine --runs "$runs" --warmup 1 --export-json growth.json \
  "$(tp "jobs${growth[0]}.lua")" "seq ${growth[0]} | xargs -P2 -I{} true" \
  "$(tp "jobs${growth[1]}.lua")" "seq ${growth[1]} | xargs -P2 -I{} true" \
  "$(tp "jobs${growth[2]}.lua")" "seq ${growth[2]} | xargs -P2 -I{} true" >/dev/null

echo "bench: $out_bytes bytes of output" >&2
hyperfine --runs "$runs" --export-json out.json \
  "rm -rf $work/.tpuci; $tpuci run -q out1g.lua >/dev/null" \
  "head -c $out_bytes /dev/zero > $work/floor.bin" >/dev/null
rm -rf "$work/.tpuci" "$work/floor.bin"
/usr/bin/time -f '%M' -o out.rss "$tpuci" run -q out1g.lua >/dev/null
out_size=$(stat -c %s .tpuci/runs/latest/big/attempt-1.log)
rm -rf "$work/.tpuci"

echo "bench: plans" >&2
for p in plan10k plan100k; do
  /usr/bin/time -f '%e %M' -o "$p.txt.t" "$tpuci" plan "$p.lua" >/dev/null
  /usr/bin/time -f '%e %M' -o "$p.json.t" "$tpuci" plan --json "$p.lua" >/dev/null
done

python3 - "$n" "$out_size" "$out_bytes" "${growth[@]}" "${plan_keys[@]}" <<'PY'
import json, statistics, sys
n, out_size, out_bytes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
sizes = [int(a) for a in sys.argv[4:7]]
plans = [f"{10 ** int(k):,}" for k in sys.argv[7:9]]
mib = out_bytes / 1048576
def med(path):
    return [statistics.median(r["times"]) for r in json.load(open(path))["results"]]
def ratio(a, b, fmt=".2f"):
    # hyperfine may time a command that fast (a smoke run's tiny sizes) as 0 s.
    return format(a / b, fmt) if b > 0 else "n/a (under hyperfine's resolution)"
t, xd, xs, p = med("jobs.json")
print(f"{n} trivial jobs at -j 2 (median of runs):")
print(f"  tpuci {t:.3f} s, xargs -P2 {xd:.3f} s, xargs -P2 sh -c {xs:.3f} s, GNU parallel {p:.3f} s")
print(f"  tpuci / xargs -P2            {ratio(t, xd)}x   (target <= 1.3x)")
print(f"  tpuci / xargs -P2 sh -c      {ratio(t, xs)}x")
print(f"  GNU parallel / tpuci         {ratio(p, t)}x   (target >= 4x)")
g = med("growth.json")
print("growth (median s, tpuci / xargs -P2):")
print(f"  {'N':>6} {'tpuci':>8} {'xargs':>8} {'ratio':>6}")
for i, m in enumerate(sizes):
    a, b = g[2 * i], g[2 * i + 1]
    print(f"  {m:>6} {a:>8.3f} {b:>8.3f} {ratio(a, b):>6}")
o, floor = med("out.json")
rss = int(open("out.rss").read().split()[0]) / 1024
print(f"{mib:.0f} MiB of output: tpuci {ratio(mib, o, '.0f')} MiB/s ({o:.2f} s, log {out_size} bytes, "
      f"peak RSS {rss:.1f} MB); head > file {ratio(mib, floor, '.0f')} MiB/s (target >= 500 MB/s, RSS < 50 MB)")
for p, count in zip(("plan10k", "plan100k"), plans):
    for kind, label in (("txt", "plan"), ("json", "plan --json")):
        secs, kb = open(f"{p}.{kind}.t").read().split()
        print(f"tpuci {label:<12} {count:>7} instances: {float(secs):.2f} s, peak RSS {int(kb)/1024:.0f} MB")
print("target: 100,000 instances in < 2 s and < 300 MB")
PY
