#!/usr/bin/env bash
# A container that ignores SIGTERM past its timeout: SIGKILL after the
# grace period, outcome timeout (not failed), and the container is gone.
. "$TESTS/docker/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "stubborn" { image = "bb", network = "none", timeout = "2s", grace = "1s",
  run = "trap '' TERM; echo started; sleep 100" }
LUA
start=$(date +%s)
tpuci_run run spec.lua
took=$(( $(date +%s) - start ))
expect_code 1 "a timed out job fails the run"
expect_json 's["instances"][0]["outcome"]' timeout
expect_json 's["instances"][0]["attempts"][0]["outcome"]' timeout
[ "$took" -lt 30 ] && pass || fail "took ${took}s, the container was not killed"
expect_no_leftovers "$(latest_run_id)" "$tp" "after a timeout"
finish
