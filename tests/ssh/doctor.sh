#!/usr/bin/env bash
# `tpuci doctor` for ssh hosts, against 2 sshds in network namespaces
# (tests/ssh/lib.sh): each worker reachable with BatchMode is "ok"; a
# worker whose host key is not the known one, and an address where no
# worker answers, are one "FAIL" line each naming the worker, and doctor
# exits 3.
. "$TESTS/e2e/lib.sh"
. "$TESTS/ssh/lib.sh"
ssh_start 2
a0=${SSH_ADDR[0]} a1=${SSH_ADDR[1]}

cat > spec.lua <<LUA
hosts "slice" { "$a0", "root@$a1", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, chips_per_host = 4, emulate = "none" }
job "g" { topology = "two", hosts = "slice", run = "true" }
LUA
run_tpuci doctor spec.lua
expect_out "ok   ssh: worker-0 $a0 (hosts 'slice', spec.lua:1): reachable"
expect_out "ok   ssh: worker-1 root@$a1 (hosts 'slice', spec.lua:1): reachable"
expect_not_out "FAIL ssh"
# doctor also checks the engine: its exit code speaks for ssh only when
# the engine is fine.
engine_ok=0
[ "$code" = 0 ] && engine_ok=1

# worker-1's known key is another key: ssh refuses it, as configured.
ssh-keygen -q -t ed25519 -N '' -f sshd/other
{ echo "$a0 $(cut -d' ' -f1,2 sshd/host0.pub)"; echo "$a1 $(cut -d' ' -f1,2 sshd/other.pub)"; } > sshd/bad_known_hosts
sed "s|sshd/known_hosts|sshd/bad_known_hosts|" sshd/ssh_config > sshd/bad_config
sed "s|sshd/ssh_config|sshd/bad_config|" spec.lua > badkey.lua
run_tpuci doctor badkey.lua
expect_code 3 "doctor with a bad host key"
[ "$engine_ok" = 1 ] || echo "note: no engine here; exit 3 is also the engine's"
expect_out "ok   ssh: worker-0 $a0"
expect_out "FAIL ssh: worker-1 root@$a1 (hosts 'slice', badkey.lua:1): "
expect_out "Host key verification failed."
n=$(printf '%s\n' "$out" | grep -c "^FAIL ssh")
[ "$n" = 1 ] && pass || fail "bad host key: $n FAIL ssh lines, want 1"

# Nobody at .3 on worker-0's link: unreachable.
sed "s|\"root@$a1\"|\"root@${a0%.2}.3\"|" spec.lua > gone.lua
run_tpuci doctor gone.lua
expect_code 3 "doctor with an unreachable worker"
expect_out "FAIL ssh: worker-1 root@${a0%.2}.3 (hosts 'slice', gone.lua:1): ssh: connect to host ${a0%.2}.3 port 22: "
finish
