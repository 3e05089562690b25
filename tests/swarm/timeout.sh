#!/usr/bin/env bash
# A job that outlives its timeout: its service is removed (Swarm stops the
# task: SIGTERM, the grace period, SIGKILL), the outcome is timeout, the
# run ends soon after, and nothing is left.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "slow" { image = "bb", runtime = "swarm", timeout = "2s", grace = "1s",
  run = "echo started; sleep 100; echo never" }
LUA
start=$(date +%s)
tpuci_run run spec.lua
took=$(( $(date +%s) - start ))
expect_code 1 "a timeout fails the run"
expect_json 's["instances"][0]["outcome"]' timeout
grep -qx started "$WORK/.tpuci/runs/latest/slow/attempt-1.log" && pass || fail "the output before the timeout"
grep -q never "$WORK/.tpuci/runs/latest/slow/attempt-1.log" && fail "it ran on" || pass
[ "$took" -lt 30 ] && pass || fail "the timed-out run took ${took}s"
echo "timeout of 2s: the run took ${took} s" >&2
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "a timeout"
finish
