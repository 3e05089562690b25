#!/usr/bin/env bash
# One of a thing is said in the singular (issue 37): a run with one test,
# one instance, one attempt, a sharded job with one test, a flake probe
# of one repetition, one instance to run again, a history of one run.
# Every line printed is also looked through for "1 tests", "1 runs" and
# the like.
. "$TESTS/e2e/lib.sh"
if ! /usr/bin/python3 -m pytest --version > /dev/null 2>&1; then
  echo "SKIP: no pytest in /usr/bin/python3 (python3-pytest)"
  exit 77
fi
export PATH=/usr/bin:$PATH
# Every run here means to run (the results cache would skip them).
export TPUCI_NO_CACHE=1

mkdir tests
cat > tests/test_one.py <<'PY'
import os

def test_one():
    assert os.environ.get("FAIL") != "1"
PY
cat > one.lua <<'LUA'
job "one" { pytest = { args = { "tests/test_one.py" } }, env = { FAIL = tpuci.env("FAIL", "0") } }
job "split" { pytest = { args = { "tests/test_one.py" }, shards = 2, allow_empty = true } }
LUA

# plural_free: no "1 NOUNs" in $out.
plural_free() {
  local bad
  bad=$(printf '%s\n' "$out" |
        grep -oE '(^|[^0-9./])1 (tests|instances|attempts|runs|shards|repetitions|files|hosts|chips|entries|failures|warnings|markers|jobs|test paths|variables|node ids|packages)\b' |
        head -n 3)
  [ -z "$bad" ] && pass || fail "$1: plural after 1: $bad"
}

run_tpuci run --plain --only one one.lua
expect_code 0 "one test"
expect_out "one: 1 test, 0 failed, 0 flaky" "the tests line"
plural_free "a run of one test"

run_tpuci run --plain --only split one.lua
expect_code 0 "one test in two shards"
expect_out "split: 1 test in 2 shards" "the shards line"
plural_free "a sharded run of one test"

run_tpuci run --plain --repeat 1 --only one one.lua
expect_code 0 "a probe of one repetition"
expect_out "flake probe: 1 repetition;" "the probe's line"
plural_free "a probe of one repetition"

FAIL=1 run_tpuci run --plain --only one one.lua
expect_code 1 "one failing test"
expect_out "one: 1 test, 1 failed, 0 flaky"
plural_free "a failing run"
run_tpuci rerun --failed --plain --only one
expect_out "tpuci rerun: 1 instance did not pass; running it again"
plural_free "rerun"

# The history's report of one failing run (a fresh state folder).
FAIL=1 run_tpuci run --plain --state-dir one-run --only one one.lua
run_tpuci flaky --state-dir one-run
expect_out "1 run in the history"
expect_out "1 test failed in it"
plural_free "flaky"

# The step summary and annotations under GitHub Actions.
FAIL=1 GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/step.md" run_tpuci run --only one one.lua
plural_free "a GitHub run"
out=$(cat step.md)
plural_free "the step summary"
finish
