#!/usr/bin/env bash
# -j 2 with six one-second containers: never more than two at once, and
# two at once (-j 2 used).
. "$TESTS/docker/lib.sh"

mkdir out
{
  echo 'image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }'
  for i in 1 2 3 4 5 6; do
    echo "job \"s$i\" { image = \"bb\", network = \"none\", mounts = { [\"out\"] = \"/out\" },"
    # Each sleeps once two have started (bounded), so the first two overlap
    # however far apart a loaded engine starts them.
    echo "  run = [[ echo start \$(cut -d' ' -f1 /proc/uptime) >> /out/\$TPUCI_INSTANCE; n=0; while [ \$(cat /out/* | grep -c start) -lt 2 ] && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done; sleep 1; echo end \$(cut -d' ' -f1 /proc/uptime) >> /out/\$TPUCI_INSTANCE ]] }"
  done
} > spec.lua
tpuci_run run -j 2 spec.lua
expect_code 0 "six sleeps"
n=$(ls out | wc -l)
[ "$n" = 6 ] && pass || fail "$n jobs recorded, want 6"
max=$(cat out/* | python3 -c '
import sys
ev = []
for line in sys.stdin:
    kind, t = line.split()
    ev.append((float(t), 0 if kind == "end" else 1))
ev.sort()
cur = best = 0
for _, k in ev:
    cur += 1 if k else -1
    best = max(best, cur)
print(best)')
[ "$max" -le 2 ] && pass || fail "$max jobs overlapped with -j 2"
[ "$max" = 2 ] && pass || fail "never two at once ($max): -j 2 not used"
expect_no_leftovers "$(latest_run_id)" "$tp" "after the run"
finish
