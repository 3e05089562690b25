#!/usr/bin/env bash
# Ctrl-C (SIGINT) mid-run, on each engine (engine.sh): while two jobs
# (one that ignores SIGTERM) and a gang of 2 hosts run and a fourth job
# waits for a slot, tpuci stops them all (docker and podman stop and
# remove the containers and the gang's network; swarm removes every
# service and waits until their tasks are gone), exits 130 with every
# instance cancelled, starts nothing more, and leaves nothing.
. "$TESTS/engines/engine.sh"

mkdir out
spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-16" {}
job "long1" { image = "bb", @NONET@ mounts = { ["out"] = "/out" }, run = "touch /out/long1; sleep 100" }
job "long2" { image = "bb", @NONET@ mounts = { ["out"] = "/out" }, grace = "2s",
  run = "touch /out/long2; trap '' TERM; sleep 100" }
job "gang" { image = "bb", topology = "v4-16", grace = "2s", mounts = { ["out"] = "/out" },
  run = "touch /out/gang$TPUCI_HOST; sleep 100" }
job "queued" { image = "bb", @NONET@ mounts = { ["out"] = "/out" }, run = "touch /out/queued" }
LUA
# -j 4: the two jobs and the gang's two hosts fill the slots.
engine_start run -j 4 spec.lua
for _ in $(seq $((ENGINE_GANG_UP_S * 10))); do
  [ -e out/long1 ] && [ -e out/long2 ] && [ -e out/gang0 ] && [ -e out/gang1 ] && break
  sleep 0.1
done
[ -e out/long1 ] && [ -e out/long2 ] && [ -e out/gang0 ] && [ -e out/gang1 ] && pass || fail "the jobs did not start: $(ls out)"
run_id=$(latest_run_id)
# Their containers (on swarm, the tasks' containers) exist: the jobs',
# the gang's hosts and its go (the start barrier's, which the hosts
# waited for).
wait_containers 5 "tpuci.run=$run_id" "tpuci.pid=$tp"
[ "$c" = 5 ] && pass || fail "5 containers of run $run_id while running, saw $c"
start=$(date +%s)
kill -INT "$tp"
engine_wait
took=$(( $(date +%s) - start ))
expect_code 130 "SIGINT"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled', 'cancelled', 'cancelled', 'cancelled']"
[ ! -e out/queued ] && pass || fail "a queued job started after SIGINT"
[ "$took" -lt 30 ] && pass || fail "Ctrl-C took ${took}s"
expect_gone "$run_id" "$tp" "after SIGINT"
finish
