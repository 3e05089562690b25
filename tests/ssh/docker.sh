#!/usr/bin/env bash
# Containers on a slice's workers (docs/ssh.md, "Containers on the
# workers"): a job with `hosts` and an `image` runs each gang host as a
# container of its worker's own engine, made with the worker's docker CLI
# over the host's session, against sshds in network namespaces whose
# sessions reach the shared engine (tests/ssh/lib.sh). The accelerator
# options reach every container (read back from `docker inspect` while it
# runs), the network is the worker's (--network host) and the rendezvous
# its address, a pytest gang's JUnit comes back from the workers, a
# timeout and Ctrl-C leave no container and no process on any worker, a
# container docker cannot start is infra with docker's words, a worker
# whose docker does not work stops the run before it starts, and
# --keep-failed keeps a failed host's container for `tpuci gc SPEC`.
. "$TESTS/e2e/lib.sh"
command -v docker > /dev/null || { echo "SKIP: no docker CLI"; exit 77; }
engine=${TPUCI_TEST_ENGINE:-unix:///var/tmp/tpuci-engine/docker.sock}
DOCKER_HOST=$engine docker version > /dev/null 2>&1 || { echo "SKIP: no engine at $engine"; exit 77; }
for img in tpuci-test/busybox:1 tpuci-test/python:1; do
  DOCKER_HOST=$engine docker image inspect "$img" > /dev/null 2>&1 || { echo "SKIP: no image $img"; exit 77; }
done
SSH_SSHD_EXTRA="SetEnv DOCKER_HOST=$engine"
# Worker 2's logins find no docker.
SSH_SSHD_EXTRA_N[2]="SetEnv PATH=/nonexistent DOCKER_HOST=$engine"
. "$TESTS/ssh/lib.sh"
ssh_start 3
a0=${SSH_ADDR[0]} a1=${SSH_ADDR[1]} a2=${SSH_ADDR[2]}
export DOCKER_HOST=$engine   # the test's own look at the containers

# The containers of the latest run, as "name state".
ctrs() { docker ps -a --filter "label=tpuci.run=$(ssh_run_id)" --format '{{.Names}} {{.State}}'; }
# What a run left on the workers: their tpuci folders, docker clients.
left_on_workers() {
  local i
  for i in 0 1; do ssh_left "${SSH_NS[$i]}" "docker start\|sleep 30"; done
  ls -d /tmp/tpuci-"$(ssh_run_id)" 2> /dev/null
}

mkdir -p proj/tests
cat > proj/tests/test_host.py <<'PY'
import os

def test_rendezvous():
    assert os.environ["MASTER_ADDR"] == os.environ["WANT_MASTER"]

def test_fails_on_worker_1():
    assert os.environ["TPUCI_HOST"] != "1"
PY

cat > spec.lua <<LUA
hosts "slice" { "$a0", "root@$a1", ssh_config = "sshd/ssh_config" }
hosts "nodocker" { "$a0", "$a2", ssh_config = "sshd/ssh_config" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
image "py" { ref = "tpuci-test/python:1", pull = "never" }
topology "two" { hosts = 2, chips_per_host = 4, emulate = "none" }
job "accel" {
  topology = "two", hosts = "slice", image = "bb", timeout = "5m",
  shm_size = "96m", cap_add = { "SYS_PTRACE" }, devices = { "/dev/nul*" },
  ulimits = { nofile = 4321 }, sysctls = { ["kernel.msgmax"] = "65536" },
  env = { GREETING = "it's \$HOME" },
  mounts = { ["rel"] = "/rel" },
  run = [[
    echo "host \$TPUCI_HOST of \$TPUCI_HOSTS master \$MASTER_ADDR"
    echo "greeting \$GREETING"
    echo "shm \$(df -k /dev/shm | awk 'NR==2 {print \$2}') nofile \$(ulimit -n) msgmax \$(cat /proc/sys/kernel/msgmax)"
    ls /dev/null
    n=0; while [ ! -e /rel/go ] && [ \$n -lt 1200 ]; do sleep 0.1; n=\$((n + 1)); done
  ]],
}
job "tests" {
  topology = "two", hosts = "slice", image = "py", timeout = "5m",
  mounts = { ["proj"] = "/src" }, workdir = "/src", env = { WANT_MASTER = "$a0" },
  pytest = { args = { "tests/" } },
}
LUA

# 1. The accelerator options reach each worker's container; read back
# from the engine while the gang runs (it waits for rel/go, bounded).
mkdir rel
"$TPUCI" run --plain --only accel --junit merged.xml spec.lua > run.out 2>&1 &
tp=$!
for _ in $(seq 600); do [ "$(ctrs | grep -c ' running$')" = 2 ] && break; sleep 0.2; done
[ "$(ctrs | grep -c ' running$')" = 2 ] && pass || fail "not 2 running containers: $(ctrs)"
for h in 0 1; do
  name=$(ctrs | awk '{print $1}' | grep -- "-worker-$h\$")
  [ -n "$name" ] && pass || fail "no container of worker-$h: $(ctrs)"
  got=$(docker inspect -f '{{.HostConfig.NetworkMode}} {{.HostConfig.ShmSize}} {{.HostConfig.CapAdd}} {{index .HostConfig.Sysctls "kernel.msgmax"}} {{range .HostConfig.Ulimits}}{{.Name}}={{.Soft}}:{{.Hard}}{{end}} {{range .HostConfig.Devices}}{{.PathOnHost}}{{end}} {{.HostConfig.Init}}' "$name" 2>&1)
  [ "$got" = "host 100663296 [CAP_SYS_PTRACE] 65536 nofile=4321:4321 /dev/null true" ] && pass ||
    fail "worker-$h's container: '$got'"
  docker inspect -f '{{.Config.Labels}}' "$name" | grep -q "tpuci.pid:$tp" && pass ||
    fail "worker-$h's container lacks the run's labels"
done
touch rel/go
wait "$tp"
code=$?
out=$(cat run.out)
expect_code 0 "the gang of containers"
for h in 0 1; do
  expect_out "[worker-$h] host $h of 2 master $a0" "worker-$h's rendezvous is worker 0's address"
done
expect_out "[worker-1] greeting it's \$HOME" "the job's env, as written"
expect_out "[worker-0] shm 98304 nofile 4321 msgmax 65536" "the options inside the container"
expect_out "[worker-1] /dev/null" "the device glob's match"
[ -z "$(ctrs)" ] && pass || fail "containers left: $(ctrs)"
[ -z "$(left_on_workers)" ] && pass || fail "left on the workers: $(left_on_workers)"

# 2. A pytest gang in containers: each worker's results folder comes
# back (host 0's JUnit speaks for the gang, as for any gang).
run_tpuci run --plain --only tests --junit merged.xml spec.lua
expect_code 1 "the pytest gang (a test fails on worker 1)"
check=$(/usr/bin/python3 - merged.xml <<'PY'
import sys, xml.etree.ElementTree as ET
cases = {}
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    cases[tc.get("name")] = tc.find("failure") is not None
want = {"test_rendezvous": False, "test_fails_on_worker_1": False, "tests attempt 1": True}
if cases != want:
    print("cases: %r" % cases)
PY
)
[ -z "$check" ] && pass || fail "merged JUnit: $check"
expect_out "worker-1: exit 1" "worker-1's failure names it"
r=.tpuci/runs/latest/tests/results-1
grep -q 'failures="0"' $r/worker-0/junit.xml 2>/dev/null && pass || fail "worker-0's JUnit did not come back"
grep -q 'name="test_fails_on_worker_1".*<failure' $r/worker-1/junit.xml 2>/dev/null && pass ||
  fail "worker-1's JUnit did not come back"
[ -z "$(ctrs)" ] && pass || fail "containers left after pytest: $(ctrs)"

# 3. A timeout stops and removes the containers on every worker.
cat > slow.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "two" { hosts = 2, emulate = "none" }
job "slow" { topology = "two", hosts = "slice", image = "bb", grace = "1s",
             timeout = "4s", run = "echo up; trap '' TERM; exec sleep 300" }
LUA
run_tpuci run --plain slow.lua
expect_code 1 "a timeout"
expect_out "[timeout" "the gang timed out"
[ -z "$(ctrs)" ] && pass || fail "containers left after the timeout: $(ctrs)"
[ -z "$(left_on_workers)" ] && pass || fail "left on the workers after the timeout: $(left_on_workers)"

# 4. Ctrl-C, once both containers run: removed on every worker.
sed -i 's/timeout = "4s", //' slow.lua
ssh_interrupt slow.lua '[ "$(ctrs | grep -c " running$")" = 2 ]'
expect_code 130 "Ctrl-C"
[ -z "$(ctrs)" ] && pass || fail "containers left after Ctrl-C: $(ctrs)"
[ -z "$(left_on_workers)" ] && pass || fail "left on the workers after Ctrl-C: $(left_on_workers)"

# 5. A container docker cannot start (a network sysctl in the worker's
# network namespace): infra, with docker's words.
cat > nostart.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "two" { hosts = 2, emulate = "none" }
job "nostart" { topology = "two", hosts = "slice", image = "bb", run = "true",
                sysctls = { ["net.ipv4.ip_unprivileged_port_start"] = "80" } }
LUA
run_tpuci run --plain nostart.lua
expect_code 1 "a container that cannot start"
expect_json '[i["outcome"] for i in s["instances"]]' "['infra']"
expect_out "docker could not start the container there" "the cause says docker refused"
expect_out "not allowed in host network namespace" "docker's own words"
[ -z "$(ctrs)" ] && pass || fail "containers left after a refused start: $(ctrs)"

# 6. A worker without docker: the run stops before anything starts.
sed 's/hosts = "slice", image = "bb"/hosts = "nodocker", image = "bb"/' spec.lua > nodocker.lua
run_tpuci run --plain --only accel nodocker.lua
expect_code 3 "a worker without docker"
expect_out "ssh: worker-1 $a2 (hosts 'nodocker', nodocker.lua:2): docker does not work there: " \
  "the worker is named"
expect_out "the machine has no \`docker\` command" "what to do"
run_tpuci doctor nodocker.lua
expect_out "ok   ssh: worker-0 $a0 (hosts 'nodocker', nodocker.lua:2): reachable, docker engine " \
  "doctor: the worker with docker"
expect_out "FAIL ssh: worker-1 $a2 (hosts 'nodocker', nodocker.lua:2): docker does not work there" \
  "doctor: the worker without"

# 7. --keep-failed keeps the failed gang's containers; gc SPEC removes
# them with their folders.
cat > keep.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "two" { hosts = 2, emulate = "none" }
job "fails" { topology = "two", hosts = "slice", image = "bb", run = "exit 3" }
LUA
run_tpuci run --plain --keep-failed keep.lua
expect_code 1 "a failing gang kept"
expect_out "kept worker-1's container " "the kept container is named"
[ "$(ctrs | grep -c ' exited$')" = 2 ] && pass || fail "not 2 kept containers: $(ctrs)"
run_tpuci gc keep.lua
expect_code 0 "gc SPEC"
[ -z "$(ctrs)" ] && pass || fail "containers left after gc: $(ctrs)"
[ -z "$(ls -d /tmp/tpuci-"$(ssh_run_id)" 2>/dev/null)" ] && pass || fail "folders left after gc"
finish
