#!/usr/bin/env bash
# Failing first (issue 22.7, changed by issue 31): a test that failed in
# the last run runs first in a process of its own (the failing-first
# process, started before the attempts), in its shard too, and every
# attempt runs its tests in pytest's own order, that one included: tpuci
# reorders no process. The console and summary.json say which tests were
# moved and why; failed_first = false keeps one process.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/first/spec.lua
failing=tests/test_many.py::test_zz_fails_at_the_end

# first_started DIR...: the first test each progress.jsonl started.
first_started() {
  for f in "$@"; do
    /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "start" in o: print(o["start"]); break' "$f"
  done
}
# collected FILE: what a process collected (kept), one id a line.
# The ids a process's progress.jsonl says it collected, one a line
# (through a file: a CI run once saw the pipe of $(...) broken under
# python's print, leaving nothing to compare).
collected() {
  /usr/bin/python3 -c 'import json,sys
with open(sys.argv[2], "w") as out:
    for l in open(sys.argv[1]):
        o = json.loads(l)
        if "collected" in o: out.write("\n".join(o["collected"]) + "\n")' "$1" "$WORK/collected.txt" &&
    cat "$WORK/collected.txt"
}

export FIRST_FAIL_ONCE=$WORK/fail-once
touch "$FIRST_FAIL_ONCE"
run_tpuci run --no-cache -j 3 "$spec"
expect_code 1 "the failing test fails"
expect_not_out "failing first:"
run=$(readlink -f .tpuci/runs/latest)
[ ! -e "$run/plain/first.log" ] && pass || fail "first run: a failing-first process without a history"
got=$(first_started "$run"/plain/results-1/progress.jsonl)
[ "$got" = "tests/test_many.py::test_pass[0]" ] && pass || fail "first run: started first: $got"

rm -f "$FIRST_FAIL_ONCE"
run_tpuci run --no-cache -j 3 "$spec"
expect_code 1 "the second run"
run=$(readlink -f .tpuci/runs/latest)
# Said on the console, with the tests moved and why.
expect_out "tpuci: plain: failing first: 1 test that failed last time runs first, in a process of its own (its attempts run every test in pytest's order): $failing"
expect_out "tpuci: plain: failing first: 1 failed, 0 passed in "
expect_out "[test   ] plain (failing first): FAILED $failing - AssertionError: still broken"
expect_out "[test   ] plain: FAILED $failing - AssertionError: still broken"
# The failing-first process ran that test alone; attempt 1 ran all 41 in
# pytest's order, the failing one last as pytest has it.
got=$(collected "$run/plain/results-first/progress.jsonl")
[ "$got" = "$failing" ] && pass || fail "the failing-first process collected: $got"
got=$(first_started "$run"/plain/results-1/progress.jsonl)
[ "$got" = "tests/test_many.py::test_pass[0]" ] && pass || fail "second run: attempt 1 started first: '$got', want pytest's first"
got=$(collected "$run/plain/results-1/progress.jsonl" | tail -n 1)
[ "$got" = "$failing" ] && pass || fail "second run: attempt 1 ran last: '$got', want $failing (pytest's order)"
[ "$(collected "$run/plain/results-1/progress.jsonl" | wc -l)" = 41 ] && pass ||
  fail "second run: attempt 1 did not run every test"
# summary.json: which tests, why, how it ended; it started first.
expect_json "[i['first']['tests'] for i in s['instances'] if i['name'] == 'plain']" "[['$failing']]"
expect_json "[i['first']['outcome'] for i in s['instances'] if i['name'] == 'plain']" "['failed']"
expect_json "[('failed_first' in i['first']['why']) for i in s['instances'] if i['name'] == 'plain']" "[True]"
expect_json "[i['first']['start_ms'] <= i['attempts'][0]['start_ms'] for i in s['instances'] if i['name'] == 'plain']" "[True]"
expect_json "[i['first'] for i in s['instances'] if i['name'] == 'off']" "[None]"
# Its attempts still count as before: one a run, the test failed in each.
expect_json "[len(i['attempts']) for i in s['instances'] if i['name'] == 'plain']" "[1]"
expect_json "[t['runs'] for i in s['instances'] if i['name'] == 'plain' for t in i['tests'] if t['id'] == '$failing']" "[2]"
# The shard that holds it has a failing-first process; the other has
# none; both attempts start with pytest's first test of their part.
n=0
for d in "$run"/sharded*; do
  [ -e "$d/results-first/progress.jsonl" ] || continue
  n=$((n + 1))
  got=$(collected "$d/results-first/progress.jsonl")
  [ "$got" = "$failing" ] && pass || fail "$d: the failing-first process collected: $got"
done
[ "$n" = 1 ] && pass || fail "$n shards had a failing-first process, want 1"
for d in "$run"/sharded*; do
  got=$(first_started "$d/results-1/progress.jsonl")
  want=$(collected "$d/results-1/progress.jsonl" | head -n 1)
  [ "$got" = "$want" ] && [ "$got" != "$failing" ] && pass ||
    fail "$d: attempt 1 started with '$got', pytest's first is '$want'"
done
[ ! -e "$run/off/first.log" ] && pass || fail "failed_first = false: a failing-first process"
# Every test ran all the same.
expect_json "[len(i['tests']) for i in s['instances'] if i['name'] == 'plain']" "[41]"

# A failing-first process that hangs never outlasts its instance's
# attempts: stopped when they are over, its test's result the attempt's.
expect_json "[(i['first']['outcome'], i['first']['cause'].startswith(\"stopped: its instance's attempts were over while running t/test_h.py::test_hangs_when_first\")) for i in s['instances'] if i['name'] == 'hang']" \
  "[('cancelled', True)]"
expect_json "[(t['outcome'], t['order_dependent'], t['flaky']) for i in s['instances'] if i['name'] == 'hang' for t in i['tests'] if t['id'] == 't/test_h.py::test_hangs_when_first']" \
  "[('passed', False, False)]"
expect_json "[i['outcome'] for i in s['instances'] if i['name'] == 'hang']" "['passed']"

# The plan says which jobs do it.
run_tpuci plan --json "$spec"
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print([i["pytest"]["failed_first"] for i in json.load(sys.stdin)["instances"]])')
[ "$got" = "[True, True, True, False, 'always', False, False, True]" ] && pass || fail "plan --json: failed_first: $got"

# Issue 44: failing first only where it can tell something new. The
# failing test failed in both runs so far; the last run again, three
# times, makes it five: it fails steadily, so it runs in its attempts
# only and tpuci says why; failed_first = "always" still runs it first.
/usr/bin/python3 - .tpuci/history.jsonl <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
last = json.loads(lines[-1])
with open(sys.argv[1], "a") as f:
    for i in range(3):
        last["run"] = "copy-%d" % i
        f.write(json.dumps(last) + "\n")
PY
run_tpuci run --no-cache -j 3 "$spec"
expect_code 1 "a steadily failing test"
run=$(readlink -f .tpuci/runs/latest)
expect_out "tpuci: plain: failing first: 1 test failed in each of its last 5 runs, so running it first tells nothing new: it runs in its attempts only (pytest.failed_first = \"always\" runs it first too): $failing"
expect_out "tpuci: sharded: failing first: 1 test failed in each of its last 5 runs"
expect_not_out "tpuci: plain: failing first: 1 test that failed last time"
expect_not_out "tpuci: always: failing first: 1 test failed in each"
expect_out "tpuci: always: failing first: 1 test that failed last time runs first"
[ ! -e "$run/plain/results-first" ] && pass || fail "a steadily failing test ran first"
[ -e "$run/always/results-first" ] && pass || fail "failed_first = \"always\": no failing-first process"
expect_json "[t['runs'] for i in s['instances'] if i['name'] == 'plain' for t in i['tests'] if t['id'] == '$failing']" "[1]"
# Nor is it retried: its attempt is the only one, and tpuci says why;
# retry_steady = true retries it still.
expect_out "tpuci: retried: no retry: its 1 failed test failed in each of its last 5 runs before this one too, so a retry tells nothing new (pytest.retry_steady = true retries it): $failing"
expect_json "[len(i['attempts']) for i in s['instances'] if i['name'] in ('retried', 'retried_steady')]" "[1, 2]"
expect_not_out "retried_steady: no retry"

# A run that pytest stopped at collection ran no test: the next run takes
# none of its tests as failed last time (it would have run them all).
FIRST_COLLECT_ERROR=1 run_tpuci run --no-cache -j 3 "$spec"
expect_code 1 "a collection error"
run_tpuci run --no-cache -j 3 "$spec"
expect_code 1 "after a collection error"
expect_not_out "plain: failing first:"
expect_not_out "always: failing first:"
run=$(readlink -f .tpuci/runs/latest)
[ ! -e "$run/always/results-first" ] && pass || fail "after a collection error: a failing-first process"
finish
