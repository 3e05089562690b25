#!/usr/bin/env bash
# A swarm task's output when tpuci stops it (issue 24.10): a task is
# followed once the poll sees it running, and a timeout may come before
# that stream brings anything. Its log is then read once more before its
# service is removed, so the output block of a timed-out attempt holds
# what the job printed. Made certain with a proxy that never answers the
# followed log streams (faultproxy.py hang*): only the read at the stop
# can bring the output. A gang's host stopped because another failed is
# read the same way.
. "$TESTS/swarm/lib.sh"
case "$DOCKER_HOST" in
  unix://*) ;;
  *) echo "SKIP: the proxy needs a unix socket engine"; exit 77 ;;
esac
trap 'kill $pp 2>/dev/null; rm -rf "$WORK"' EXIT
fault_proxy 'hang*:GET:/tasks/[^/]+/logs\?.*follow=1'

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "slow" { image = "bb", runtime = "swarm", timeout = "20s",
  run = "echo before the timeout; echo on stderr >&2; trap 'exit 143' TERM; sleep 120 & wait" }
topology "duo" { hosts = 2, emulate = "none" }
-- No start barrier: its lines come through the followed streams, which
-- the proxy holds here. Host 1 fails once host 0 is up (its file in
-- /out, bounded: a loaded swarm may start the two far apart).
job "pair" { image = "bb", runtime = "swarm", topology = "duo", start_timeout = 0,
  mounts = { [tpuci.spec_dir .. "/out"] = "/out" },
  run = "echo host $TPUCI_HOST up; if [ $TPUCI_HOST = 1 ]; then n=0; while [ ! -e /out/up0 ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done; sleep 1; exit 3; fi; touch /out/up0; trap 'exit 143' TERM; sleep 120 & wait" }
LUA
mkdir out
DOCKER_HOST=unix://$WORK/proxy.sock tpuci_run run --plain -j 3 spec.lua
expect_code 1 "a timeout and a failed gang"
grep -q "hang" "$WORK/proxy.log" && pass || fail "the proxy held no followed log: $(cat "$WORK/proxy.log")"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'slow': 'timeout', 'pair': 'failed'}"
block=$(sed -n '/^--- output of slow, attempt 1\/1 ---$/,/^--- end of slow ---$/p' "$WORK/tpuci.out")
case "$block" in
  *"before the timeout"*"on stderr"*|*"on stderr"*"before the timeout"*) pass ;;
  *) fail "the timed-out attempt's output block: '$block'; output: $out" ;;
esac
expect_not_out "(no output)"
log=$(cat "$WORK"/.tpuci/runs/latest/slow/attempt-1.log 2>/dev/null)
case "$log" in
  *"before the timeout"*) pass ;;
  *) fail "slow's log: '$log'" ;;
esac
# The gang's host 0, stopped when host 1 failed: its own line is there.
grep -q "host 0 up" "$WORK"/.tpuci/runs/latest/pair/attempt-1.worker-0.log && pass ||
  fail "pair's worker-0 log: $(cat "$WORK"/.tpuci/runs/latest/pair/attempt-1.worker-0.log 2>&1)"
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "after the stops"
finish
