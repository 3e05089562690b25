#!/usr/bin/env bash
# What only swarm's gc does (the rest is tests/engines/gc.sh's): after
# `kill -9` of tpuci, gc removes the services and then waits until their
# tasks and the tasks' containers are gone. A job that ignores SIGTERM
# goes only after its 15 s grace: with TPUCI_GC_WAIT=1s gc says that it
# is still going; the next gc waits for it, and nothing is left when it
# returns.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "one" { image = "bb", runtime = "swarm", run = "sleep 100" }
job "stubborn" { image = "bb", runtime = "swarm", grace = "15s",
  run = "trap '' TERM; echo up; while :; do sleep 0.2; done" }
LUA
"$TPUCI" run -j 2 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
# Both task containers, and the stubborn one past its trap: a container
# exists before its shell runs, and a TERM before the trap would end it.
# Bounded at 120 s: on a loaded machine a task can take long to start.
up=
for _ in $(seq 600); do
  c=$(count_objects containers "tpuci.pid=$tp")
  id=$(api "/containers/json?all=1&filters=$(q "tpuci.pid=$tp" "tpuci.job=stubborn")" |
    python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[0]["Id"] if l else "")')
  [ -n "$id" ] && api "/containers/$id/logs?stdout=1" | grep -aq up && up=1
  [ "$c" = 2 ] && [ -n "$up" ] && break
  sleep 0.2
done
[ "$c" = 2 ] && [ -n "$up" ] && pass || fail "2 task containers, the stubborn one up, before kill -9: saw $c${up:+, up}"
kill -9 "$tp"
wait "$tp" 2>/dev/null
run_id=$(latest_run_id)
t0=$(date +%s)
TPUCI_GC_WAIT=1s run_tpuci gc
took=$(($(date +%s) - t0))
expect_code 0 "gc"
expect_out "removed service tpuci-$run_id-one-1"
expect_out "removed service tpuci-$run_id-stubborn-1"
expect_not_out "FAILED"
# The grace is 15 s from the service's removal: a gc that took longer
# (a loaded machine) may rightly find the container gone.
if [ "$took" -lt 12 ]; then
  expect_out "still going after 1"
  expect_out "of service tpuci-$run_id-stubborn-1 ("
  [ "$(count_objects containers "tpuci.pid=$tp")" -ge 1 ] && pass || fail "the stubborn task's container went before its grace"
else
  echo "gc took ${took} s: the grace checks are skipped" >&2
fi
# Its service is gone: the second gc finds its container and waits.
run_tpuci gc
expect_code 0 "the second gc"
expect_not_out "FAILED"
expect_not_out "still going"
# Gone when gc returns, without waiting here.
s=$(count_services "tpuci.pid=$tp")
c=$(count_objects containers "tpuci.pid=$tp")
[ "$s$c" = 00 ] && pass || fail "when gc returned: $s services and $c containers left"
expect_no_swarm_leftovers "$run_id" "$tp" "gc"
TPUCI_GC_WAIT=nonsense run_tpuci gc
expect_out "TPUCI_GC_WAIT=nonsense: not a duration"
finish
