#!/usr/bin/env bash
# Real multi-host work on a slice's workers over SSH (docs/ssh.md),
# against 4 sshds in network namespaces (tests/ssh/lib.sh) that reach
# each other: torch.distributed's gloo all_reduce across 2 and across 4
# workers (the rendezvous is worker-0's real address), a pytest job
# whose JUnit comes back from the workers: one host, and a 2-host gang
# whose host 1 ends first with a failed test; and a command job's device
# check on a 2-host gang.
. "$TESTS/e2e/lib.sh"
. "$TESTS/ssh/lib.sh"
py=$(python_with torch)
[ -n "$py" ] || { echo "SKIP: no python3 with torch (apt-get install python3-torch)"; exit 77; }
pyt=$(python_with pytest)
ssh_start 4
ssh_link
a=("${SSH_ADDR[@]}")

cat > allreduce.py <<'PY'
import datetime, os
import torch
import torch.distributed as dist
dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=120))
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print("rank %d of %d: sum %g via %s" % (dist.get_rank(), dist.get_world_size(), t.item(),
                                      os.environ["MASTER_ADDR"]), flush=True)
dist.destroy_process_group()
PY
mkdir -p proj/tests
# The gang's host 0 starts its tests once host 1's pytest has ended (a
# test failed, exit 1; the workers share proj/): host 0 must still run its
# tests to their end, since its JUnit is the gang's report.
cp "$TESTS/pytest/gang/conftest.py" proj/
cat > proj/tests/test_w.py <<'PY'
import os

def test_ok():
    assert os.environ["TPUCI"] == "1"

def test_fails():
    assert os.environ.get("NOPE") == "yes"
PY

cat > spec.lua <<LUA
hosts "two" { "${a[0]}", "${a[1]}", ssh_config = "sshd/ssh_config" }
hosts "four" { "${a[0]}", "${a[1]}", "${a[2]}", "${a[3]}", ssh_config = "sshd/ssh_config" }
hosts "one" { "${a[2]}", ssh_config = "sshd/ssh_config" }
topology "t2" { hosts = 2, emulate = "none" }
topology "t4" { hosts = 4, emulate = "none" }
local gloo = { GLOO_SOCKET_IFNAME = "eth0" }
job "gloo2" { topology = "t2", hosts = "two", workdir = "$WORK", env = gloo,
              timeout = "5m", run = "$py allreduce.py" }
job "gloo4" { topology = "t4", hosts = "four", workdir = "$WORK", env = gloo,
              timeout = "5m", run = "$py allreduce.py" }
LUA
if [ -n "$pyt" ]; then
  cat >> spec.lua <<LUA
job "tests" { hosts = "one", workdir = "$WORK/proj", timeout = "5m",
              pytest = { python = "$pyt", args = { "tests/" } } }
job "gangtests" { topology = "t2", hosts = "two", workdir = "$WORK/proj", timeout = "5m",
                  env = { GANG_SYNC = "$WORK/proj" },
                  pytest = { python = "$pyt", args = { "tests/" } } }
LUA
fi

start=$(date +%s%N)
# -j 4: the two gloo gangs share worker 0 and its MASTER_PORT, so they
# must not run at once (docs/ssh.md, "Known limits").
run_tpuci run -j 4 --junit merged.xml spec.lua
took=$(( ($(date +%s%N) - start) / 1000000 ))
echo "ssh gangs: $took ms" >&2
if [ -n "$pyt" ]; then
  expect_code 1 "the gangs and the failing tests"
else
  expect_code 0 "the gangs"
fi
expect_json '[i["outcome"] for i in s["instances"] if i["name"].startswith("gloo")]' "['passed', 'passed']"
for h in 0 1; do
  grep -qx "\[worker-$h\] rank $h of 2: sum 3 via ${a[0]}" .tpuci/runs/latest/gloo2/attempt-1.log &&
    pass || fail "gloo2 worker-$h: $(cat .tpuci/runs/latest/gloo2/attempt-1.log)"
done
for h in 0 1 2 3; do
  grep -qx "\[worker-$h\] rank $h of 4: sum 10 via ${a[0]}" .tpuci/runs/latest/gloo4/attempt-1.log &&
    pass || fail "gloo4 worker-$h: $(cat .tpuci/runs/latest/gloo4/attempt-1.log)"
done
ms=$(json '[i for i in s["instances"] if i["name"] == "gloo4"][0]["attempts"][0]["duration_ms"]')
echo "4-worker gloo gang: $ms ms" >&2

if [ -n "$pyt" ]; then
  # The JUnit of each came back: both tests, one failure, per instance.
  check=$(/usr/bin/python3 - merged.xml <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = {}
for tc in root.iter("testcase"):
    failed = tc.find("failure") is not None or tc.find("error") is not None
    if tc.get("name").startswith("test_"):
        cases.setdefault(tc.get("name"), []).append(failed)
want = {"test_ok": [False, False], "test_fails": [True, True]}
if {k: sorted(v) for k, v in cases.items()} != want:
    print("cases: %r" % cases)
PY
)
  # (On failure, what tpuci said of the copies back: a failed copy is told.)
  [ -z "$check" ] && pass ||
    fail "merged JUnit: $check; tpuci said: $(printf '%s\n' "$out" | grep -iE 'ssh:|results|junit' | head -5)"
  expect_json '[i["outcome"] for i in s["instances"] if i["name"].endswith("tests")]' "['failed', 'failed']"
fi
# A command job's device check on the workers (expect_devices): the
# verdict comes back with the results (tar over ssh); a mismatch is infra
# and the command runs on no worker, a match runs it on both.
# dspec ENV: a 2-host gang on an emulated v4-16 (4 devices a host).
dspec() {
  cat > devices.lua <<LUA
hosts "two" { "${a[0]}", "${a[1]}", ssh_config = "sshd/ssh_config" }
topology "v4-16" { emulate = "jax" }
job "dev" { topology = "v4-16", hosts = "two", workdir = "$WORK", timeout = "2m",
            expect_devices = "jax",
            env = { PYTHONPATH = "$TESTS/pytest/plugin/standin", $1 },
            run = "touch $WORK/dev.\$TPUCI_HOST" }
LUA
  rm -f dev.*
}
dspec 'STANDIN_JAX_DEVICES = "8"'
run_tpuci run devices.lua
expect_code 1 "ssh: jax sees 8 of 4"
# (the worker whose check ended first: its exit stops its peer's)
expect_out "[infra  ] dev: device check: jax sees 8 cpu devices, expected 4 cpu devices (emulated) on worker-"
[ ! -e dev.0 ] && [ ! -e dev.1 ] && pass || fail "ssh: the command ran after a mismatch"
dspec 'X = "1"'
run_tpuci run devices.lua
expect_code 0 "ssh: jax sees 4 of 4"
[ -e dev.0 ] && [ -e dev.1 ] && pass || fail "ssh: the command did not run on both workers: $out"

for i in 0 1 2 3; do
  left=$(ssh_left "${SSH_NS[$i]}" "allreduce\|pytest")
  [ -z "$left" ] && pass || fail "worker-$i still runs: $left"
done
finish
