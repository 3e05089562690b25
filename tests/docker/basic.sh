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

# Names for containers and folders: a 300-character job name, names that
# collide once made safe, matrix values with '/' and '..': every instance
# runs in its own container and logs into its own folder in the run folder.
cat > names.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job (string.rep("x", 300)) { image = "bb", network = "none", run = "echo out:long" }
job "lint/ruff" { image = "bb", network = "none", run = "echo out:lint/ruff" }
job "lint_ruff" { image = "bb", network = "none", run = "echo out:lint_ruff" }
job "m" { image = "bb", network = "none", run = "echo out:${matrix.v}",
          matrix = { v = { "../../../escape", "/abs" } } }
LUA
tpuci_run run --plain -j 3 names.lua
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
[ "$check" = ok ] && pass || fail "names in containers: $check"
[ ! -e "$WORK/.tpuci/escape" ] && [ ! -e "$WORK/escape" ] && [ ! -e /abs ] && pass ||
  fail "a matrix value escaped the run folder"
expect_no_leftovers "$(latest_run_id)" "$tp" "after the names run"
finish
