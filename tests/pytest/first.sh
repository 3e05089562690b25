#!/usr/bin/env bash
# Failing first (issue 22.7): a test that failed in the last run is the
# first one the next run starts, in its shard too; failed_first = false
# keeps pytest's order; the timings store records which tests failed.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/first/spec.lua
failing=tests/test_many.py::test_zz_fails_at_the_end

# first_started DIR: the first test each progress.jsonl under DIR started.
first_started() {
  for f in $(find "$1" -name progress.jsonl | sort); do
    /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "start" in o: print(o["start"]); break' "$f"
  done
}

run_tpuci run -j 3 "$spec"
expect_code 1 "the failing test fails"
/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tests"]; print(t[sys.argv[2]].get("failed"), t["tests/test_many.py::test_pass[0]"].get("failed"))' \
  .tpuci/timings.json "$failing" > flags 2>&1
[ "$(cat flags)" = "True None" ] && pass || fail "timings.json's failed flags: $(cat flags)"
got=$(first_started .tpuci/runs/latest/plain)
[ "$got" = "tests/test_many.py::test_pass[0]" ] && pass || fail "first run: started first: $got"

run_tpuci run -j 3 "$spec"
expect_code 1 "the second run"
got=$(first_started .tpuci/runs/latest/plain)
[ "$got" = "$failing" ] && pass || fail "second run: started first: '$got', want the test that failed"
# The shard that holds it starts with it.
for d in "$(readlink -f .tpuci/runs/latest)"/sharded*; do first_started "$d"; done > shards.txt
[ "$(grep -cxF "$failing" shards.txt)" = 1 ] && [ "$(wc -l < shards.txt)" = 2 ] && pass ||
  fail "the failing test's shard did not start with it: $(cat shards.txt)"
got=$(first_started .tpuci/runs/latest/off)
[ "$got" = "tests/test_many.py::test_pass[0]" ] && pass || fail "failed_first = false: started first: $got"
# Every test ran all the same.
expect_json "[len(i['tests']) for i in s['instances'] if i['name'] == 'plain']" "[41]"

# The plan says which jobs do it.
run_tpuci plan --json "$spec"
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print([i["pytest"]["failed_first"] for i in json.load(sys.stdin)["instances"]])')
[ "$got" = "[True, True, True, False]" ] && pass || fail "plan --json: failed_first: $got"
finish
