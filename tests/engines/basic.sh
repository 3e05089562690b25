#!/usr/bin/env bash
# Container jobs on each engine (engine.sh): one that passes with its
# output (stdout, stderr, a last partial line) and tpuci's variables, one
# that fails with its exit code, one with the environment, working
# directory and mounts a job sees and an init process as PID 1, one with
# cpu and memory limits; `tpuci plan` names the runtime; every instance
# of names that collide once made safe (a 300-character job name, matrix
# values with '/' and '..') runs and logs in its own folder of the run
# folder; nothing is left on the engine.
# What only one engine has: on podman, the open-files and process limits
# tpuci asks for when the service could not give podman's own defaults
# (it lacks CAP_SYS_RESOURCE here); on swarm, the limits job's service
# (Limits and Reservations, never restarted, tpuci's labels on it and its
# container, an init), an unknown --engine, and runtime = "swarm" without
# an image.
. "$TESTS/engines/engine.sh"

mkdir out
spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", @NONET@ env = { A = "from the job" },
  run = [[echo "hello $A"; echo "to stderr" >&2; echo "instance=$TPUCI_INSTANCE attempt=$TPUCI_ATTEMPT"]] }
-- A job of its own: podman's attach stream may bring stderr after all of
-- stdout, which would glue "to stderr" to a partial line.
job "partial" { image = "bb", @NONET@ run = "echo first; printf 'no newline'" }
job "three" { image = "bb", @NONET@ run = "echo about to fail; exit 3" }
job "envs" {
  image = "bb", @NONET@
  env = { A = "1", B = "two words" },
  mounts = { ["out"] = "/out" },
  workdir = "/out",
  run = [[
    echo "A=$A B=$B instance=$TPUCI_INSTANCE" > seen.txt
    pwd >> seen.txt
    cat /proc/1/comm >> seen.txt
    echo "$(ulimit -Hn) $(ulimit -Hu)" >> seen.txt
  ]],
}
-- It runs until the test has looked at its service (out/go, at most
-- two minutes): a fixed sleep ended before a loaded machine looked.
job "limits" { image = "bb", @NONET@ cpus = 0.5, memory = "32m", mounts = { ["out"] = "/out" },
  run = "i=0; while [ ! -e /out/go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; echo limited" }
LUA

engine_run plan spec.lua
runtime=docker
[ "$ENGINE" = swarm ] && runtime=swarm
expect_out "runtime:  $runtime" "plan"

engine_start run -j 5 spec.lua
if [ "$ENGINE" = swarm ]; then
  # While it runs: the limits job's service, and its container.
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
  [ "$svc" = "500000000 33554432 500000000 33554432 none limits limits True ['Replicated']" ] && pass ||
    fail "the limits job's service: '$svc'"
  wait_containers 1 "tpuci.pid=$tp" "tpuci.instance=limits"
  [ "$c" = 1 ] && pass || fail "containers labelled for the limits job: $c, want 1"
fi
touch out/go
engine_wait
expect_code 1 "one job fails"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'ok': 'passed', 'partial': 'passed', 'three': 'failed', 'envs': 'passed', 'limits': 'passed'}"
expect_json '[i for i in s["instances"] if i["name"] == "three"][0]["attempts"][0]["exit_code"]' 3
expect_json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["exit_code"]' 0
# The output reached the attempt's log, whole.
log=$(json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["log"]')
case "$log" in /*) ;; *) log="$WORK/$log" ;; esac
if [ -f "$log" ]; then
  grep -qx "hello from the job" "$log" && pass || fail "ok: no stdout line in $log"
  grep -qx "to stderr" "$log" && pass || fail "ok: no stderr line in $log"
  grep -qx "instance=ok attempt=1" "$log" && pass || fail "ok: tpuci's variables"
else
  fail "no log file $log"
fi
grep -qx "no newline" "$WORK/.tpuci/runs/latest/partial/attempt-1.log" && pass || fail "partial: the last partial line"
grep -qx "limited" "$WORK/.tpuci/runs/latest/limits/attempt-1.log" && pass || fail "limits: its output"
# Environment, workdir, mount, init.
if [ -f out/seen.txt ]; then
  grep -qx "A=1 B=two words instance=envs" out/seen.txt && pass || fail "env: $(head -1 out/seen.txt)"
  sed -n 2p out/seen.txt | grep -qx "/out" && pass || fail "workdir: $(sed -n 2p out/seen.txt)"
  sed -n 3p out/seen.txt | grep -qv '^sh$' && pass || fail "no init as PID 1"
  if [ "$ENGINE" = podman ]; then
    # The service's own hard limits (capped at podman's default), which
    # tpuci put in HostConfig.Ulimits; without them every start fails
    # ("error setting rlimit type 7: operation not permitted").
    pid=$(cat "$PM/service.pid")
    want=$(awk '/^Max open files/ { n = $5 } /^Max processes/ { p = $4 }
                END { if (n > 1048576) n = 1048576; if (p > 1048576) p = 1048576; print n, p }' "/proc/$pid/limits")
    caps=$(awk '/^CapEff/ { print $2 }' "/proc/$pid/status")
    if (( (0x$caps >> 24) & 1 )); then
      pass # podman can raise limits itself; nothing to compare
    else
      sed -n 4p out/seen.txt | grep -qx "$want" && pass || fail "limits in the container: '$(sed -n 4p out/seen.txt)', want '$want'"
    fi
  fi
else
  fail "the mount did not reach the host (no out/seen.txt)"
fi
expect_gone "$(latest_run_id)" "$tp" "after a normal run"

# Names for containers, services and folders.
spec names.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job (string.rep("x", 300)) { image = "bb", @NONET@ run = "echo out:long" }
job "lint/ruff" { image = "bb", @NONET@ run = "echo out:lint/ruff" }
job "lint_ruff" { image = "bb", @NONET@ run = "echo out:lint_ruff" }
job "m" { image = "bb", @NONET@ run = "echo out:${matrix.v}",
          matrix = { v = { "../../../escape", "/abs" } } }
LUA
rm -rf .tpuci
engine_run run --plain -j 3 names.lua
expect_code 0 "names in containers"
check=$(/usr/bin/python3 - "$(readlink -f .tpuci/runs/latest)" <<'PY' 2>&1
import json, os, sys
run = sys.argv[1]
s = json.load(open(os.path.join(run, "summary.json")))
folders = set()
for inst in s["instances"]:
    real = os.path.realpath(inst["attempts"][0]["log"])
    folder = os.path.dirname(real)
    assert os.path.dirname(folder) == run, ("outside the run folder", inst["name"], real)
    assert folder not in folders, ("shared folder", inst["name"])
    folders.add(folder)
    want = "out:" + inst["matrix"].get("v", "long" if inst["name"] == "x" * 300 else inst["name"])
    assert open(real).read().splitlines()[0] == want, (inst["name"], want)
assert len(folders) == 5, folders
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "names: $check"
[ ! -e "$WORK/.tpuci/escape" ] && [ ! -e "$WORK/escape" ] && [ ! -e /abs ] && pass ||
  fail "a matrix value escaped the run folder"
expect_gone "$(latest_run_id)" "$tp" "after the names run"

if [ "$ENGINE" = swarm ]; then
  run_tpuci plan --engine kubernetes spec.lua
  expect_code 2 "an unknown engine"
  cat > noimage.lua <<'LUA'
job "x" { runtime = "swarm", run = "true" }
LUA
  run_tpuci plan noimage.lua
  expect_code 2 "swarm without an image"
  expect_out "'swarm' needs an image"
fi
finish
