#!/usr/bin/env bash
# What a running attempt says while it runs (issue 22.3): plain output's
# alive lines (--alive: elapsed, the test it is in from pytest's
# progress, output bytes, how long it has been quiet), the terminal board
# showing the test, not the last output line, for a gang every host's;
# --alive 0 prints none, and a bad --alive is a usage error.
. "$TESTS/e2e/lib.sh"
# Every run here runs its spec again and means it to run: each run
# shows what a running attempt says (docs/cache.md: a stored pass
# would answer instead).
export TPUCI_NO_CACHE=1
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/alive/spec.lua

run_tpuci run --plain --alive 1s -j 2 "$spec"
expect_code 0 "the alive run"
expect_out "[alive  ] py: " "an alive line for the pytest job"
expect_out ", in tests/test_live.py::test_slow for " "the test it is in"
expect_out "[alive  ] quiet: " "an alive line for the command job"
# Quiet for a second or more after its first line.
printf '%s\n' "$out" | grep -Eq '^\[alive  \] quiet: [0-9.]+s, 8 B output, none for [0-9.]+s$' && pass ||
  fail "the quiet job's alive line does not say how long it has been quiet"
printf '%s\n' "$out" | grep -q '^\[alive  \] .*test_quick' && fail "an alive line names a test that ended" || pass

run_tpuci run --plain --alive 0 -j 2 "$spec"
expect_code 0 "--alive 0"
expect_not_out "[alive" "--alive 0"
run_tpuci run --alive 500ms "$spec"
expect_code 2 "--alive under 1s"
expect_out "--alive needs a duration of at least 1s"

# The board (script(1) gives tpuci a terminal) shows the running test.
if command -v script >/dev/null; then
  env -u CI -u GITHUB_ACTIONS script -qec "'$TPUCI' run --only py '$spec'" /dev/null > tty.out 2>&1 < /dev/null
  out=$(cat tty.out)
  expect_out "py #1 " "the board's row"
  expect_out "tests/test_live.py::test_slow (" "the board shows the running test"
else
  fail "script(1) is missing (util-linux)"
fi

# A gang: every host's test (both hosts are in test_slow at once).
sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
if curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping >/dev/null 2>&1 &&
   docker image inspect tpuci-test/python:1 >/dev/null 2>&1; then
  TPUCI_PYTEST_IMAGE=tpuci-test/python:1 run_tpuci run --plain --alive 1s --only gang "$spec"
  expect_code 0 "the gang"
  expect_out "in tests/test_live.py::test_slow on all 2 hosts for " "the gang's hosts in one test"
else
  echo "note: no engine or no tpuci-test/python:1: the gang's part was not run" >&2
fi
finish
