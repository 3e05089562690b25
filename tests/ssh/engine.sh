#!/usr/bin/env bash
# A remote engine over ssh: DOCKER_HOST=ssh://root@<worker> (the Docker
# CLI's convention, `ssh HOST docker system dial-stdio`) against sshds in
# network namespaces (tests/ssh/lib.sh) whose sessions reach the shared
# engine. tpuci runs a job and a gang there, refuses a pytest job (its
# JUnit would stay on the other machine), times out and cancels jobs
# without leaving a container, and gc and doctor work over it. Each way
# it can fail is exit 3 with one line that names the host and what to do:
# no ssh client, nothing listening, a refused login, a host key that is
# not the known one, no docker on the machine, dial-stdio failing. No ssh
# process of tpuci's outlives a run.
. "$TESTS/e2e/lib.sh"
command -v docker > /dev/null || { echo "SKIP: no docker CLI (docker system dial-stdio)"; exit 77; }
engine=${TPUCI_TEST_ENGINE:-unix:///var/tmp/tpuci-engine/docker.sock}
DOCKER_HOST=$engine docker version > /dev/null 2>&1 || { echo "SKIP: no engine at $engine"; exit 77; }
DOCKER_HOST=$engine docker image inspect tpuci-test/busybox:1 > /dev/null 2>&1 ||
  { echo "SKIP: no image tpuci-test/busybox:1"; exit 77; }
SSH_SSHD_EXTRA="SetEnv DOCKER_HOST=$engine"
# Worker 1 has no docker in its PATH, worker 2's docker finds no engine.
SSH_SSHD_EXTRA_N[1]="SetEnv PATH=/nonexistent DOCKER_HOST=$engine"
SSH_SSHD_EXTRA_N[2]="SetEnv DOCKER_HOST=unix:///nonexistent/docker.sock"
. "$TESTS/ssh/lib.sh"
ssh_start 3
a0=${SSH_ADDR[0]}

# The user's ssh config is the test's (ssh reads ~/.ssh through the
# password database, not $HOME): TPUCI_SSH runs ssh with it.
client() {
  printf '#!/bin/sh\nexec ssh -F %s "$@"\n' "$2" > "$WORK/$1"
  chmod +x "$WORK/$1"
}
client sshw "$SSHD/ssh_config"
export TPUCI_SSH=$WORK/sshw
unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH

# Whether any ssh of tpuci's to the workers still runs (zombies that
# init has yet to reap have no command line).
left_ssh() { pgrep -af "tpuci-ssh-.*10\.$SSH_NET\." | grep -v pgrep; }
# Containers of the latest run, on the engine.
left_ctrs() { DOCKER_HOST=$engine docker ps -aq --filter "label=tpuci.run=$(ssh_run_id)"; }

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "two" { hosts = 2, chips_per_host = 1, emulate = "none" }
job "hello" { image = "bb", run = "echo hello over ssh" }
job "gang" { image = "bb", topology = "two", run = "echo host $TPUCI_HOST of $TPUCI_HOSTS" }
LUA

# 1. A job and a gang over ssh://.
export DOCKER_HOST=ssh://root@$a0
run_tpuci run --plain spec.lua
expect_code 0 "a run over ssh://"
expect_out "[pass   ] hello" "the job passed"
expect_out "[worker-1] host 1 of 2" "the gang's second host ran"
grep -q "over ssh" .tpuci/runs/latest/hello/attempt-1.log 2>/dev/null && pass ||
  fail "the job's output is not in its log"
[ -z "$(left_ctrs)" ] && pass || fail "containers left: $(left_ctrs)"
[ -z "$(left_ssh)" ] && pass || fail "ssh processes left after the run: $(left_ssh)"

# 2. doctor and gc over ssh://.
run_tpuci doctor spec.lua
expect_code 0 "doctor over ssh://"
expect_out "ok   engine: Docker Engine" "doctor reaches the engine"
expect_out "at DOCKER_HOST=ssh://root@$a0" "doctor names the endpoint"
expect_out "is reached over ssh" "doctor says the data root is not checked"
# A container a dead run left (its tpuci's pid is not alive).
dead=tpuci-ssh-engine-dead-$$
DOCKER_HOST=$engine docker create --name "$dead" --label tpuci.run=20200101-000000-dead \
  --label tpuci.job=x --label tpuci.instance=x --label tpuci.pid=999999999 \
  --label "tpuci.host=$(hostname)" tpuci-test/busybox:1 true > /dev/null ||
  fail "cannot make a leftover container"
run_tpuci gc
expect_code 0 "gc over ssh://"
expect_out "removed container $dead" "gc removed the dead run's container"
DOCKER_HOST=$engine docker inspect "$dead" > /dev/null 2>&1 && fail "the leftover is still there" || pass
[ -z "$(left_ssh)" ] && pass || fail "ssh processes left after gc: $(left_ssh)"

# 3. A pytest job's results would stay on the other machine: refused.
cat > pytest.lua <<'LUA'
image "py" { ref = "tpuci-test/python:1", pull = "never" }
job "unit" { image = "py", pytest = { args = { "tests/" } } }
LUA
run_tpuci run --plain pytest.lua
expect_code 3 "a pytest job over ssh://"
expect_out "job 'unit': the engine (DOCKER_HOST=ssh://root@$a0) runs on another machine" \
  "the refusal names the job and the engine"
expect_out "hosts = ..." "the refusal says what to do"

# 4. A timeout and Ctrl-C end the container on the remote engine.
cat > slow.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "slow" { image = "bb", run = "echo started; exec sleep 300", timeout = "3s", grace = "1s" }
LUA
run_tpuci run --plain slow.lua
expect_code 1 "a timeout over ssh://"
expect_out "timeout" "the job timed out"
[ -z "$(left_ctrs)" ] && pass || fail "containers left after a timeout: $(left_ctrs)"
sed -i 's/timeout = "3s", //' slow.lua
ssh_interrupt slow.lua 'grep -q started .tpuci/runs/latest/slow/attempt-1.log'
expect_code 130 "Ctrl-C over ssh://"
[ -z "$(left_ctrs)" ] && pass || fail "containers left after Ctrl-C: $(left_ctrs)"
[ -z "$(left_ssh)" ] && pass || fail "ssh processes left after Ctrl-C: $(left_ssh)"

# 5. What fails says so: one line naming the host, what to do, exit 3.
reach() {
  out=$(DOCKER_HOST=$1 "$TPUCI" run --plain spec.lua 2>&1)
  code=$?
  expect_code 3 "$2"
  expect_out "cannot reach the Docker Engine (DOCKER_HOST=$1: " "$2: the engine is named"
  expect_out "$3" "$2: what ssh said"
  expect_out "$4" "$2: what to do"
  expect_not_out "start dockerd" "$2: not the local engine's hint"
}
TPUCI_SSH=$WORK/no-such-ssh reach "ssh://root@$a0" "no ssh client" \
  "cannot run $WORK/no-such-ssh: no such file or directory" "install the OpenSSH client"
reach "ssh://root@$a0:2999" "nothing listening" "ssh root@$a0:2999: ssh: connect to host $a0 port 2999: Connection refused" \
  "cannot be reached over ssh: check the address, the port and that sshd runs there"
# Another key, which the workers do not accept.
ssh-keygen -q -t ed25519 -N '' -f "$WORK/stranger" || fail "ssh-keygen"
sed "s|IdentityFile .*|IdentityFile $WORK/stranger|" "$SSHD/ssh_config" > "$WORK/stranger_config"
client sshw-stranger "$WORK/stranger_config"
TPUCI_SSH=$WORK/sshw-stranger reach "ssh://root@$a0" "a refused login" \
  "Permission denied" "ssh refused the login"
# A known_hosts whose key for the worker is another one.
ssh-keygen -q -t ed25519 -N '' -f "$WORK/otherhost" || fail "ssh-keygen"
echo "$a0 $(cut -d' ' -f1,2 "$WORK/otherhost.pub")" > "$WORK/bad_known_hosts"
sed "s|UserKnownHostsFile .*|UserKnownHostsFile $WORK/bad_known_hosts|" "$SSHD/ssh_config" > "$WORK/badkey_config"
client sshw-badkey "$WORK/badkey_config"
TPUCI_SSH=$WORK/sshw-badkey reach "ssh://root@$a0" "a host key mismatch" \
  "Host key verification failed." "ssh does not trust the host's key"
reach "ssh://root@${SSH_ADDR[1]}" "no docker there" "not found" "the machine has no \`docker\` command"
reach "ssh://root@${SSH_ADDR[2]}" "dial-stdio failing" "docker.sock" \
  "docker failed there: check that the engine runs on that machine"
# gc and doctor say it too.
out=$(DOCKER_HOST=ssh://root@${SSH_ADDR[1]} "$TPUCI" doctor spec.lua 2>&1)
code=$?
expect_code 3 "doctor without docker there"
expect_out "FAIL engine: cannot reach the Docker Engine (DOCKER_HOST=ssh://root@${SSH_ADDR[1]}: ssh root@${SSH_ADDR[1]}: " \
  "doctor names the engine"
out=$(TPUCI_SSH=$WORK/sshw-stranger "$TPUCI" gc 2>&1)
code=$?
expect_code 3 "gc with a refused login"
expect_out "ssh refused the login" "gc says why"
[ -z "$(left_ssh)" ] && pass || fail "ssh processes left after the failures: $(left_ssh)"
finish
