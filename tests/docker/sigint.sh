#!/usr/bin/env bash
# SIGINT mid-run: the containers are stopped and removed, exit 130, and
# nothing with the run's label is left.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "long1" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/long1; sleep 100" }
job "long2" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/long2; trap '' TERM; sleep 100", grace = "2s" }
job "queued" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/queued" }
LUA
"$TPUCI" run -j 2 spec.lua > run.log 2>&1 &
tp=$!
for _ in $(seq 200); do [ -e out/long1 ] && [ -e out/long2 ] && break; sleep 0.1; done
[ -e out/long1 ] && [ -e out/long2 ] && pass || fail "the containers did not start"
run_id=$(latest_run_id)
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 2 ] && pass || fail "not 2 containers of run $run_id while running"
kill -INT "$tp"
wait "$tp"
code=$?
out=$(cat run.log)
expect_code 130 "SIGINT"
expect_no_leftovers "$run_id" "$tp" "after SIGINT"
[ ! -e out/queued ] && pass || fail "a queued job started after SIGINT"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled', 'cancelled', 'cancelled']"
finish
