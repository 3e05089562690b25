#!/usr/bin/env bash
# Container jobs as swarm services (--engine swarm on a spec written for
# docker): a job that passes with its output (stdout and stderr) and
# tpuci's variables, one that fails with its exit code, one with limits
# that become the service's Limits and Reservations; the services carry
# tpuci's labels (and so do their containers), are never restarted, and
# are gone afterwards. `tpuci plan --engine swarm` shows the runtime.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", env = { A = "from the job" },
  run = [[echo "hello $A"; echo "to stderr" >&2; echo "instance=$TPUCI_INSTANCE attempt=$TPUCI_ATTEMPT"; printf 'no newline']] }
job "bad" { image = "bb", run = "echo failing; exit 3" }
job "limits" { image = "bb", cpus = 0.5, memory = "32m", run = "sleep 3; echo limited" }
LUA

run_tpuci plan spec.lua
expect_out "runtime:  docker" "plan without --engine"
run_tpuci plan --engine swarm spec.lua
expect_out "runtime:  swarm" "plan --engine swarm"
run_tpuci plan --engine kubernetes spec.lua
expect_code 2 "an unknown engine"

start=$(date +%s.%N)
"$TPUCI" run -j 3 --engine swarm spec.lua > "$WORK/tpuci.out" 2>&1 &
tp=$!
# While it runs: the limits job's service.
svc=""
for _ in $(seq 100); do
  svc=$(api "/services?filters=$(q "tpuci.pid=$tp" "tpuci.instance=limits")" | python3 -c '
import json, sys
s = json.load(sys.stdin)
if s:
    t = s[0]["Spec"]["TaskTemplate"]
    r = t["Resources"]
    print(r["Limits"]["NanoCPUs"], r["Limits"]["MemoryBytes"], r["Reservations"]["NanoCPUs"],
          r["Reservations"]["MemoryBytes"], t["RestartPolicy"]["Condition"],
          s[0]["Spec"]["Labels"]["tpuci.job"], t["ContainerSpec"]["Labels"]["tpuci.job"],
          t["ContainerSpec"]["Init"], list(s[0]["Spec"]["Mode"]))' 2>/dev/null)
  [ -n "$svc" ] && break
  sleep 0.1
done
[ "$svc" = "500000000 33554432 500000000 33554432 none limits limits True ['Replicated']" ] && pass || fail "the limits job's service: '$svc'"
# Its container carries the labels too (a loaded machine may take a while
# to start the task).
for _ in $(seq 600); do
  c=$(count_objects containers "tpuci.pid=$tp" "tpuci.instance=limits")
  [ "$c" = 1 ] && break
  sleep 0.1
done
[ "$c" = 1 ] && pass || fail "containers labelled for the limits job: $c, want 1"
wait "$tp"
code=$?
out=$(cat "$WORK/tpuci.out")
echo "3 jobs: $(echo "$(date +%s.%N) - $start" | bc) s" >&2
expect_code 1 "a failing job fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'ok': 'passed', 'bad': 'failed', 'limits': 'passed'}"
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' 3
log=$WORK/.tpuci/runs/latest/ok/attempt-1.log
grep -qx "hello from the job" "$log" && pass || fail "ok: no stdout line in its log"
grep -qx "to stderr" "$log" && pass || fail "ok: no stderr line in its log"
grep -qx "instance=ok attempt=1" "$log" && pass || fail "ok: tpuci's variables"
grep -q "no newline" "$log" && pass || fail "ok: the last partial line"
grep -qx "limited" "$WORK/.tpuci/runs/latest/limits/attempt-1.log" && pass || fail "limits: its output"
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "3 swarm jobs"

# runtime = "swarm" needs an image, like docker.
cat > noimage.lua <<'LUA'
job "x" { runtime = "swarm", run = "true" }
LUA
run_tpuci plan noimage.lua
expect_code 2 "swarm without an image"
expect_out "'swarm' needs an image"
finish
