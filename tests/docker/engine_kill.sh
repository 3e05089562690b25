#!/usr/bin/env bash
# The engine dies (SIGKILL, its containerd and shims with it) in the
# middle of a run, on an engine of the test's own.
#
# It comes back: the attempts that ran become infra, those started while
# it was down are infra at once (connection refused, nothing looked up),
# and the retries on infra pass once it answers again; the run completes,
# nothing that had finished is lost, and what the dead engine could not
# remove, tpuci removes once it is back: `tpuci gc` finds nothing.
#
# It never comes back: the run ends within a bounded time, exit 1, each
# attempt infra with the engine's address, and one line per container it
# could not remove. Once the engine is back, `tpuci gc` removes them.
# And an engine down before the run: exit 3, nothing runs.
. "$TESTS/docker/lib.sh"

edir=$WORK/engine
trap 'private_engine_down "$edir" KILL; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT
private_engine_up "$edir" || { fail "cannot start a private engine"; finish; }

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
local retry = { attempts = 5, on = { "infra" }, backoff = "2s", factor = 2 }
-- The first attempts wait for the engine to die; the retries pass.
local run = [[ [ "$TPUCI_ATTEMPT" -ge 2 ] && { echo again; exit 0; }; echo waiting; sleep 120 ]]
job "early" { image = "bb", network = "none", run = "echo early" }
job "long1" { image = "bb", network = "none", retries = retry, run = run }
job "long2" { image = "bb", network = "none", retries = retry, run = run }
job "gang" { image = "bb", topology = "v4-16", retries = retry, run = run }
job "queued" { image = "bb", network = "none", retries = retry, run = "echo queued" }
LUA

# wait_for N: until N lines of first attempts say "waiting" (120 s at
# most): one per container, so a gang counts once each of its hosts runs
# (a gang's hosts start one after another).
wait_for() {
  local i
  for i in $(seq 1 1200); do
    [ "$(cat .tpuci/runs/latest/*/attempt-1.log 2>/dev/null | grep -c waiting)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
attempts() { # INSTANCE: "outcome:cause" of each attempt, one per line
  /usr/bin/python3 -c '
import json, sys
for l in open(".tpuci/runs/latest/attempts.jsonl"):
    a = json.loads(l)
    if a["instance"] == sys.argv[1]:
        print("%s:%s" % (a["outcome"], a["cause"]))' "$1"
}

# 1. The engine comes back.
t0=$SECONDS
DOCKER_HOST=$PRIVATE_HOST "$TPUCI" run --plain -j 4 spec.lua > "$WORK/run.out" 2>&1 &
tp=$!
wait_for 4 && pass || fail "the long attempts never ran"
for i in $(seq 1 100); do
  grep -q '"instance": *"early"' .tpuci/runs/latest/attempts.jsonl 2>/dev/null && break
  sleep 0.1
done
grep -q '"instance": *"early"' .tpuci/runs/latest/attempts.jsonl && pass || fail "early did not finish first"
private_engine_down "$edir" KILL
sleep 4   # attempts 2 start 2 s after the kill: the engine is down then
private_engine_up "$edir" || fail "the engine did not come back"
wait "$tp"
code=$?
out=$(cat "$WORK/run.out")
expect_code 0 "the retries after the engine came back"
[ $((SECONDS - t0)) -lt 120 ] && pass || fail "the run took $((SECONDS - t0)) s"
# What had finished is kept: early passed on its first attempt.
expect_json '[(i["name"], i["outcome"], len(i["attempts"])) for i in s["instances"] if i["name"] == "early"]' "[('early', 'passed', 1)]"
grep -qx early "$(json '[i for i in s["instances"] if i["name"] == "early"][0]["attempts"][0]["log"]')" &&
  pass || fail "early's log is gone"
for j in long1 long2 gang; do
  first=$(attempts $j | head -n 1)
  case "$first" in
    "infra:docker engine: waiting for container"*"the connection closed before the answer was complete") pass ;;
    # A gang's hosts start as soon as the go container joins their
    # network, which may be before the engine answers its start.
    "infra:docker engine: starting the gang's go container failed: "*) [ "$j" = gang ] && pass || fail "$j: $first" ;;
    *) fail "$j: first attempt '$first', want infra while waiting" ;;
  esac
  attempts $j | tail -n 1 | grep -q '^passed:' && pass || fail "$j: the last attempt did not pass: $(attempts $j)"
done
# Attempts started while it was down are infra at once, and nothing is
# looked up that no engine could have made.
n=$(cat .tpuci/runs/latest/attempts.jsonl | grep -c '"infra".*connection refused')
[ "$n" -ge 3 ] && pass || fail "$n attempts were refused while the engine was down, want 3 or more"
expect_not_out "may have been created"
expect_not_out "could not remove"
attempts queued | tail -n 1 | grep -q '^passed:' && pass || fail "queued: $(attempts queued)"
# What the dead engine could not remove, tpuci removed once it was back.
left=$(DOCKER_HOST=$PRIVATE_HOST "$TPUCI" gc --dry-run 2>&1)
case "$left" in
  *"nothing to remove"*) pass ;;
  *) fail "tpuci gc finds leftovers: $left" ;;
esac

# 2. The engine never comes back.
cat > never.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "long" { image = "bb", network = "none", run = "echo waiting; sleep 120",
             retries = { attempts = 3, on = { "infra" }, backoff = "1s" } }
job "other" { image = "bb", network = "none", run = "echo waiting; sleep 120" }
LUA
rm -rf .tpuci
t0=$SECONDS
DOCKER_HOST=$PRIVATE_HOST "$TPUCI" run --plain -j 2 never.lua > "$WORK/run.out" 2>&1 &
tp=$!
wait_for 2 && pass || fail "never: the attempts never ran"
private_engine_down "$edir" KILL
wait "$tp"
code=$?
out=$(cat "$WORK/run.out")
expect_code 1 "an engine that never comes back"
[ $((SECONDS - t0)) -lt 60 ] && pass || fail "never: the run took $((SECONDS - t0)) s"
expect_json '[i["outcome"] for i in s["instances"]]' "['infra', 'infra']"
expect_json 'len(s["instances"][0]["attempts"])' 3
expect_out "failed: DOCKER_HOST=$PRIVATE_HOST: connection refused"
for j in long other; do
  expect_out "could not remove container tpuci-$(latest_run_id)-$j-1: DOCKER_HOST=$PRIVATE_HOST: connection refused; run \`tpuci gc\` once the engine is back"
done
expect_not_out "may have been created"
# Once it is back, gc removes what was left.
private_engine_up "$edir" || fail "the engine did not come back for gc"
DOCKER_HOST=$PRIVATE_HOST run_tpuci gc
expect_code 0 "gc"
left=$(DOCKER_HOST=$PRIVATE_HOST "$TPUCI" gc --dry-run 2>&1)
case "$left" in
  *"nothing to remove"*) pass ;;
  *) fail "gc left something: $left" ;;
esac

# 3. Down before the run: nothing runs, exit 3.
private_engine_down "$edir" KILL
rm -rf .tpuci
DOCKER_HOST=$PRIVATE_HOST run_tpuci run --plain never.lua
expect_code 3 "an engine down before the run"
expect_out "cannot reach the Docker Engine (DOCKER_HOST=$PRIVATE_HOST: connection refused)"
finish
