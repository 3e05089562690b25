#!/usr/bin/env bash
# The pytest jobs of tests/pytest/spec.lua in real containers of the
# Python test image (tests/images/build-python.sh): the same checks as
# run.sh, plus an OOM under a memory limit, and the source tree mounted
# read-only stays clean.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

mkdir flaky
chmod 777 flaky
TPUCI_PYTEST_IMAGE=$image TPUCI_PYTHON=python3 FLAKY_DIR="$WORK/flaky" \
  run_tpuci run -j 2 --junit merged.xml "$TESTS/pytest/spec.lua"
expect_code 1 "pytest in containers"
expect_out "suite: 9 tests, 2 failed, 1 flaky"
expect_out "[oom    ] oom:"
check=$(/usr/bin/python3 "$TESTS/pytest/check.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 1 count 2>&1)
[ "$check" = ok ] && pass || fail "docker run: $check"
[ -z "$(find "$TESTS/pytest/project" -name '.pytest_cache' -o -name '__pycache__')" ] && pass ||
  fail "the mounted source tree was written"

# GitHub annotations point at files of the repository, not of the
# container: tests/pytest is mounted at /src and pytest runs in
# /src/project, so /src/project/tests/test_outcomes.py is
# project/tests/test_outcomes.py from the workspace (tests/pytest).
rm -f flaky/*
GITHUB_ACTIONS=true GITHUB_WORKSPACE="$TESTS/pytest" TPUCI_PYTEST_MOUNT_SPEC_DIR=1 \
  TPUCI_PYTEST_IMAGE=$image TPUCI_PYTHON=python3 FLAKY_DIR="$WORK/flaky" \
  run_tpuci run --only suite "$TESTS/pytest/spec.lua"
expect_code 1 "pytest in containers under GitHub"
expect_out "::error file=project/tests/test_outcomes.py,line=13,title=tests/test_outcomes.py%3A%3Atest_fails failed in suite::"
expect_out "::warning file=project/tests/test_outcomes.py,line=44,title=tests/test_outcomes.py%3A%3Atest_flaky_first_attempt flaky in suite::"
expect_not_out "file=/src" "a container path in an annotation"
finish
