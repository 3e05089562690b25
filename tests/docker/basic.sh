#!/usr/bin/env bash
# The docker runtime: pass, fail with an exit code, and the environment,
# working directory and mounts a job sees in its container.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", run = "echo hello from the container; echo to stderr >&2", network = "none" }
job "three" { image = "bb", run = "echo about to fail; exit 3", network = "none" }
job "envs" {
  image = "bb", network = "none",
  env = { A = "1", B = "two words" },
  mounts = { ["out"] = "/out" },
  workdir = "/out",
  run = [[
    echo "A=$A B=$B instance=$TPUCI_INSTANCE" > seen.txt
    pwd >> seen.txt
    hostname >> seen.txt
    cat /proc/1/comm >> seen.txt
  ]],
}
LUA
tpuci_run run -j 3 spec.lua
expect_code 1 "one job fails"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'ok': 'passed', 'three': 'failed', 'envs': 'passed'}"
expect_json '[i for i in s["instances"] if i["name"] == "three"][0]["attempts"][0]["exit_code"]' 3
expect_json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["exit_code"]' 0
# The output reached the attempt's log.
log=$(json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["log"]')
case "$log" in /*) ;; *) log="$WORK/$log" ;; esac
if [ -f "$log" ]; then
  grep -q "hello from the container" "$log" && pass || fail "stdout not in $log"
  grep -q "to stderr" "$log" && pass || fail "stderr not in $log"
else
  fail "no log file $log"
fi
# Environment, workdir and mount.
if [ -f out/seen.txt ]; then
  grep -qx "A=1 B=two words instance=envs" out/seen.txt && pass || fail "env: $(head -1 out/seen.txt)"
  sed -n 2p out/seen.txt | grep -qx "/out" && pass || fail "workdir: $(sed -n 2p out/seen.txt)"
  # An init process is PID 1, not the shell.
  sed -n 4p out/seen.txt | grep -qv '^sh$' && pass || fail "no init as PID 1"
else
  fail "the mount did not reach the host (no out/seen.txt)"
fi
expect_no_leftovers "$(latest_run_id)" "$tp" "after a normal run"
finish
