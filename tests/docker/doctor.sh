#!/usr/bin/env bash
# `tpuci doctor SPEC` starts one tiny container on each network mode the
# spec's container jobs use (the default bridge, "none", a gang's private
# network, a named network) and reports each: a network that does not
# exist, or a default bridge that is broken, is a FAIL with exit 3 before
# any run, not an infra failure of every attempt. Doctor leaves nothing
# behind. The broken bridge is made on a private engine of the test's own
# (its bridge deleted under it).
. "$TESTS/docker/lib.sh"

probe_objects() { # containers and networks the probes made (any pid)
  echo $(( $(count_objects containers tpuci.instance=network-probe) +
           $(count_objects networks tpuci.instance=network-probe) ))
}

cat > good.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "plain" { image = "bb", cmd = { "true" } }
job "isolated" { image = "bb", network = "none", cmd = { "true" } }
job "gang" { image = "bb", topology = "v4-16", cmd = { "true" } }
LUA
run_tpuci doctor good.lua
expect_code 0 "doctor on three working network modes"
expect_out "ok   network the engine's default (bridge): a container started on it" "the default bridge is checked"
expect_out 'ok   network "none": a container started on it' "network none is checked"
expect_out "ok   network a gang's private network: a container started on it" "a gang's network is checked"
[ "$(probe_objects)" = 0 ] && pass || fail "doctor left probe objects"

# A named network the engine does not have.
cat > missing.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "plain" { image = "bb", cmd = { "true" } }
job "elsewhere" { image = "bb", network = "tpuci-test-no-such-net", cmd = { "true" } }
LUA
run_tpuci doctor missing.lua
expect_code 3 "doctor with a network that does not exist"
expect_out 'FAIL network "tpuci-test-no-such-net"' "the missing network is named"
expect_out "ok   network the engine's default (bridge)" "the other mode is still checked"
[ "$(probe_objects)" = 0 ] && pass || fail "doctor left probe objects after a failure"

# Local jobs only: no container, no network check.
cat > local.lua <<'LUA'
job "here" { cmd = { "true" } }
LUA
run_tpuci doctor local.lua
expect_not_out "network the engine's default" "no network check without container jobs"

# A broken default bridge, on a private engine.
edir=$WORK/engine
trap 'private_engine_down "$edir" TERM; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT
if private_engine_up "$edir"; then
  ip link del "$(cat "$edir/bridge")"
  DOCKER_HOST=$PRIVATE_HOST run_tpuci doctor good.lua
  expect_code 3 "doctor with the default bridge deleted"
  expect_out "FAIL network the engine's default (bridge)" "the broken bridge is reported"
  expect_out 'ok   network "none"' "network none still works"
else
  fail "cannot start a private engine"
fi
finish
