#!/usr/bin/env bash
# `kill -9` of tpuci while a swarm gang and a job run leaves their services
# and the gang's overlay network: the next run and `tpuci doctor` warn,
# `tpuci gc --dry-run` lists them, `tpuci gc` removes them (services, then
# the network once its tasks are gone) and nothing is left.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-16" {}
job "g" { image = "bb", runtime = "swarm", topology = "v4-16", run = "sleep 100" }
job "one" { image = "bb", runtime = "swarm", run = "sleep 100" }
LUA
"$TPUCI" run -j 3 spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
for _ in $(seq 300); do
  c=$(count_objects containers "tpuci.pid=$tp")
  [ "$c" = 3 ] && break
  sleep 0.1
done
[ "$c" = 3 ] && pass || fail "3 task containers before kill -9, saw $c"
kill -9 "$tp"
wait "$tp" 2>/dev/null
run_id=$(latest_run_id)
[ "$(count_services "tpuci.pid=$tp")" = 3 ] && pass || fail "kill -9 did not leave the 3 services"

run_tpuci doctor spec.lua
expect_out "warn swarm leftovers: 3 services and 1 overlay network left by earlier runs"
run_tpuci gc --dry-run
expect_code 0 "gc --dry-run"
expect_out "would remove service tpuci-$run_id-g-1-w0"
expect_out "would remove service tpuci-$run_id-one-1"
expect_out "would remove overlay network tpuci-$run_id-g-1"
[ "$(count_services "tpuci.pid=$tp")" = 3 ] && pass || fail "--dry-run removed something"
start=$(date +%s)
run_tpuci gc
expect_code 0 "gc"
expect_out "removed service tpuci-$run_id-g-1-w1"
expect_out "removed service tpuci-$run_id-one-1"
expect_out "removed overlay network tpuci-$run_id-g-1"
expect_not_out "FAILED"
echo "gc of 3 services and a network: $(( $(date +%s) - start )) s" >&2
expect_no_swarm_leftovers "$run_id" "$tp" "gc"
finish
