#!/usr/bin/env bash
# The console and the merged JUnit tell the same story, for a run of
# command jobs (pass, flaky, fail, timeout, a matrix) and one of the pytest
# jobs of tests/pytest (failures, errors, skips, flaky tests, a timeout,
# nothing collected, shards): check_counts.py compares the console's
# summary table, its per-instance test counts and its outcome counts with
# the JUnit file's suites, test cases and totals.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null ||
  { fail "/usr/bin/python3 has no pytest (Debian package python3-pytest; tests/deps.sh)"; finish; }
cat > mixed.lua <<'LUA'
job "ok" { run = "echo fine" }
job "flaky" { run = "test -e marker || { touch marker; exit 1; }", retries = { attempts = 2, backoff = "10ms" } }
job "bad" { run = "exit 3", retries = { attempts = 2, backoff = "10ms" } }
job "slow" { run = "sleep 30", timeout = "1s", grace = "100ms" }
job "matrix" { matrix = { n = { 1, 2 } }, run = "test ${matrix.n} = 1" }
LUA
run_tpuci run -j 2 --junit mixed.xml mixed.lua
expect_code 1 "command jobs"
printf '%s\n' "$out" > mixed.out
check=$(/usr/bin/python3 "$TESTS/junit/check_counts.py" mixed.out mixed.xml 2>&1)
[ "$check" = ok ] && pass || fail "command jobs: $check"

mkdir flaky
FLAKY_DIR="$WORK/flaky" run_tpuci run -j 2 --junit pytest.xml "$TESTS/pytest/spec.lua"
expect_code 1 "pytest jobs"
printf '%s\n' "$out" > pytest.out
check=$(/usr/bin/python3 "$TESTS/junit/check_counts.py" pytest.out pytest.xml 2>&1)
[ "$check" = ok ] && pass || fail "pytest jobs: $check"
finish
