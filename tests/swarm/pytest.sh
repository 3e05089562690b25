#!/usr/bin/env bash
# The pytest jobs of tests/pytest/spec.lua as swarm services (--engine swarm) of the
# Python test image (tests/images/build-python.sh): the same checks as
# run.sh (JUnit read back from the results folder: the tasks are placed on
# the manager, docs/swarm.md), plus an OOM under a memory limit, and the source tree mounted
# read-only stays clean.
. "$TESTS/swarm/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

mkdir flaky
chmod 777 flaky
TPUCI_PYTEST_IMAGE=$image TPUCI_PYTHON=python3 FLAKY_DIR="$WORK/flaky" \
  run_tpuci run -j 2 --engine swarm --junit merged.xml "$TESTS/pytest/spec.lua"
expect_code 1 "pytest in containers"
expect_out "suite: 9 tests, 2 failed, 1 flaky"
expect_out "[oom    ] oom:"
check=$(/usr/bin/python3 "$TESTS/pytest/check.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 1 count 2>&1)
[ "$check" = ok ] && pass || fail "swarm run: $check"
[ -z "$(find "$TESTS/pytest/project" -name '.pytest_cache' -o -name '__pycache__')" ] && pass ||
  fail "the mounted source tree was written"
finish
