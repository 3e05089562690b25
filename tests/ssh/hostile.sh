#!/usr/bin/env bash
# What a spec, a gcloud host file or this machine's environment could make
# tpuci run here or on a worker (docs/ssh.md, docs/real-tpu.md). No sshd:
# a worker is this machine, reached through a fake ssh (TPUCI_SSH) that
# skips ssh's options and runs the remote command with a local sh, and
# logs each command line it was given.
# - A host that starts with '-' (`-Fevil.conf`, an ssh option: its
#   ProxyCommand would run here), from a gcloud file or written in the
#   spec, is refused when the spec loads: plan, doctor and run exit 2 and
#   the real ssh never runs evil.conf's ProxyCommand.
# - Every ssh command line tpuci makes has "--" before the host.
# - A gcloud file that is a FIFO is refused at once; one over 4 MiB too.
# - `--real` passes no variable whose name is not a shell name (one that
#   would be code in the worker's `export` line) and not this machine's
#   TPU_WORKER_ID (each worker has its own).
# - A session that ends before its job started is infra, naming ssh's
#   last line (under LeakSanitizer: nothing leaks on that path).
# - After a kill -9, `tpuci gc SPEC` removes the control folder the
#   killed tpuci left in /tmp (--dry-run lists it).
. "$TESTS/e2e/lib.sh"

cat > evil.conf <<CONF
Host *
  ProxyCommand sh -c 'touch $WORK/pwned; exit 1'
CONF
cat > dash.json <<'JSON'
{"networkEndpoints": [{"ipAddress": "10.0.0.2"}, {"ipAddress": "-Fevil.conf"}]}
JSON
cat > gcloud.lua <<'LUA'
hosts "tpu" { gcloud = "dash.json" }
topology "two" { hosts = 2, emulate = "none" }
job "g" { topology = "two", hosts = "tpu", run = "true" }
LUA
cat > written.lua <<'LUA'
hosts "s" { "-Fevil.conf" }
job "w" { hosts = "s", run = "true" }
LUA

# The real ssh client (TPUCI_SSH unset): nothing of evil.conf may run.
for spec in gcloud.lua written.lua; do
  for cmd in plan doctor run; do
    run_tpuci "$cmd" "$spec"
    expect_code 2 "$cmd $spec with a host '-Fevil.conf'"
  done
  expect_out "with '-'"
done
[ ! -e pwned ] && pass || fail "evil.conf's ProxyCommand ran"

# A FIFO as the gcloud file: refused at once, not waited on.
mkfifo fifo.json
cat > fifo.lua <<'LUA'
hosts "tpu" { gcloud = "fifo.json" }
job "f" { hosts = "tpu", run = "true" }
LUA
out=$(timeout 60 "$TPUCI" plan fifo.lua 2>&1)
code=$?
expect_code 2 "a FIFO as the gcloud file"
expect_out "gcloud: cannot read '$WORK/fifo.json': it is a FIFO, not a regular file"
/usr/bin/python3 -c '
import json
print(json.dumps({"networkEndpoints": [{"ipAddress": "10.0.0.2"}], "pad": "x" * (5 << 20)}))' > big.json
sed 's/fifo.json/big.json/' fifo.lua > big.lua
run_tpuci plan big.lua
expect_code 2 "a gcloud file over 4 MiB"
expect_out "is over 4 MiB: not a describe output"

# The fake ssh: this machine is the worker.
cat > fake-ssh <<SH
#!/bin/sh
printf '%s' "\$*" | tr '\n' ' ' >> "$WORK/ssh-argv"
echo >> "$WORK/ssh-argv"
op=
while [ \$# -gt 0 ]; do
  case "\$1" in
    -O) op=\$2; shift 2 ;;
    -F|-o|-p|-l) shift 2 ;;
    -T) shift ;;
    --) shift; break ;;
    -*) echo "fake ssh: \$1 is not one of tpuci's options" >&2; exit 255 ;;
    *) break ;;
  esac
done
host=\$1
shift
[ -n "\$op" ] && exit 0
if [ -n "\${FAKE_SSH_CUT:-}" ] && [ "\$*" != true ]; then
  echo "Connection closed by \$host port 22" >&2
  exit 255
fi
exec sh -c "\$*"
SH
chmod +x fake-ssh
export TPUCI_SSH=$WORK/fake-ssh
mkdir out
cat > real.lua <<LUA
hosts "here" { "10.0.0.2" }
topology "v4-8" {}
job "env" { hosts = "here", topology = "v4-8", workdir = "$WORK/out", run = "env | sort > env.txt" }
job "hang" { hosts = "here", run = "touch $WORK/out/hang; exec sleep 5$$" }
LUA

# --real: a name with ';' would be code in the worker's export line;
# TPU_WORKER_ID is this machine's.
env 'TPU_A;touch '"$WORK"'/pwned-env;B=1' TPU_WORKER_ID=7 CLOUD_TPU_TASK_ID=7 TPU_SAFE=yes \
  "$TPUCI" plan --real --json --only env real.lua > plan.json 2>&1
check=$(/usr/bin/python3 - plan.json <<'PY' 2>&1
import json, sys
e = json.load(open(sys.argv[1]))["instances"][0]["hosts"][0]["env"]
bad = [k for k in e if ";" in k or k in ("TPU_WORKER_ID", "CLOUD_TPU_TASK_ID")]
assert not bad and e.get("TPU_SAFE") == "yes", (bad, e.get("TPU_SAFE"))
PY
)
[ -z "$check" ] && pass || fail "plan --real: $check"
out=$(env 'TPU_A;touch '"$WORK"'/pwned-env;B=1' TPU_WORKER_ID=7 TPU_SAFE=yes \
  "$TPUCI" run --real --plain --only env real.lua 2>&1)
code=$?
expect_code 0 "run --real on the worker"
[ ! -e pwned-env ] && pass || fail "a variable's name ran as code on the worker"
grep -qx 'TPU_SAFE=yes' out/env.txt && pass || fail "TPU_SAFE did not reach the worker"
# This worker inherits the test's environment: what tpuci sent is in the
# session's script, one `export` line a variable.
grep -q "export TPU_SAFE=yes" ssh-argv && pass || fail "no export of TPU_SAFE in the script"
grep -q "export TPU_WORKER_ID" ssh-argv && fail "this machine's TPU_WORKER_ID was sent" || pass
grep -q 'TPU_A;' ssh-argv && fail "the bad name reached the worker's script" || pass

run_tpuci doctor real.lua
expect_out "ok   ssh: worker-0 10.0.0.2 (hosts 'here', real.lua:1): reachable"
run_tpuci gc --dry-run real.lua
expect_code 0 "gc --dry-run through the fake ssh"
# "--" before the host in every command line (doctor, gc, the check
# before the run, the session, the cleanup, `-O exit`).
bad=$(grep -v -- '-- 10.0.0.2' ssh-argv)
[ -s ssh-argv ] && [ -z "$bad" ] && pass || fail "ssh command lines without '--' before the host: $bad"

# A session cut before the job started: infra with ssh's last line.
out=$(FAKE_SSH_CUT=1 "$TPUCI" run --plain --only env real.lua 2>&1)
code=$?
expect_code 1 "a session cut before its job"
expect_out "cannot start the job there: Connection closed by 10.0.0.2 port 22"
expect_not_out "ERROR: LeakSanitizer" "a leak when the session ended first"

# kill -9: the control folder stays; `tpuci gc SPEC` removes it.
"$TPUCI" run --plain --only hang real.lua > killed.out 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e out/hang ] && break; sleep 0.1; done
[ -e out/hang ] && pass || fail "the job did not start: $(cat killed.out)"
kill -9 "$pid"
wait "$pid" 2>/dev/null
dirs=$(ls -d /tmp/tpuci-ssh-"$pid"-* 2>/dev/null)
[ -n "$dirs" ] && pass || fail "no control folder of pid $pid"
run_tpuci gc --dry-run real.lua
expect_code 0 "gc --dry-run"
expect_out "would remove ssh: control folder $dirs (its tpuci, pid $pid, is gone)"
[ -d "$dirs" ] && pass || fail "gc --dry-run removed $dirs"
run_tpuci gc real.lua
expect_code 0 "gc"
expect_out "removed ssh: control folder $dirs (its tpuci, pid $pid, is gone)"
[ ! -e "$dirs" ] && pass || fail "gc left $dirs"
# The end of the session's stdin ended the job (the worker's script).
for _ in $(seq 100); do left=$(pgrep -f "sleep 5$$"); [ -z "$left" ] && break; sleep 0.1; done
[ -z "$left" ] && pass || { fail "the killed run's job still ran"; kill -9 $left; }
finish
