#!/usr/bin/env bash
# The machines' failures apart from the tests' (docs/ssh.md, "Capacity"),
# against 2 sshds in network namespaces (tests/ssh/lib.sh): a worker that
# is not there at connect makes the attempts no-capacity, retried under
# retries.capacity and never under attempts, exit 3 with a verdict that
# says so; a worker stopped mid-run, that the hosts' describe command
# then reports PREEMPTED, makes the attempt preempted, retried without
# touching attempts, and the pass after it is a pass (not flaky); every
# report counts them apart.
. "$TESTS/e2e/lib.sh"
. "$TESTS/ssh/lib.sh"
ssh_start 2
a0=${SSH_ADDR[0]} a1=${SSH_ADDR[1]}
mkdir out

# state JSON: the describe command's answer, replaced at once.
state() { echo "$1" > state.tmp && mv state.tmp state.json; }

# No machine at worker-1's address: no capacity, twice (1 + 1 capacity
# retry), while attempts = 3 stays unused.
cat > nocap.lua <<LUA
hosts "slice" { "$a0", "${a0%.2}.3", ssh_config = "sshd/ssh_config" }
topology "two" { hosts = 2, emulate = "none" }
job "g" {
  topology = "two", hosts = "slice",
  retries = { attempts = 3, capacity = { attempts = 1, wait = "1s" } },
  run = "touch $WORK/out/gone",
}
LUA
run_tpuci plan nocap.lua
expect_out "capacity: 1 more attempt after a preempted or no-capacity one, 1s apart (retries.capacity)"
run_tpuci run --junit nocap.xml nocap.lua
expect_code 3 "no capacity"
expect_out "ssh: worker-1 ${a0%.2}.3 (hosts 'slice', nocap.lua:1) is not there: ssh: connect to host ${a0%.2}.3 port 22: "
expect_out ", no-capacity 1 (of 1)"
expect_out "verdict: NOT RUN: no machines (preempted or no capacity), no test failed"
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['no-capacity', 'no-capacity']"
expect_json 's["instances"][0]["outcome"]' "no-capacity"
expect_json 's["counts"]["no-capacity"], s["counts"]["failed"]' "(1, 0)"
cause=$(json 's["instances"][0]["attempts"][0]["cause"]')
case "$cause" in
  *"no capacity: the worker is not there"*"port 22"*) pass ;;
  *) fail "the no-capacity cause: $cause" ;;
esac
grep -q "<error[^>]*type=\"tpuci.no-capacity\"" nocap.xml && pass || fail "JUnit: no error of type no-capacity: $(cat nocap.xml)"
grep -q 'o-no-capacity' .tpuci/runs/latest/report.html && pass || fail "the HTML report does not show no-capacity"
[ ! -e out/gone ] && pass || fail "a host ran without its peer"

# worker-1 is stopped mid-run (its sessions killed, the listener stays,
# as a VM that comes back), and the describe command then says the TPU is
# PREEMPTED: preempted, retried under retries.capacity, passed.
ready='{"state": "READY", "networkEndpoints": [{"ipAddress": "'$a0'"}, {"ipAddress": "'$a1'"}]}'
state "$ready"
cat > pre.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config", describe = "cat state.json" }
topology "two" { hosts = 2, emulate = "none" }
job "p" {
  topology = "two", hosts = "slice",
  retries = { attempts = 1, capacity = { attempts = 2, wait = "1s" } },
  run = [[
    touch $WORK/out/p.\$TPUCI_ATTEMPT.\$TPUCI_HOST
    if [ "\$TPUCI_ATTEMPT" = 1 ]; then exec sleep 4$$; fi
  ]],
}
LUA
"$TPUCI" run pre.lua > pre.out 2>&1 &
pid=$!
wait_for out/p.1.0 && wait_for out/p.1.1 && pass || fail "the gang did not start: $(cat pre.out)"
state '{"state": "PREEMPTED", "networkEndpoints": [{"ipAddress": "'$a0'"}, {"ipAddress": "'$a1'"}]}'
ssh_drop 1
# Back for the retry (which waits a second).
for t in $(seq 600); do grep -q preempted .tpuci/runs/latest/attempts.jsonl 2>/dev/null && break; sleep 0.1; done
state "$ready"
wait "$pid"
code=$?
out=$(cat pre.out)
expect_code 0 "preempted, retried, passed"
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['preempted', 'passed']"
expect_json 's["instances"][0]["outcome"]' "passed"
cause=$(json 's["instances"][0]["attempts"][0]["cause"]')
case "$cause" in
  "preempted: the TPU is PREEMPTED (the hosts' describe command)"*) pass ;;
  *) fail "the preempted cause: $cause" ;;
esac
[ -e out/p.2.0 ] && [ -e out/p.2.1 ] && pass || fail "the retry did not run the whole gang"

# Without a capacity budget, a preemption is the outcome; a test failure
# is still failed (the describe answers READY).
sed 's/capacity = { attempts = 2, wait = "1s" }/capacity = { attempts = 0 }/' pre.lua > once.lua
rm -f out/p.*
state "$ready"
"$TPUCI" run once.lua > once.out 2>&1 &
pid=$!
wait_for out/p.1.1 || fail "the gang did not start: $(cat once.out)"
state '{"state": "READY", "networkEndpoints": [{"ipAddress": "'$a0'"}]}'
ssh_drop 1
wait "$pid"
code=$?
out=$(cat once.out)
expect_code 3 "a worker gone from the TPU's endpoints, no capacity budget"
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['preempted']"
expect_out ", preempted 1 (of 1)"
cause=$(json 's["instances"][0]["attempts"][0]["cause"]')
case "$cause" in
  "preempted: worker-1 ($a1) is gone from the TPU's networkEndpoints"*) pass ;;
  *) fail "the gone worker's cause: $cause" ;;
esac

# The workers written as ssh_config hosts, which the description does not
# name: found by the HostName `ssh -G` gives them, and judged the same.
{ cat sshd/ssh_config; printf 'Host w0\n  HostName %s\nHost w1\n  HostName %s\n' "$a0" "$a1"; } > alias.cfg
sed -e "s|\"$a0\", \"$a1\", ssh_config = \"sshd/ssh_config\"|\"w0\", \"w1\", ssh_config = \"alias.cfg\"|" once.lua > alias.lua
grep -q '"w0", "w1", ssh_config = "alias.cfg"' alias.lua && pass || fail "alias.lua: $(head -1 alias.lua)"
rm -f out/p.*
state "$ready"
"$TPUCI" run alias.lua > alias.out 2>&1 &
pid=$!
wait_for out/p.1.1 || fail "the gang did not start: $(cat alias.out)"
state '{"state": "READY", "networkEndpoints": [{"ipAddress": "'$a0'"}]}'
ssh_drop 1
wait "$pid"
code=$?
out=$(cat alias.out)
expect_code 3 "a worker written by its ssh_config host, gone from the endpoints"
cause=$(json 's["instances"][0]["attempts"][0]["cause"]')
case "$cause" in
  "preempted: worker-1 (w1) is gone from the TPU's networkEndpoints"*) pass ;;
  *) fail "the ssh_config host's cause: $cause" ;;
esac

# A describe command that cannot tell: it fails, prints over 8 MiB, or
# hangs past its describe_timeout (killed with what it started). The
# failed attempt stays failed (no test retry is spent on a guess), and
# the run says on the console why the machines were not judged.
for d in 'echo "ERROR: (gcloud) the token expired" >&2; exit 1' 'head -c 9000000 /dev/zero' \
         'sleep 67.25; true'; do
  cat > blind.lua <<LUA
hosts "slice" { "$a0", "$a1", ssh_config = "sshd/ssh_config", describe = [[$d]], describe_timeout = "3s" }
topology "two" { hosts = 2, emulate = "none" }
job "b" {
  topology = "two", hosts = "slice",
  retries = { attempts = 1, capacity = { attempts = 2, wait = "1s" } },
  run = "test \$TPUCI_HOST = 0",
}
LUA
  run_tpuci run blind.lua
  expect_code 1 "a failed attempt, the describe command: $d"
  expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['failed']"
  case "$d" in
    exit*|*"exit 1") want="ssh: the hosts' describe command failed (ERROR: (gcloud) the token expired): cannot tell whether a worker was preempted" ;;
    sleep*) want="ssh: the hosts' describe command took over 3s (describe_timeout) and was killed: cannot tell whether a worker was preempted" ;;
    *) want="ssh: the hosts' describe command printed over 8 MiB: cannot tell whether a worker was preempted" ;;
  esac
  expect_out "tpuci: b: $want"
done
# The hung command's sleep went with its sh.
pgrep -f "sleep 67.25" > /dev/null && fail "the describe command's sleep outlived its kill" || pass

# The plan says the limit: the spec's, else a minute.
for t in '' 'describe_timeout = "3s", '; do
  printf 'hosts "h" { "10.0.0.2", %sdescribe = "true" }\njob "j" { hosts = "h", run = "true" }\n' "$t" > lim.lua
  got=$("$TPUCI" plan --json lim.lua 2>&1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["instances"][0]["ssh"]["describe_timeout_ms"])' 2>&1)
  want=60000; [ -n "$t" ] && want=3000
  [ "$got" = "$want" ] && pass || fail "plan --json describe_timeout_ms with '$t': $got, want $want"
done

# The spec's mistakes.
printf 'job "j" { run = "true", retries = { capacity = 3 } }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "capacity = 3"
expect_out "retries.capacity: expected a table like { attempts = 3, wait = \"2m\" }, got number"
printf 'hosts "h" { "10.0.0.2", label = "a=b" }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "label without gcloud"
expect_out "label: only with gcloud = ..."
printf 'hosts "h" { "10.0.0.2", describe_timeout = "2m" }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "describe_timeout without describe"
expect_out "describe_timeout: only with describe = ..."
printf 'hosts "h" { "10.0.0.2", describe = "true", describe_timeout = 0.5 }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "describe_timeout under 1s"
expect_out "describe_timeout: must be at least 1s, got '0.5'"
finish
