#!/usr/bin/env bash
# pytest jobs end to end with the local runtime and Debian's python3-pytest:
# exact per-test outcomes in the merged JUnit, retries of only the failed
# tests, flaky kept with its earlier failure, a timeout as a failed test
# case, exit 5 handling, and shards balanced by the recorded durations.
. "$TESTS/e2e/lib.sh"
# Every run here runs its spec again and means it to run: what a run
# records changes what the next one does (docs/cache.md: a stored pass
# would answer instead).
export TPUCI_NO_CACHE=1
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir flaky
FLAKY_DIR="$WORK/flaky" run_tpuci run -j 2 --junit merged.xml "$TESTS/pytest/spec.lua"
expect_code 1 "pytest run"
expect_out "suite: 9 tests, 2 failed, 1 flaky"
expect_out "failed tests/test_outcomes.py::test_fails: AssertionError: arithmetic is broken"
expect_out "flaky  tests/test_outcomes.py::test_flaky_first_attempt"
expect_out "sharded: 15 tests in 3 shards (by count: no recorded durations), tests per shard 5, 5, 5"
check=$(/usr/bin/python3 "$TESTS/pytest/check.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 0 count 2>&1)
[ "$check" = ok ] && pass || fail "first run: $check"
cmp -s merged.xml .tpuci/runs/latest/junit.xml && pass || fail "--junit differs from the run folder's junit.xml"
[ -s .tpuci/timings.json ] && pass || fail "no .tpuci/timings.json"
# Each shard test's recorded duration is at least its sleep; the record
# then gets the sleeps themselves, so the split checked below does not
# hang on how much a loaded machine added to a 0.05 s sleep.
check=$(/usr/bin/python3 - <<'PY'
import json, re
p = ".tpuci/timings.json"
t = json.load(open(p))
durations = [0.6, 0.5, 0.4] + [0.05] * 12
seen = 0
for k, v in t["tests"].items():
    m = re.search(r"test_shards\.py::test_work\[(\d+)\]$", k)
    if m is None:
        continue
    seen += 1
    want = durations[int(m.group(1))]
    if v["avg"] < 0.9 * want:
        print("%s recorded %.3fs, slept %.2fs" % (k, v["avg"], want))
    v["avg"] = v["last"] = want
if seen != 15:
    print("%d shard tests recorded, want 15" % seen)
json.dump(t, open(p, "w"))
PY
)
[ -z "$check" ] && pass || fail "timings.json: $check"

# Second run: shards use the durations the first one recorded.
rm -f flaky/*
FLAKY_DIR="$WORK/flaky" run_tpuci run -j 2 --junit merged.xml "$TESTS/pytest/spec.lua"
expect_out "sharded: 15 tests in 3 shards (by recorded durations)"
check=$(/usr/bin/python3 "$TESTS/pytest/check.py" "$(readlink -f .tpuci/runs/latest)" merged.xml 0 balanced 2>&1)
[ "$check" = ok ] && pass || fail "second run: $check"

# tpuci plan predicts each shard from the latest run's tests and timings.
FLAKY_DIR="$WORK/flaky" run_tpuci plan --only 'sharded*' "$TESTS/pytest/spec.lua"
expect_code 0 "plan with shards"
expect_out "sharded[shard=1/3]: "
# (The figure is the recorded durations' sum: it grows on a loaded machine.)
n=$(printf '%s\n' "$out" | grep -cE "^  sharded\[shard=[123]/3\]: [0-9]+ tests, predicted [0-9]+\.[0-9]s \(from the latest run's tests\)$")
[ "$n" = 3 ] && pass || fail "plan: $n shards predicted from the latest run's tests, want 3: $out"
FLAKY_DIR="$WORK/flaky" run_tpuci plan --json --only 'sharded*' "$TESTS/pytest/spec.lua"
n=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print(sum(i["pytest"]["tests"] for i in json.load(sys.stdin)["instances"]))')
[ "$n" = 15 ] && pass || fail "plan --json predicted shard tests add up to $n, want 15"

# rerun --failed: only the instances that did not pass, and in a pytest
# instance only its failed tests.
FLAKY_DIR="$WORK/flaky" run_tpuci rerun --failed
expect_out "did not pass; running them again"
expect_json 'sorted(i["name"] for i in s["instances"])' "['empty', 'hang', 'suite']"
log=$(json '[i for i in s["instances"] if i["name"] == "suite"][0]["attempts"][0]["log"]')
grep -q "collected 2 items" "$log" && pass || fail "rerun of suite did not run only its 2 failed tests: $(grep collected "$log")"

# Under GitHub Actions: an ::error per failing test and a ::warning per
# flaky one, at its file (relative to the repository: here the workspace
# is tests/pytest, pytest's rootdir its project/ folder) and the line it
# failed at (the fixture's raise for the setup error; a flaky test's own
# line); the step summary lists them.
rm -f flaky/*
GITHUB_ACTIONS=true GITHUB_WORKSPACE="$TESTS/pytest" GITHUB_STEP_SUMMARY="$WORK/step.md" \
  FLAKY_DIR="$WORK/flaky" run_tpuci run --only suite "$TESTS/pytest/spec.lua"
expect_out "::error file=project/tests/test_outcomes.py,line=13,title=tests/test_outcomes.py%3A%3Atest_fails failed in suite::AssertionError: arithmetic is broken"
expect_out "::error file=project/tests/test_outcomes.py,line=18,title=tests/test_outcomes.py%3A%3Atest_fixture_error error in suite::"
expect_out "::warning file=project/tests/test_outcomes.py,line=44,title=tests/test_outcomes.py%3A%3Atest_flaky_first_attempt flaky in suite::"
summary=$(cat "$WORK/step.md")
case "$summary" in
  *"#### Failed tests"*'| `tests/test_outcomes.py::test_fails` | `suite` | failed | `AssertionError: arithmetic is broken` |'*"#### Flaky tests"*'| `tests/test_outcomes.py::test_flaky_first_attempt` | `suite` | 2 |'*) pass ;;
  *) fail "step summary: $summary" ;;
esac

# The project's tree stays clean: no caches, no bytecode.
[ -z "$(find "$TESTS/pytest/project" -name '.pytest_cache' -o -name '__pycache__' -o -name '.tpuci')" ] && pass ||
  fail "the source tree was written: $(find "$TESTS/pytest/project" -name '.pytest_cache' -o -name '__pycache__' -o -name '.tpuci')"
finish
