#!/usr/bin/env bash
# Environment errors before anything runs: a missing image, an engine that
# is not there. Both exit 3 with a message that says what to do.
. "$TESTS/docker/lib.sh"

mkdir out
cat > missing.lua <<'LUA'
image "ghost" { ref = "tpuci-test/does-not-exist:1", pull = "never" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "touch /out/ran", mounts = { ["out"] = "/out" } }
job "b" { image = "ghost", run = "true" }
LUA
run_tpuci run missing.lua
expect_code 3 "missing image"
expect_out "tpuci-test/does-not-exist:1"
expect_out "not present"
expect_out "docker load"
[ ! -e out/ran ] && pass || fail "a job ran although an image was missing"

# pull = "missing" tries the registry, which fails here: still a clear error.
sed 's/pull = "never" }/pull = "missing" }/' missing.lua > pull.lua
run_tpuci run pull.lua
expect_code 3 "image that cannot be pulled"
expect_out "image 'tpuci-test/does-not-exist:1' is not present and could not be pulled"
[ ! -e out/ran ] && pass || fail "a job ran although an image could not be pulled"

# The engine refuses a step (here: start, for a network that does not
# exist): outcome infra, the cause names the step and the engine's words,
# and the container that was created is removed all the same.
cat > infra.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "net" { image = "bb", network = "no-such-network", run = "true" }
job "cmd" { image = "bb", cmd = { "/no/such/binary" } }
LUA
tpuci_run run infra.lua
expect_code 1 "an infra failure fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'net': 'infra', 'cmd': 'failed'}"
expect_json '"starting container" in s["instances"][0]["attempts"][0]["cause"] and "no-such-network" in s["instances"][0]["attempts"][0]["cause"]' True
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' 127
expect_no_leftovers "$(latest_run_id)" "$tp" "after an infra failure"

# A mount source that does not exist: a spec error before anything runs
# (exit 2, at the job's line), never a folder the engine makes as root.
cat > mount.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "true" }
job "m" { image = "bb", run = "ls /data",
          mounts = { ["no-such-dir"] = "/data" } }
LUA
runs_before=$(ls .tpuci/runs | wc -l)
run_tpuci run mount.lua
expect_code 2 "missing mount source"
expect_out "mount.lua:3: job 'm': mount source $WORK/no-such-dir: No such file or directory"
[ ! -e no-such-dir ] && pass || fail "the engine created the missing mount source"
[ "$(ls .tpuci/runs | wc -l)" = "$runs_before" ] && pass || fail "a run folder was made for a spec error"

# No engine at all.
cat > ok.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "true" }
LUA
DOCKER_HOST=unix:///nonexistent run_tpuci run ok.lua
expect_code 3 "unreachable engine"
expect_out "unix:///nonexistent"
expect_out "dockerd"
DOCKER_HOST=ssh://somewhere run_tpuci run ok.lua
expect_code 3 "unsupported DOCKER_HOST"
expect_out "ssh://somewhere"
finish
