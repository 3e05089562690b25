#!/usr/bin/env bash
# What stops a swarm run before anything runs: a job with what a Swarm
# service cannot have (privileged, devices, gpus, ipc), exit 2; and with
# exit 3 and one line:
# a job that no node can fit (cpus or memory, named with file:line), an
# engine that is not in a swarm (a dockerd of the test's own in a network
# namespace). `tpuci doctor` says the same, and what it found right. The
# errors every engine has (images, an infra attempt, an unreachable
# engine) are tests/engines/errors.sh's.
. "$TESTS/swarm/lib.sh"
. "$TESTS/swarm/netns.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "fine" { image = "bb", runtime = "swarm", run = "true" }
job "big" { image = "bb", runtime = "swarm", cpus = 512, run = "true" }
LUA
tpuci_run run spec.lua
expect_code 3 "a job no node can fit"
expect_out "spec.lua:3: job 'big': no swarm worker can fit it: it needs cpus = 512"
[ "$(count_services "tpuci.pid=$tp")" = 0 ] && pass || fail "services were made for a run that cannot fit"

# What a Swarm service cannot have: a spec error (exit 2) naming the key
# and the runtime, when the spec says swarm and when --engine swarm moves
# a docker job there; nothing is made.
cat > accel.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "priv" { image = "bb", runtime = "swarm", privileged = true, run = "true" }
LUA
tpuci_run run accel.lua
expect_code 2 "privileged with runtime = \"swarm\""
expect_out "accel.lua:2: job 'priv': privileged: not available with runtime 'swarm': a Swarm service cannot be privileged"
cat > moved.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "fine" { image = "bb", run = "true", shm_size = "64m", sysctls = { ["net.core.somaxconn"] = 1024 } }
job "tpu" { image = "bb", run = "true", devices = { "/dev/accel*" } }
LUA
tpuci_run run --engine swarm moved.lua
expect_code 2 "devices on a docker job moved to the swarm"
expect_out "moved.lua:3: job 'tpu': devices: not available with runtime 'swarm': a Swarm service cannot be given host devices"
[ "$(count_services "tpuci.pid=$tp")" = 0 ] && pass || fail "services were made for a run with a refused option"
tpuci_run run --engine swarm --only fine moved.lua
expect_code 0 "shm_size and sysctls on the swarm"

cat > mem.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "v4-32" {}
job "huge" { image = "bb", runtime = "swarm", topology = "v4-32", memory = "4t", run = "true" }
LUA
tpuci_run run -j 4 mem.lua
expect_code 3 "a gang whose hosts no node can fit"
expect_out "mem.lua:3: job 'huge': no swarm worker can fit it: its 4 hosts need memory = 4096.00 GiB each"

run_tpuci doctor spec.lua
expect_code 3 "doctor: a job no node can fit"
expect_out "ok   swarm: "
expect_out "(manager, this engine): ready"
expect_out "FAIL swarm fit: spec.lua:3: job 'big'"
run_tpuci doctor --engine swarm mem.lua
expect_out "FAIL swarm fit: mem.lua:3"

# An engine that is not in a swarm.
if [ "$(id -u)" = 0 ] && command -v nsenter >/dev/null && command -v dockerd >/dev/null; then
  ns=tse$$
  trap 'node_down "$WORK" "$ns"; rm -rf "$WORK"' EXIT
  if node_up "$WORK" "$ns"; then
    DOCKER_HOST=$NODE_HOST tpuci_run run spec.lua
    expect_code 3 "an engine that is not in a swarm"
    expect_out "is not part of a swarm; make it one with \`docker swarm init\`"
    DOCKER_HOST=$NODE_HOST run_tpuci doctor spec.lua
    expect_code 3 "doctor on an engine that is not in a swarm"
    expect_out "FAIL swarm: the Docker Engine at DOCKER_HOST=unix://"
    # Without swarm jobs, doctor says nothing about swarms.
    DOCKER_HOST=$NODE_HOST run_tpuci doctor
    expect_not_out "swarm"
  else
    fail "could not start an engine in a network namespace"
  fi
  node_down "$WORK" "$ns"
else
  echo "not root or no nsenter/dockerd: the not-a-swarm check is left out" >&2
fi
finish
