#!/usr/bin/env bash
# Podman: a container that ignores SIGTERM past its timeout gets SIGKILL
# after the grace period; the outcome is timeout (not failed), the run
# does not wait for the job's own end, and the container is gone.
. "$TESTS/podman/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "stubborn" { image = "bb", network = "none", timeout = "2s", grace = "1s",
  run = "trap '' TERM; echo started; sleep 100" }
job "polite" { image = "bb", network = "none", timeout = "2s", grace = "5s",
  run = "trap 'echo got TERM; exit 0' TERM; echo started; while true; do sleep 0.1; done" }
LUA
start=$(date +%s)
tpuci_run run -j 2 spec.lua
took=$(( $(date +%s) - start ))
expect_code 1 "a timed out job fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'stubborn': 'timeout', 'polite': 'timeout'}"
expect_json '"SIGKILL after grace period" in s["instances"][0]["attempts"][0]["cause"]' True
# The polite one ended on SIGTERM, within its grace: no SIGKILL.
expect_json '"SIGKILL" in s["instances"][1]["attempts"][0]["cause"]' False
log=$(json 's["instances"][1]["attempts"][0]["log"]')
case "$log" in /*) ;; *) log="$WORK/$log" ;; esac
grep -q "got TERM" "$log" && pass || fail "the polite job did not see SIGTERM (the init process passes it on)"
[ "$took" -lt 30 ] && pass || fail "took ${took}s, the container was not killed"
expect_no_leftovers "$(latest_run_id)" "$tp" "after a timeout"
finish
