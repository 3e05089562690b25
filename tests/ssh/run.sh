#!/usr/bin/env bash
# `tpuci run` on a slice's workers over SSH (docs/ssh.md), against 2
# sshds in network namespaces (tests/ssh/lib.sh): a gang's hosts get the
# workers' real addresses as their rendezvous and run only once all are
# connected; the output is prefixed per host; a failing worker stops the
# other at once and names itself; a timeout kills the remote process
# group on every worker, also a host that ignores SIGTERM; a retry runs
# the whole gang again; a job's own exit 255 is its exit, not ssh's;
# nothing is left running or on disk on any worker.
. "$TESTS/e2e/lib.sh"
. "$TESTS/ssh/lib.sh"
ssh_start 2
a0=${SSH_ADDR[0]} a1=${SSH_ADDR[1]}
mark="sleep 3$$"
mkdir out

cat > spec.lua <<LUA
hosts "slice" { "$a0", "root@$a1", ssh_config = "sshd/ssh_config" }
hosts "one" { "$a1", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, chips_per_host = 4, emulate = "none" }
job "env" {
  topology = "two", hosts = "slice", workdir = "$WORK/out",
  env = { GREETING = "it's \$HOME" },
  run = [[
    echo "host \$TPUCI_HOST of \$TPUCI_HOSTS rank \$RANK master \$MASTER_ADDR in \$(pwd)"
    echo "greeting \$GREETING"
    echo "to stderr" >&2
    touch started.\$TPUCI_HOST
  ]],
}
-- worker-1 fails once worker-0 runs; worker-0 would sleep.
job "fails" {
  topology = "two", hosts = "slice",
  run = [[
    if [ "\$TPUCI_HOST" = 1 ]; then
      while [ ! -e $WORK/out/fails.0 ]; do sleep 0.1; done
      echo "worker-1 gives up"; exit 3
    fi
    touch $WORK/out/fails.0; exec sleep 3$$1
  ]],
}
-- Both hang; worker-1 ignores SIGTERM: SIGKILL after the grace.
job "slow" {
  topology = "two", hosts = "slice", timeout = "3s", grace = "1s",
  run = [[
    if [ "\$TPUCI_HOST" = 1 ]; then trap '' TERM; sh -c "sleep 3$$2"; fi
    sleep 3$$3
  ]],
}
-- worker-1 fails the first attempt only: the retry runs both again.
job "retried" {
  topology = "two", hosts = "slice",
  retries = { attempts = 2, on = { "failed" } },
  run = [[
    touch $WORK/out/retried.\$TPUCI_ATTEMPT.\$TPUCI_HOST
    if [ "\$TPUCI_ATTEMPT" = 1 ] && [ "\$TPUCI_HOST" = 1 ]; then
      while [ ! -e $WORK/out/retried.1.0 ]; do sleep 0.1; done
      exit 4
    fi
  ]],
}
job "x255" { hosts = "one", run = "exit 255" }
LUA

controls_before=$(ls -d /tmp/tpuci-ssh-* 2>/dev/null)
run_tpuci run -j 8 spec.lua
expect_code 1 "the ssh jobs"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'env': 'passed', 'fails': 'failed', 'slow': 'timeout', 'retried': 'flaky', 'x255': 'failed'}"
log=.tpuci/runs/latest/env/attempt-1.log
grep -qx "\[worker-0\] host 0 of 2 rank 0 master $a0 in $WORK/out" "$log" && pass || fail "worker-0's line: $(cat "$log")"
grep -qx "\[worker-1\] host 1 of 2 rank 1 master $a0 in $WORK/out" "$log" && pass || fail "worker-1's line: $(cat "$log")"
grep -qx "\[worker-1\] greeting it's \$HOME" "$log" && pass || fail "the job's env did not come as it is: $(cat "$log")"
grep -qx "\[worker-0\] to stderr" "$log" && pass || fail "stderr is not in the log"
grep -qx "to stderr" .tpuci/runs/latest/env/attempt-1.worker-1.log && pass || fail "no per-host log"
[ -e out/started.0 ] && [ -e out/started.1 ] && pass || fail "the workdir was not the job's"
expect_json '[i for i in s["instances"] if i["name"] == "fails"][0]["attempts"][0]["cause"]' "worker-1: exit 3"
grep -qx '\[worker-1\] worker-1 gives up' .tpuci/runs/latest/fails/attempt-1.log && pass || fail "worker-1's words"
ms=$(json '[i for i in s["instances"] if i["name"] == "fails"][0]["attempts"][0]["duration_ms"]')
[ "$ms" -lt 60000 ] && pass || fail "the failed gang took $ms ms to end"
expect_json '"timed out after 3" in [i for i in s["instances"] if i["name"] == "slow"][0]["attempts"][0]["cause"]' True
ms=$(json '[i for i in s["instances"] if i["name"] == "slow"][0]["attempts"][0]["duration_ms"]')
[ "$ms" -lt 60000 ] && pass || fail "the timed out gang took $ms ms to end"
expect_json '[a["cause"] for a in [i for i in s["instances"] if i["name"] == "retried"][0]["attempts"]]' "['worker-1: exit 4', 'exit 0']"
for f in retried.1.0 retried.1.1 retried.2.0 retried.2.1; do
  [ -e "out/$f" ] && pass || fail "no out/$f: the retry did not run the whole gang"
done
expect_json '[i for i in s["instances"] if i["name"] == "x255"][0]["attempts"][0]["exit_code"]' 255
expect_json '[i for i in s["instances"] if i["name"] == "x255"][0]["attempts"][0]["outcome"]' failed

# Nothing left: no process of the jobs on any worker, no folder.
for i in 0 1; do
  left=$(ssh_left "${SSH_NS[$i]}" "$mark")
  [ -z "$left" ] && pass || fail "worker-$i still runs: $left"
done
[ -z "$(ls -d /tmp/tpuci-"$(ssh_run_id)" 2>/dev/null)" ] && pass || fail "the workers' folders are left: $(ls -R /tmp/tpuci-"$(ssh_run_id)")"
controls=$(ls -d /tmp/tpuci-ssh-* 2>/dev/null)
[ "$controls" = "$controls_before" ] && pass || fail "control sockets are left: $controls"
finish
