#!/usr/bin/env bash
# The scheduler's own speed and memory against an older build of tpuci,
# and against `xargs -P2`: N trivial local jobs (`true`, default 2000)
# at -j 2 with --no-cache, in ROUNDS paired rounds (default 7). Each
# round runs this build, the older one and xargs one after the other, in
# an order that turns round by round, so that a machine that gets busier
# slows each alike; each run is measured by bench/measure.py (wall time,
# CPU time with children, peak RSS). It prints every round's ratios and
# the medians, and exits 1, saying REGRESSION, when this build's median
# wall time is over MAX_WALL (1.10) times the older one's, or its median
# peak RSS over MAX_RSS (1.15) times: a slowdown such as the one of
# issue 44 (1.48x the wall time, 40.5 MiB against 21.8 MiB) fails loudly.
#
# usage: bench/local/vs.sh OLD [path/to/tpuci]
#   OLD: an older tpuci binary, or a git revision of this repository,
#   which is built (Release, without tests) into
#   ${XDG_CACHE_HOME:-~/.cache}/tpuci-bench/REV once and kept there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
old=${1:?usage: bench/local/vs.sh OLD-TPUCI-OR-GIT-REV [path/to/tpuci]}
new=$(readlink -f "${2:-$repo/build/tpuci}")
n=${N:-2000}
rounds=${ROUNDS:-7}
max_wall=${MAX_WALL:-1.10}
max_rss=${MAX_RSS:-1.15}

if [ ! -x "$old" ]; then
  rev=$(git -C "$repo" rev-parse --verify --quiet "$old^{commit}") ||
    { echo "vs: $old is neither a tpuci binary nor a git revision of $repo" >&2; exit 2; }
  dir=${XDG_CACHE_HOME:-$HOME/.cache}/tpuci-bench/$rev
  if [ ! -x "$dir/build/tpuci" ]; then
    echo "vs: building $old ($rev) in $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir/src"
    git -C "$repo" archive "$rev" | tar -x -C "$dir/src"
    cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$dir/build" --target tpuci -j 2 >/dev/null
  fi
  old=$dir/build/tpuci
fi
old=$(readlink -f "$old")

work=$(mktemp -d /tmp/tpuci-vs.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
printf 'local n = {}\nfor i = 1, %s do n[#n + 1] = i end\njob "t" { matrix = { i = n }, cmd = { "true" } }\n' \
  "$n" > jobs.lua
seq "$n" > seq.txt

one() { # LABEL: one measured run, its JSON line appended to runs.jsonl
  case $1 in
    new | old)
      local bin=$new
      [ "$1" = old ] && bin=$old
      rm -rf "$work/st"
      python3 "$repo/bench/measure.py" "$1" "$bin" run -q -j 2 --no-cache --state-dir "$work/st" jobs.lua ;;
    xargs) python3 "$repo/bench/measure.py" xargs sh -c "xargs -P2 -I{} true < $work/seq.txt" ;;
  esac >> runs.jsonl
}

echo "vs: $n trivial jobs at -j 2, $rounds rounds: $new against $old and xargs -P2" >&2
one new # a warm-up of each, not counted
one old
one xargs
: > runs.jsonl
orders=("new old xargs" "old xargs new" "xargs new old")
for r in $(seq "$rounds"); do
  for w in ${orders[$((r % 3))]}; do one "$w"; done
done

python3 - "$rounds" "$max_wall" "$max_rss" <<'PY'
import json, statistics, sys
rounds, max_wall, max_rss = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
runs = [json.loads(l) for l in open("runs.jsonl")]
by = {k: [r for r in runs if r["label"] == k] for k in ("new", "old", "xargs")}
bad = [r for r in by["new"] + by["old"] if r["status"] != 0]
if bad:
    sys.exit(f"vs: a run of tpuci failed: {bad[0]}")
print(f"{'round':>5} {'new s':>7} {'old s':>7} {'xargs s':>7} {'new/old':>8} {'new/xargs':>9} {'new MB':>7} {'old MB':>7}")
wall, vsx, rss = [], [], []
for i in range(rounds):
    a, b, x = by["new"][i], by["old"][i], by["xargs"][i]
    wall.append(a["wall_s"] / b["wall_s"])
    vsx.append(a["wall_s"] / x["wall_s"])
    rss.append(a["maxrss_mb"] / b["maxrss_mb"])
    print(f"{i + 1:>5} {a['wall_s']:>7.2f} {b['wall_s']:>7.2f} {x['wall_s']:>7.2f} {wall[-1]:>8.2f} "
          f"{vsx[-1]:>9.2f} {a['maxrss_mb']:>7.1f} {b['maxrss_mb']:>7.1f}")
med = statistics.median
cpu = med(r["cpu_s"] for r in by["new"]) / med(r["cpu_s"] for r in by["old"])
print(f"median: new/old wall {med(wall):.2f}x (at most {max_wall}), CPU {cpu:.2f}x, "
      f"peak RSS {med(rss):.2f}x (at most {max_rss}); new/xargs -P2 {med(vsx):.2f}x (target <= 1.0x)")
fails = []
if med(wall) > max_wall:
    fails.append(f"wall time {med(wall):.2f}x the older build's")
if med(rss) > max_rss:
    fails.append(f"peak RSS {med(rss):.2f}x the older build's")
if fails:
    print("REGRESSION: " + "; ".join(fails))
    sys.exit(1)
PY
