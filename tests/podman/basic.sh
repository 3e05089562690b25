#!/usr/bin/env bash
# The docker runtime against podman's Docker-compatible service: a job
# that passes, one that fails with its exit code, the output, environment,
# working directory and mounts a job sees, an init process as PID 1, and
# the open-files and process limits tpuci asks for when the service could
# not give podman's own defaults (it lacks CAP_SYS_RESOURCE here).
. "$TESTS/podman/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", run = "echo hello from podman; echo to stderr >&2", network = "none" }
job "three" { image = "bb", run = "echo about to fail; exit 3", network = "none" }
job "envs" {
  image = "bb", network = "none",
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
LUA
tpuci_run run -j 3 spec.lua
expect_code 1 "one job fails"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'ok': 'passed', 'three': 'failed', 'envs': 'passed'}"
expect_json '[i for i in s["instances"] if i["name"] == "three"][0]["attempts"][0]["exit_code"]' 3
expect_json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["exit_code"]' 0
# The attach stream brought stdout and stderr whole.
log=$(json '[i for i in s["instances"] if i["name"] == "ok"][0]["attempts"][0]["log"]')
case "$log" in /*) ;; *) log="$WORK/$log" ;; esac
if [ -f "$log" ]; then
  grep -q "hello from podman" "$log" && pass || fail "stdout not in $log"
  grep -q "to stderr" "$log" && pass || fail "stderr not in $log"
else
  fail "no log file $log"
fi
if [ -f out/seen.txt ]; then
  grep -qx "A=1 B=two words instance=envs" out/seen.txt && pass || fail "env: $(head -1 out/seen.txt)"
  sed -n 2p out/seen.txt | grep -qx "/out" && pass || fail "workdir: $(sed -n 2p out/seen.txt)"
  sed -n 3p out/seen.txt | grep -qv '^sh$' && pass || fail "no init as PID 1"
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
else
  fail "the mount did not reach the host (no out/seen.txt)"
fi
expect_no_leftovers "$(latest_run_id)" "$tp" "after a normal run"
finish
