#!/usr/bin/env bash
# What goes wrong on a slice's workers (docs/ssh.md), against 2 sshds in
# network namespaces (tests/ssh/lib.sh): Ctrl-C stops the remote jobs on
# every worker (exit 130, nothing left); a worker whose connection drops
# mid-run makes the attempt infra, which is retried, and nothing of the
# first attempt is left on it; a bad host key stops the run before any
# job starts (exit 3), naming the worker (a worker that is not there is
# no capacity: tests/ssh/capacity.sh); after
# a killed tpuci, `tpuci gc SPEC` removes the folders it left, on the
# workers and its control folder here.
. "$TESTS/e2e/lib.sh"
. "$TESTS/ssh/lib.sh"
ssh_start 2
a0=${SSH_ADDR[0]} a1=${SSH_ADDR[1]}
mark="sleep 4$$"
mkdir out

# Ctrl-C while both hosts run.
cat > sigint.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, emulate = "none" }
job "hang" {
  topology = "two", hosts = "slice", grace = "2s",
  run = "touch $WORK/out/hang.\$TPUCI_HOST; exec sleep 4$$1",
}
LUA
"$TPUCI" run sigint.lua > sigint.out 2>&1 &
pid=$!
wait_for out/hang.0 && wait_for out/hang.1 && pass || fail "the gang did not start: $(cat sigint.out)"
kill -INT "$pid"
wait "$pid"
code=$?
out=$(cat sigint.out)
expect_code 130 "Ctrl-C"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled']"
for i in 0 1; do
  left=$(ssh_left "${SSH_NS[$i]}" "$mark")
  [ -z "$left" ] && pass || fail "after Ctrl-C worker-$i still runs: $left"
done

# worker-1's connection drops while both run (its sshd's session
# processes are killed; the listener stays): infra, retried, passed.
cat > drop.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, emulate = "none" }
job "drop" {
  topology = "two", hosts = "slice",
  retries = { attempts = 2, on = { "infra" } },
  run = [[
    touch $WORK/out/drop.\$TPUCI_ATTEMPT.\$TPUCI_HOST
    if [ "\$TPUCI_ATTEMPT" = 1 ]; then exec sleep 4$$2; fi
  ]],
}
LUA
"$TPUCI" run drop.lua > drop.out 2>&1 &
pid=$!
wait_for out/drop.1.0 && wait_for out/drop.1.1 && pass || fail "the gang did not start: $(cat drop.out)"
ssh_drop 1
wait "$pid"
code=$?
out=$(cat drop.out)
expect_code 0 "a dropped connection, retried"
expect_json '[i["outcome"] for i in s["instances"]]' "['flaky']"
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['infra', 'passed']"
cause=$(json 's["instances"][0]["attempts"][0]["cause"]')
case "$cause" in
  "ssh: worker-1 ($a1, hosts 'slice'): the connection dropped while the job ran"*) pass ;;
  *) fail "the dropped connection's cause: $cause" ;;
esac
[ -e out/drop.2.0 ] && [ -e out/drop.2.1 ] && pass || fail "the retry did not run the whole gang"
for i in 0 1; do
  left=$(ssh_left "${SSH_NS[$i]}" "$mark")
  [ -z "$left" ] && pass || fail "after the drop worker-$i still runs: $left"
done

# A killed tpuci leaves no job running on the workers (the end of the
# sessions' stdin kills them), but their folders: `tpuci gc SPEC` finds
# them, --dry-run only lists them.
"$TPUCI" run sigint.lua > killed.out 2>&1 &
pid=$!
rm -f out/hang.*
wait_for out/hang.0 && wait_for out/hang.1 && pass || fail "the gang did not start: $(cat killed.out)"
kill -9 "$pid"
wait "$pid" 2>/dev/null
for i in 0 1; do
  left=""
  for t in $(seq 100); do left=$(ssh_left "${SSH_NS[$i]}" "$mark"); [ -z "$left" ] && break; sleep 0.1; done
  [ -z "$left" ] && pass || fail "after tpuci was killed worker-$i still runs: $left"
done
killed=$(basename "$(readlink -f .tpuci/runs/latest)")
[ -d "/tmp/tpuci-$killed" ] && pass || fail "no folder of the killed run on the workers"
run_tpuci gc --dry-run sigint.lua
expect_code 0 "gc --dry-run"
expect_out "would remove ssh: worker-0 $a0 (hosts 'slice'): /tmp/tpuci-$killed/"
expect_out "would remove ssh: worker-1 $a1 (hosts 'slice'): /tmp/tpuci-$killed/"
[ -d "/tmp/tpuci-$killed" ] && pass || fail "gc --dry-run removed the folders"
run_tpuci gc sigint.lua
expect_code 0 "gc"
# The workers here share one /tmp: worker-0 removes both folders.
expect_out "removed ssh: worker-0 $a0 (hosts 'slice'): /tmp/tpuci-$killed/i0.a1.h1"
# Here: the control folder of the killed tpuci.
expect_out "removed ssh: control folder /tmp/tpuci-ssh-$pid-"
[ -z "$(ls -d /tmp/tpuci-ssh-"$pid"-* 2>/dev/null)" ] && pass || fail "gc left the control folder"
[ ! -e "/tmp/tpuci-$killed" ] && pass || fail "gc left /tmp/tpuci-$killed: $(ls -R /tmp/tpuci-$killed)"
run_tpuci gc sigint.lua
expect_not_out "/tmp/tpuci-$killed" "a second gc"

# A bad host key: nothing starts, exit 3.
cat > gone.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, emulate = "none" }
job "g" { topology = "two", hosts = "slice", run = "touch $WORK/out/gone" }
LUA
ssh-keygen -q -t ed25519 -N '' -f sshd/other
{ echo "$a0 $(cut -d' ' -f1,2 sshd/host0.pub)"; echo "$a1 $(cut -d' ' -f1,2 sshd/other.pub)"; } > sshd/bad_known_hosts
sed "s|sshd/known_hosts|sshd/bad_known_hosts|" sshd/ssh_config > sshd/bad_config
sed -e "s|sshd/ssh_config|sshd/bad_config|" gone.lua > badkey.lua
run_tpuci run badkey.lua
expect_code 3 "a bad host key"
expect_out "ssh: worker-1 $a1 (hosts 'slice', badkey.lua:1) cannot be reached: Host key verification failed."
[ ! -e out/gone ] && pass || fail "a job ran with a bad host key"
finish
