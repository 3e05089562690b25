#!/usr/bin/env bash
# Errors on each engine (engine.sh): an image that is missing with
# pull = "never" or cannot be pulled, and an engine that is not there or
# not one tpuci speaks to, stop the run before anything runs (exit 3, a
# line that says what to do); a mount source that does not exist is a
# spec error at the job's line (exit 2, no run folder, nothing made); a
# step the engine refuses (a network it does not know) is an infra
# attempt whose cause names the step and the engine's words, and a
# command that cannot be executed is a failed one; nothing is left.
# What only one engine has stays in tests/<engine>/errors.sh (podman's
# init binary; the swarm's fit, options and not-a-swarm checks).
. "$TESTS/engines/engine.sh"

mkdir out
spec missing.lua <<'LUA'
image "ghost" { ref = "tpuci-test/does-not-exist:1", pull = "never" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", @NONET@ run = "touch /out/ran", mounts = { ["out"] = "/out" } }
job "b" { image = "ghost", @NONET@ run = "true" }
LUA
engine_run run missing.lua
expect_code 3 "missing image"
expect_out "image 'tpuci-test/does-not-exist:1' is not present"
expect_out "pull = \"never\" (image \"ghost\" at missing.lua:1)"
expect_out "docker load"
[ ! -e out/ran ] && pass || fail "a job ran although an image was missing"

# pull = "missing" tries the registry, which fails here: still a clear error.
sed 's/pull = "never" }/pull = "missing" }/' missing.lua > pull.lua
engine_run run pull.lua
expect_code 3 "image that cannot be pulled"
expect_out "image 'tpuci-test/does-not-exist:1' is not present"
expect_out "and could not be pulled"
[ ! -e out/ran ] && pass || fail "a job ran although an image could not be pulled"
[ "$(engine_jobs "tpuci.pid=$tp")" = 0 ] && pass || fail "something was made for a run that could not start"

# The engine refuses a step (a network it does not know): infra, the
# cause names the step and the network, and what was made is removed.
spec infra.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "net" { image = "bb", network = "tpuci-no-such-network", run = "true" }
job "cmd" { image = "bb", @NONET@ cmd = { "/no/such/binary" } }
LUA
engine_run run infra.lua
expect_code 1 "an infra failure fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'net': 'infra', 'cmd': 'failed'}"
WANT=$ENGINE_NONET_STEP expect_json '[__import__("os").environ["WANT"] in c and "tpuci-no-such-network" in c for c in [s["instances"][0]["attempts"][0]["cause"]]][0]' True
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' "$ENGINE_NOEXEC_EXIT"
expect_gone "$(latest_run_id)" "$tp" "after an infra failure"

# A mount source that does not exist: a spec error before anything runs
# (exit 2, at the job's line), never a folder the engine makes as root.
spec mount.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", @NONET@ run = "true" }
job "m" { image = "bb", @NONET@ run = "ls /data",
          mounts = { ["no-such-dir"] = "/data" } }
LUA
runs_before=$(ls .tpuci/runs | wc -l)
engine_run run mount.lua
expect_code 2 "missing mount source"
expect_out "mount.lua:3: job 'm': mount source $WORK/no-such-dir: No such file or directory"
[ ! -e no-such-dir ] && pass || fail "the engine created the missing mount source"
[ "$(ls .tpuci/runs | wc -l)" = "$runs_before" ] && pass || fail "a run folder was made for a spec error"
[ "$(engine_jobs "tpuci.pid=$tp")" = 0 ] && pass || fail "something was made for a spec error"

# No engine at all, and one tpuci does not speak to.
spec ok.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", @NONET@ run = "true" }
LUA
DOCKER_HOST=unix:///nonexistent engine_run run ok.lua
expect_code 3 "unreachable engine"
expect_out "cannot reach the"
expect_out "unix:///nonexistent"
expect_out "dockerd"
DOCKER_HOST=ssh://somewhere engine_run run ok.lua
expect_code 3 "unsupported DOCKER_HOST"
expect_out "ssh://somewhere"
finish
