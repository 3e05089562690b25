#!/usr/bin/env bash
# The pytest jobs of tests/pytest/spec.lua as swarm services (--engine swarm) of the
# Python test image (tests/images/build-python.sh): the same checks as
# run.sh (JUnit, progress and stacks come back through each task's log,
# docs/swarm.md, "Results": a timed-out attempt names the test it was in
# and where), plus an OOM under a memory limit, and the source tree
# mounted read-only stays clean. tpuci's lines are in no output or log. A
# results block that does not arrive whole makes the attempt infra, with
# the file and how much of it came.
. "$TESTS/swarm/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

mkdir flaky
chmod 777 flaky
# The hang's timeout counts from its service's creation: 2 m leave a
# loaded machine time to start the task and reach the test that hangs.
export TPUCI_HANG_TIMEOUT=2m
TPUCI_PYTEST_IMAGE=$image TPUCI_PYTHON=python3 FLAKY_DIR="$WORK/flaky" \
  run_tpuci run -j 2 --engine swarm --junit merged.xml "$TESTS/pytest/spec.lua"
expect_code 1 "pytest in containers"
expect_out "suite: 9 tests, 2 failed, 1 flaky"
expect_out "[oom    ] oom:"
check=$(/usr/bin/python3 "$TESTS/pytest/check.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 1 count 2>&1)
[ "$check" = ok ] && pass || fail "swarm run: $check"
[ -z "$(find "$TESTS/pytest/project" -name '.pytest_cache' -o -name '__pycache__')" ] && pass ||
  fail "the mounted source tree was written"
expect_not_out "#tpuci-"
if grep -rq -- "#tpuci-" .tpuci/runs/latest/*/attempt-*.log; then fail "tpuci's lines in a log"; else pass; fi

# A block cut short: a test prints the start of one with the attempt's
# key (as a log that lost its tail would bring it), then the real block
# follows. Not a silently empty report: infra, naming the file.
mkdir -p cut/tests
cat > cut/tests/test_cut.py <<'PY'
import os


def test_cut():
    k = os.environ["TPUCI_RESULTS_LOG"]
    os.write(1, ("\n%s results begin 1\n%s file junit.xml 100 0\n%s d aGVs\n" % (k, k, k)).encode())
PY
cat > cut.lua <<LUA
image "py" { ref = "$image", pull = "never" }
job "cut" {
  image = "py", runtime = "swarm", workdir = "/src", mounts = { ["cut"] = "/src" },
  env = { PYTHONDONTWRITEBYTECODE = "1" },
  pytest = { python = "python3", args = { "-s", "tests/" } },
}
LUA
run_tpuci run cut.lua
expect_code 1 "a results block cut short"
expect_json 's["instances"][0]["outcome"]' infra
expect_json '"did not come back whole through its log: junit.xml: 3 of 100 bytes, then another block began" in s["instances"][0]["attempts"][0]["cause"]' True
expect_json 's["instances"][0]["attempts"][0]["cause"].startswith("swarm: the results of service tpuci-")' True
finish
