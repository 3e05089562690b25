#!/usr/bin/env bash
# A job past its timeout, on each engine (engine.sh): one that ignores
# SIGTERM gets SIGKILL after its grace period (docker and podman kill the
# container; swarm removes the service: SIGTERM, the grace period,
# SIGKILL), one that ends on SIGTERM within its grace gets no SIGKILL
# (the init process passes SIGTERM on); both are timeout (not failed),
# the output before the timeout is in the log and nothing after, the run
# does not wait for the jobs' own end, and nothing is left on the engine.
# The timeout is 15 s: on swarm it counts from the service's creation,
# and a loaded swarm may take seconds to start its task (with 2 s, then
# 6 s under a CI load of 30, the job sometimes had printed nothing yet).
# The run not waiting for the jobs' own end is told by the jobs' 100 s
# sleep, not by how fast the machine is.
. "$TESTS/engines/engine.sh"

spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "stubborn" { image = "bb", @NONET@ timeout = "15s", grace = "1s",
  run = "trap '' TERM; echo started; sleep 100; echo never" }
job "polite" { image = "bb", @NONET@ timeout = "15s", grace = "5s",
  run = "trap 'echo got TERM; exit 0' TERM; echo started; while true; do sleep 0.1; done" }
LUA
start=$(date +%s)
engine_run run -j 2 spec.lua
took=$(( $(date +%s) - start ))
expect_code 1 "a timed out job fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'stubborn': 'timeout', 'polite': 'timeout'}"
expect_json '[a["outcome"] for i in s["instances"] for a in i["attempts"]]' "['timeout', 'timeout']"
expect_json '"SIGKILL after grace period" in s["instances"][0]["attempts"][0]["cause"]' True
expect_json '"SIGKILL" in s["instances"][1]["attempts"][0]["cause"]' False
# The signal recorded is the one the cause names (issue 24.10: swarm said 15).
expect_json 's["instances"][0]["attempts"][0]["signal"]' 9
log=$WORK/.tpuci/runs/latest/stubborn/attempt-1.log
grep -qx started "$log" && pass || fail "stubborn: the output before the timeout"
grep -q never "$log" && fail "stubborn: it ran on past its timeout" || pass
if [ "$ENGINE_LOGS_AFTER_STOP" = 1 ]; then
  grep -q "got TERM" "$WORK/.tpuci/runs/latest/polite/attempt-1.log" && pass ||
    fail "the polite job did not see SIGTERM (the init process passes it on)"
fi
[ "$took" -lt 95 ] && pass || fail "took ${took}s: the run waited for the job's own end"
expect_gone "$(latest_run_id)" "$tp" "after a timeout"
finish
