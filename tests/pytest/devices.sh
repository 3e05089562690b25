#!/usr/bin/env bash
# The device check per attempt (issue 36.1, docs/pytest.md "The device
# check"): before the first test the plugin asks jax and torch_xla (small
# stand-ins, tests/pytest/plugin/standin/, on PYTHONPATH) how many
# devices of which platform they see. One that does not see the
# topology's ends the attempt as infra with the numbers, and no test of
# that attempt counts; one that does passes. A command job with
# expect_devices runs the same check before its command, which runs only
# after a match.
. "$TESTS/e2e/lib.sh"
# The TPU VM's checks below run tpuci in a mount namespace whose /dev has
# a TPU device node (tpu_vm).
unshare -m true 2> /dev/null || { echo "SKIP: no mount namespaces here (unshare -m)"; exit 77; }
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir tests
cat > tests/test_a.py <<'PY'
def test_one():
    pass


def test_two():
    pass
PY
STANDIN=$TESTS/pytest/plugin/standin
# spec TOPOLOGY_EMULATE ENV: one pytest job on a v4-8 (4 chips, 4 devices).
spec() {
  cat > spec.lua <<LUA
topology "v4-8" { emulate = "$1" }
job "suite" {
  workdir = tpuci.spec_dir, timeout = "60s", topology = "v4-8",
  env = { PYTHONPATH = "$STANDIN", $2 },
  retries = { attempts = 2, on = { "infra" } },
  pytest = { python = "/usr/bin/python3", args = { "tests/" } },
}
LUA
}
attempts='[(a["outcome"], a.get("cause")) for i in s["instances"] for a in i["attempts"]]'
tests_counted='[i.get("tests") for i in s["instances"]]'

# Emulated JAX, a framework that sees 8 devices: infra twice (the retry
# on infra checks again), the numbers in the cause, no test counted.
spec jax 'STANDIN_JAX_DEVICES = "8"'
run_tpuci run spec.lua
expect_code 1 "jax sees 8 of 4"
expect_out "jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0" "console"
expect_json "$attempts" "[('infra', 'device check: jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0'), ('infra', 'device check: jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0')]"
expect_json 's["instances"][0]["outcome"]' "infra"
expect_json 'len(s["instances"][0].get("tests", []))' "0"
[ ! -e .tpuci/runs/latest/suite/results-1/junit.xml ] && pass || fail "a junit.xml of the attempt that failed its check"
grep -q "no test runs" .tpuci/runs/latest/suite/attempt-1.log && pass || fail "the log does not say the check failed"

# The same under --real (issue 42.4): this machine is no TPU VM. The run
# starts with doctor's TPU checks and says so, and the attempt's device
# check finds no TPU device node before it asks jax: infra, not failed.
spec jax 'STANDIN_JAX_DEVICES = "8", STANDIN_JAX_PLATFORM = "cpu"'
run_tpuci run --real spec.lua
expect_code 1 "--real, jax on cpu"
expect_out "warning: --real: this machine is not the TPU the spec expects: this machine has no TPU device (/dev/accel*, /dev/vfio/<group>)"
expect_out "no TPU device node (/dev/accel*, /dev/vfio/<group>) on worker-0, expected 4 TPU chips: this is not a TPU VM" "console under --real"
expect_json "sorted(set(i['outcome'] for i in s['instances']))" "['infra']"

# Right: jax sees the 4 emulated devices; both tests pass.
spec jax 'X = "1"'
run_tpuci run spec.lua
expect_code 0 "jax sees 4 of 4"
expect_json 's["instances"][0]["outcome"]' "passed"
expect_json '[t["outcome"] for t in s["instances"][0]["tests"]]' "['passed', 'passed']"
grep -q "tpuci: device check: jax sees 4 cpu devices on worker-0, as expected" \
  .tpuci/runs/latest/suite/attempt-1.log && pass || fail "the log does not say what jax saw"

# tpu_vm ARGS...: tpuci ARGS in a mount namespace of its own whose /dev
# has a TPU device node (/dev/accel0) beside the usual ones: a TPU VM's
# device nodes, for the checks below that stand in for its frameworks.
tpu_vm() {
  out=$(unshare -m sh -c '
    mount -t tmpfs tpuci-dev /dev &&
    mknod /dev/null c 1 3 && mknod /dev/zero c 1 5 && mknod /dev/full c 1 7 &&
    mknod /dev/random c 1 8 && mknod /dev/urandom c 1 9 && mknod /dev/tty c 5 0 &&
    chmod 666 /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty &&
    ln -s /proc/self/fd /dev/fd && mkdir /dev/shm && mknod /dev/accel0 c 1 3 &&
    exec "$@"' tpuci "$TPUCI" "$@" 2>&1)
  code=$?
}

# --real, both frameworks import and see 4 TPU chips: passes.
spec jax 'STANDIN_JAX_DEVICES = "4", STANDIN_XLA_DEVICES = "4"'
tpu_vm run --real spec.lua
expect_code 0 "--real, both see 4 TPU chips"
grep -q "torch_xla sees 4 tpu devices on worker-0, as expected" \
  .tpuci/runs/latest/suite/attempt-1.log && pass || fail "torch_xla was not asked under --real"

# torch_xla under the pjrt emulation, seeing 2 of 4 CPU devices.
spec pjrt 'STANDIN_XLA_DEVICES = "2"'
run_tpuci run spec.lua
expect_code 1 "torch_xla sees 2 of 4"
expect_out "torch_xla sees 2 cpu devices, expected 4 cpu devices (emulated) on worker-0"

# A framework that cannot list its devices (a TPU another process holds).
spec jax 'STANDIN_JAX_FAILS = "1"'
tpu_vm run --real spec.lua
expect_code 1 "jax cannot list"
expect_out "jax cannot list its devices on worker-0: RuntimeError: Unable to initialize backend 'tpu'"

# Neither imports: said once, and the tests run.
sed -i "s|PYTHONPATH = \"$STANDIN\", ||" spec.lua
tpu_vm run --real spec.lua
expect_code 0 "neither imports"
[ "$(grep -c 'neither jax nor torch_xla imports here' .tpuci/runs/latest/suite/attempt-1.log)" = 1 ] &&
  pass || fail "'neither imports' is not said once"

# expect_devices = false: no check.
spec jax 'STANDIN_JAX_DEVICES = "8"'
sed -i 's|timeout = "60s",|timeout = "60s", expect_devices = false,|' spec.lua
run_tpuci run spec.lua
expect_code 0 "expect_devices = false"

# A bad value, or a command job's: exit 2 naming file:line.
printf 'topology "v4-8" {}\njob "p" { topology = "v4-8", expect_devices = "jx", pytest = {} }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "expect_devices = \"jx\""
expect_out "bad.lua:2: job 'p': expect_devices: unknown framework 'jx', did you mean 'jax'?"
printf 'topology "v4-8" {}\njob "c" { run = "true", expect_devices = "jax" }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "a command job's expect_devices without a topology"
expect_out "bad.lua:2: job 'c': expect_devices: needs a topology"

# A command job asks for the check with expect_devices: it runs before
# the command (tpuci_command.py), which runs only after a match and
# would leave ran.txt.
# cspec TOPOLOGY_EMULATE EXPECT ENV: one command job on a v4-8.
cspec() {
  cat > spec.lua <<LUA
topology "v4-8" { emulate = "$1" }
job "cmd" {
  workdir = tpuci.spec_dir, timeout = "60s", topology = "v4-8", expect_devices = "$2",
  env = { PYTHONPATH = "$STANDIN", $3 },
  retries = { attempts = 2, on = { "infra" } },
  run = "echo the command ran > ran.txt; exit \${EXIT:-0}",
}
LUA
  rm -f ran.txt
}
mismatch="jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0"

# Right: jax sees the 4 emulated devices, the command runs and its exit
# status is the attempt's.
cspec jax jax 'X = "1"'
run_tpuci run spec.lua
expect_code 0 "command: jax sees 4 of 4"
expect_json "$attempts" "[('passed', 'exit 0')]"
[ -e ran.txt ] && pass || fail "command: the command did not run after a match"
grep -q "tpuci: device check: jax sees 4 cpu devices on worker-0, as expected" \
  .tpuci/runs/latest/cmd/attempt-1.log && pass || fail "command: the log does not say what jax saw"
cspec jax jax 'EXIT = "3"'
run_tpuci run spec.lua
expect_code 1 "command: exit 3 after a match"
expect_json 's["instances"][0]["attempts"][0]["exit_code"]' "3"
expect_json 's["instances"][0]["outcome"]' "failed"

# Wrong: infra twice (the retry on infra checks again), the numbers in
# the cause, the command never run.
cspec jax jax 'STANDIN_JAX_DEVICES = "8"'
run_tpuci run spec.lua
expect_code 1 "command: jax sees 8 of 4"
expect_out "[infra  ] cmd: device check: $mismatch" "command: console"
expect_json "$attempts" "[('infra', 'device check: $mismatch'), ('infra', 'device check: $mismatch')]"
expect_json 's["instances"][0]["outcome"]' "infra"
[ ! -e ran.txt ] && pass || fail "command: the command ran after a mismatch"
grep -q "$mismatch: the command does not run" .tpuci/runs/latest/cmd/attempt-1.log &&
  pass || fail "command: the log does not say the check failed"

# The same under --real: it expects the TPU chips.
cspec jax auto 'STANDIN_JAX_DEVICES = "8", STANDIN_JAX_PLATFORM = "cpu"'
tpu_vm run --real spec.lua
expect_code 1 "command: --real, jax on cpu"
expect_out "[infra  ] cmd: device check: jax sees 8 cpu devices, expected 4 TPU chips on worker-0" \
  "command: console under --real"
[ ! -e ran.txt ] && pass || fail "command: the command ran under --real after a mismatch"

# tpuci plan says what it expects, before the command.
run_tpuci plan spec.lua
expect_out "devices:  jax, if it imports, must see 4 cpu devices (4 chips) before the command" \
  "command: plan"

# "auto" where nothing imports: said once, and the command runs.
cspec jax auto 'X = "1"'
sed -i "s|PYTHONPATH = \"$STANDIN\", ||" spec.lua
tpu_vm run --real spec.lua
expect_code 0 "command: nothing imports under auto"
[ "$(grep -c 'neither jax nor torch_xla imports here' .tpuci/runs/latest/cmd/attempt-1.log)" = 1 ] &&
  pass || fail "command: 'neither imports' is not said once"
[ -e ran.txt ] && pass || fail "command: the command did not run when nothing imports"

# A named framework that does not import: infra, the command not run.
cspec pjrt torch_xla 'X = "1"'
sed -i "s|PYTHONPATH = \"$STANDIN\", ||" spec.lua
run_tpuci run spec.lua
expect_code 1 "command: torch_xla does not import"
expect_out "[infra  ] cmd: device check: torch_xla does not import, expected 4 cpu devices (emulated) on worker-0"
[ ! -e ran.txt ] && pass || fail "command: the command ran without torch_xla"

# In a container: an image FROM tpuci-test/python:1 with the stand-ins
# installed (the real packages are not in Debian). Skipped without an
# engine or the image.
sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
if curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping > /dev/null 2>&1 &&
  docker image inspect tpuci-test/python:1 > /dev/null 2>&1; then
  tag="tpuci-devices-test/python:$$"
  trap 'docker rmi -f "$tag" > /dev/null 2>&1; rm -rf "$WORK"' EXIT
  mkdir ctx && cp -r "$STANDIN" ctx/standin
  printf 'FROM tpuci-test/python:1\nCOPY standin /opt/standin\nENV PYTHONPATH=/opt/standin\n' > ctx/Dockerfile
  DOCKER_BUILDKIT=0 docker build -q -t "$tag" ctx > /dev/null 2>&1 || fail "docker build"
  # cimage DEVICES: the job in the image, jax seeing DEVICES.
  cimage() {
    cat > spec.lua <<LUA
image "py" { ref = "$tag", pull = "never" }
topology "v4-8" { emulate = "jax" }
job "suite" { image = "py", topology = "v4-8", timeout = "60s", workdir = "/src",
              mounts = { ["tests"] = { target = "/src/tests", readonly = true } },
              env = { STANDIN_JAX_DEVICES = "$1" }, pytest = { args = { "tests/" } } }
LUA
  }
  cimage 8
  run_tpuci run --no-cache spec.lua
  expect_code 1 "container: jax sees 8 of 4"
  expect_out "[infra  ] suite: device check: jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-0" "container console"
  expect_json 'len(s["instances"][0].get("tests", []))' "0"
  cimage 4
  run_tpuci run --no-cache spec.lua
  expect_code 0 "container: jax sees 4 of 4"
  expect_json '[t["outcome"] for t in s["instances"][0]["tests"]]' "['passed', 'passed']"
  # A command job in the image: the check reaches the container with the
  # command, and its verdict comes back through the results mount.
  mkdir -p out
  # ccimage DEVICES: the command job in the image, jax seeing DEVICES.
  ccimage() {
    cat > spec.lua <<LUA
image "py" { ref = "$tag", pull = "never" }
topology "v4-8" { emulate = "jax" }
job "cmd" { image = "py", topology = "v4-8", timeout = "60s", expect_devices = "jax",
            mounts = { ["out"] = { target = "/out" } },
            env = { STANDIN_JAX_DEVICES = "$1" }, cmd = { "touch", "/out/ran" } }
LUA
    rm -f out/ran
  }
  ccimage 8
  run_tpuci run --no-cache spec.lua
  expect_code 1 "container command: jax sees 8 of 4"
  expect_out "[infra  ] cmd: device check: $mismatch" "container command console"
  [ ! -e out/ran ] && pass || fail "container command: the command ran after a mismatch"
  ccimage 4
  run_tpuci run --no-cache spec.lua
  expect_code 0 "container command: jax sees 4 of 4"
  [ -e out/ran ] && pass || fail "container command: the command did not run after a match"
  # The same as a swarm task, whose results folder is a tmpfs of its
  # node: the verdict comes back through the log.
  if [ "$(docker info --format '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}' 2>/dev/null)" = "active true" ]; then
    ccimage 8
    sed -i 's|job "cmd" {|job "cmd" { runtime = "swarm",|' spec.lua
    run_tpuci run --no-cache spec.lua
    expect_code 1 "swarm command: jax sees 8 of 4"
    expect_out "[infra  ] cmd: device check: $mismatch" "swarm command console"
    [ ! -e out/ran ] && pass || fail "swarm command: the command ran after a mismatch"
    ccimage 4
    sed -i 's|job "cmd" {|job "cmd" { runtime = "swarm",|' spec.lua
    run_tpuci run --no-cache spec.lua
    expect_code 0 "swarm command: jax sees 4 of 4"
    [ -e out/ran ] && pass || fail "swarm command: the command did not run after a match"
  else
    echo "note: the engine is no swarm manager: the swarm part did not run"
  fi
else
  echo "note: no engine or no tpuci-test/python:1: the container part did not run"
fi
finish
