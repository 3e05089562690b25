#!/usr/bin/env bash
# Ctrl-C while swarm jobs and a gang run: tpuci removes every service,
# waits until their tasks are gone, and exits 130 with every instance
# cancelled; nothing is left.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-16" {}
job "sleepy" { image = "bb", runtime = "swarm", grace = "2s", matrix = { i = { 1, 2 } },
  run = "echo up; sleep 100" }
job "gang" { image = "bb", runtime = "swarm", topology = "v4-16", grace = "2s",
  run = "echo up; sleep 100" }
LUA
"$TPUCI" run -j 4 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
# Until all 4 services run (their tasks' containers exist).
for _ in $(seq 300); do
  c=$(count_objects containers "tpuci.pid=$tp")
  [ "$c" = 4 ] && break
  sleep 0.1
done
[ "$c" = 4 ] && pass || fail "4 task containers before Ctrl-C, saw $c"
start=$(date +%s.%N)
kill -INT "$tp"
wait "$tp"
code=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
out=$(cat "$WORK/tpuci.out")
expect_code 130 "Ctrl-C"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled', 'cancelled', 'cancelled']"
echo "Ctrl-C to exit: $took s" >&2
[ "$(echo "$took < 30" | bc)" = 1 ] && pass || fail "Ctrl-C took ${took}s"
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "Ctrl-C"
finish
