#!/usr/bin/env bash
# `kill -9` of tpuci while a swarm gang and two jobs run leaves their
# services and the gang's overlay network: the next run and `tpuci doctor`
# warn, `tpuci gc --dry-run` lists them, `tpuci gc` removes them (services,
# then the network once its tasks are gone). gc waits until the tasks and
# their containers are gone: nothing is left when it returns. One job
# ignores SIGTERM (its task goes only after its 15 s grace): with
# TPUCI_GC_WAIT=1s gc says that it is still going; the next gc waits for it.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-16" {}
job "g" { image = "bb", runtime = "swarm", topology = "v4-16", run = "sleep 100" }
job "one" { image = "bb", runtime = "swarm", run = "sleep 100" }
job "stubborn" { image = "bb", runtime = "swarm", grace = "15s",
  run = "trap '' TERM; echo up; while :; do sleep 0.2; done" }
LUA
"$TPUCI" run -j 4 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
for _ in $(seq 300); do
  c=$(count_objects containers "tpuci.pid=$tp")
  [ "$c" = 4 ] && break
  sleep 0.1
done
[ "$c" = 4 ] && pass || fail "4 task containers before kill -9, saw $c"
kill -9 "$tp"
wait "$tp" 2>/dev/null
run_id=$(latest_run_id)
[ "$(count_services "tpuci.pid=$tp")" = 4 ] && pass || fail "kill -9 did not leave the 4 services"

run_tpuci doctor spec.lua
expect_out "warn swarm leftovers: 4 services and 1 overlay network left by earlier runs"
run_tpuci gc --dry-run
expect_code 0 "gc --dry-run"
expect_out "would remove service tpuci-$run_id-g-1-w0"
expect_out "would remove service tpuci-$run_id-one-1"
expect_out "would remove overlay network tpuci-$run_id-g-1"
[ "$(count_services "tpuci.pid=$tp")" = 4 ] && pass || fail "--dry-run removed something"
start=$(date +%s)
TPUCI_GC_WAIT=1s run_tpuci gc
expect_code 0 "gc"
expect_out "removed service tpuci-$run_id-g-1-w1"
expect_out "removed service tpuci-$run_id-one-1"
expect_out "removed service tpuci-$run_id-stubborn-1"
expect_out "still going after 1"
expect_out "of service tpuci-$run_id-stubborn-1 ("
expect_not_out "FAILED"
[ "$(count_objects containers "tpuci.pid=$tp")" -ge 1 ] && pass || fail "the stubborn task's container went before its grace"
# Its service is gone: the second gc finds its container and waits.
run_tpuci gc
expect_code 0 "the second gc"
expect_not_out "FAILED"
expect_not_out "still going"
echo "gc of 4 services and a network: $(( $(date +%s) - start )) s" >&2
# Gone when gc returns, without waiting here.
s=$(count_services "tpuci.pid=$tp")
n=$(count_objects networks "tpuci.pid=$tp")
c=$(count_objects containers "tpuci.pid=$tp")
[ "$s$n$c" = 000 ] && pass || fail "when gc returned: $s services, $n networks and $c containers left"
expect_no_swarm_leftovers "$run_id" "$tp" "gc"
TPUCI_GC_WAIT=nonsense run_tpuci gc
expect_out "TPUCI_GC_WAIT=nonsense: not a duration"
finish
