#!/usr/bin/env bash
# pytest attempts cut short in the middle, in real containers of the
# Python test image (issue 18): a hang, a crash, a hung shard and a hung
# host of a gang. Every collected test stays in every report with its
# final outcome, retries run what failed, the test that was running and
# what never ran, in collection order, and console = JUnit = JSON.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

TPUCI_PYTEST_IMAGE=$image run_tpuci run -j 4 --junit merged.xml "$TESTS/pytest/unfinished/spec.lua"
expect_code 1 "a run with failures"
expect_out "hang: 4 tests, 1 failed, 1 flaky"
expect_out "hang-xpass: 3 tests, 0 failed, 1 flaky"
expect_out "hang-once: 4 tests, 4 failed, 0 flaky"
expect_out "  not run tests/test_r.py::test_c_after_the_hang, tests/test_r.py::test_d_xpass: no attempt got to them"
expect_out "abort: 44 tests, 32 failed, 0 flaky"
expect_out "failed tests/test_abort.py::test_n[12]: exit 134 while running tests/test_abort.py::test_n[12]"
expect_out "and 28 more: no attempt got to them"
expect_out "abort-retry: 44 tests, 0 failed, 1 flaky"
expect_out "gang: 3 tests, 0 failed, 1 flaky"
expect_out "while running tests/test_gang.py::test_g_b on worker-1"
# faulthandler's stacks at the SIGTERM: where it hung, per host; the
# file named from the run folder (issue 31.8).
printf '%s\n' "$out" | grep -qE '\(at /src/tests/test_r\.py:4 in test_b_hangs_on_first_attempt; thread stacks in \.tpuci/runs/[0-9a-f-]+/hang/results-1/stacks\.txt\)' &&
  pass || fail "no stacks of test_b_hangs_on_first_attempt named from the run folder"
printf '%s\n' "$out" | grep -qE '\(at /src/tests/test_gang\.py:13 in test_g_b on worker-1; thread stacks in \.tpuci/runs/[0-9a-f-]+/gang/results-[0-9]+/worker-\*/stacks\.txt\)' &&
  pass || fail "no stacks of the gang's test_g_b named from the run folder"
# pytest.test_timeout: one test fails with its stacks, the next one runs.
expect_out "test-timeout: 2 tests, 1 failed, 0 flaky"
expect_out "failed tests/test_slow.py::test_over_the_limit: "
# The non-strict XPASS passed in attempt 1 and was not run again.
expect_not_out "flaky  tests/test_r.py::test_d_xpass" "XPASS retried"
printf '%s\n' "$out" > console.out
check=$(/usr/bin/python3 "$TESTS/junit/check_counts.py" console.out merged.xml 2>&1)
[ "$check" = ok ] && pass || fail "console vs JUnit: $check"
check=$(/usr/bin/python3 "$TESTS/pytest/check_unfinished.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 2>&1)
[ "$check" = ok ] && pass || fail "reports: $check"
finish
