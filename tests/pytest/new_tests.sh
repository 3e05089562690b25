#!/usr/bin/env bash
# Issue 35.5: pytest.new_tests = { runs = N }: a test the history has
# never seen for its job runs N times in all before its pass counts; one
# that fails any run fails its instance, with a message that says so, in
# every report; known tests run once; a job without history, or with
# more than 30% of its tests new, runs nothing again and says why.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir -p tests
cat > spec.lua <<'LUA'
job "n" { pytest = { python = "/usr/bin/python3", args = { "tests/" }, new_tests = { runs = 5 } },
          workdir = tpuci.spec_dir, env = { COUNT_DIR = tpuci.spec_dir } }
LUA
/usr/bin/python3 -c "print('\n'.join('def test_%d():\n    pass\n' % i for i in range(10)))" > tests/test_a.py

# No history of the job yet: nothing is new.
run_tpuci run spec.lua
expect_code 0 "the first run"
expect_out "n: new tests: the history has no run of n yet, so no test of it is new (each ran once)"

cat > tests/test_b.py <<'PY'
import os


def runs(name):
    """How many times this test ran before, counted in a file."""
    path = os.path.join(os.environ["COUNT_DIR"], name + ".count")
    n = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(n + 1))
    return n


def test_new_ok():
    runs("ok")


def test_new_flaky():
    assert runs("flaky") != 2, "fails on its third run"


def test_new_broken():
    assert False, "broken from the start"
PY
run_tpuci run spec.lua
expect_code 1 "a new flaky test fails the run"
expect_out "n: new tests: 2 new tests ran again, up to 5 runs each: failed in some runs: tests/test_b.py::test_new_flaky (1 of 3)"
expect_out "n (run again after its attempts): FAILED tests/test_b.py::test_new_flaky - AssertionError: fails on its third run"
expect_out "failed tests/test_b.py::test_new_flaky: new test, failed 1 of its 3 runs (pytest.new_tests.runs = 5): not counted as passing"
[ "$(cat ok.count)" = 5 ] && pass || fail "test_new_ok ran $(cat ok.count) times, want 5"
[ "$(cat flaky.count)" = 3 ] && pass || fail "test_new_flaky ran $(cat flaky.count) times, want 3 (it stops at its failure)"
ls .tpuci/runs/latest/n/new-4.log >/dev/null && [ ! -e .tpuci/runs/latest/n/new-5.log ] && pass || fail "new-N logs: $(ls .tpuci/runs/latest/n)"
expect_json "[(t['id'].split('::')[1], t['outcome']) for t in s['instances'][0]['tests'] if 'test_b' in t['id']]" \
  "[('test_new_ok', 'passed'), ('test_new_flaky', 'failed'), ('test_new_broken', 'failed')]"
grep -q 'new test, failed 1 of its 3 runs' .tpuci/runs/latest/junit.xml && pass || fail "the merged JUnit does not say why"
grep -q 'fails on its third run' .tpuci/runs/latest/junit.xml && pass || fail "the merged JUnit lost the first failure"
tail -1 .tpuci/history.jsonl | grep -q '"tests/test_b.py::test_new_flaky","f"' && pass || fail "history: the new flaky test is no failure"

# Known now: each runs once, and the run passes when they do.
rm -f ok.count
sed -i 's/assert False, "broken from the start"/pass/' tests/test_b.py
run_tpuci run spec.lua
expect_code 0 "known tests run once"
expect_not_out "new tests:" "no test is new"
[ "$(cat ok.count)" = 1 ] && pass || fail "test_new_ok ran $(cat ok.count) times, want 1"
[ ! -e .tpuci/runs/latest/n/new-1.log ] && pass || fail "a process ran known tests again"

# More than 30% new (a rename): none runs again, and a line says why.
/usr/bin/python3 -c "print('\n'.join('def test_c%d():\n    pass\n' % i for i in range(8)))" > tests/test_c.py
run_tpuci run spec.lua
expect_code 0 "a rename"
expect_out "n: new tests: 8 of its 21 tests are new to the history (over 30%: a rename, or another branch's history): none runs again"

# The plan says it; the spec's mistakes are one line each.
run_tpuci plan --json spec.lua
printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["instances"][0]["pytest"]["new_tests_runs"] == 5' \
  && pass || fail "plan --json: no new_tests_runs"
for bad in 'new_tests = { runs = 1 }' 'new_tests = 5' 'new_tests = { count = 5 }' 'new_tests = {}'; do
  printf 'job "n" { pytest = { args = { "t" }, %s } }\n' "$bad" > bad.lua
  run_tpuci plan bad.lua
  expect_code 2 "$bad"
done
printf 'job "n" { pytest = { args = { "t" }, new_tests = { runs = 1 } } }\n' > bad.lua
run_tpuci plan bad.lua
expect_out "pytest.new_tests.runs: must be between 2 and 50, got 1"
printf 'job "n" { pytest = { args = { "t" }, new_tests = 5 } }\n' > bad.lua
run_tpuci plan bad.lua
expect_out "expected a table like { runs = 5 }, got number"
finish
