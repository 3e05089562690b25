#!/usr/bin/env bash
# The flake probe (issue 22.6): `tpuci run --repeat 20 --test ID` runs
# only that test, 20 times as 20 instances (one attempts.jsonl line each,
# no retries, a sharded job unsharded), each with its TPUCI_REPEAT_INDEX,
# and prints its failure rate with a 95% Wilson score interval. The test
# fails on the repetitions whose index ends in 0, 3 or 6: exactly 6 of 20,
# so the rate is 0.30 and the interval is known.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/probe/spec.lua

run_tpuci run --plain -j 4 --repeat 20 --test tests/test_p.py::test_flaky "$spec"
expect_code 1 "failing repetitions fail the run"
expect_out "flake probe: 20 repetitions; failure rate with its 95% interval (Wilson score)"
line=$(printf '%s\n' "$out" | grep -E '^  tests/test_p.py::test_flaky ')
# The printed numbers against the Wilson interval computed here.
got=$(printf '%s' "$line" | /usr/bin/python3 -c '
import math, re, sys
m = re.search(r"(\d+)/(\d+) +failed +rate ([0-9.]+) +95% interval \[([0-9.]+), ([0-9.]+)\] +\[(.*)\]", sys.stdin.read())
f, n, rate, lo, hi, inst = int(m[1]), int(m[2]), float(m[3]), float(m[4]), float(m[5]), m[6]
z = 1.959963984540054
p = f / n
c = (p + z * z / (2 * n)) / (1 + z * z / n)
h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
assert abs(lo - (c - h)) < 0.0006 and abs(hi - (c + h)) < 0.0006, (lo, hi, c - h, c + h)
assert lo <= rate <= hi and 0 < lo and hi < 1
print(f, n, "%.2f" % rate, "%.3f" % lo, "%.3f" % hi, inst)' 2>&1)
[ "$got" = "6 20 0.30 0.145 0.519 p" ] && pass || fail "the probe's line: '$line' gives '$got'"

# 20 instances of one attempt each, one attempts.jsonl line each; the
# failures are the repetitions whose index ends in 0, 3 or 6.
[ "$(wc -l < .tpuci/runs/latest/attempts.jsonl)" = 20 ] && pass ||
  fail "attempts.jsonl: $(wc -l < .tpuci/runs/latest/attempts.jsonl) lines, want 20"
expect_json "len(s['instances']), sorted({len(i['attempts']) for i in s['instances']})" "(20, [1])"
expect_json "sorted(int(i['matrix']['rep'].split('/')[0]) - 1 for i in s['instances'] if i['outcome'] == 'failed')" \
  "[0, 3, 6, 10, 13, 16]"
expect_json "s['instances'][0]['name'], 'shard' in s['instances'][0]['matrix']" "('p[rep=1/20]', False)"
# Only the chosen test ran.
expect_json "sorted({t['id'] for i in s['instances'] for t in i['tests']})" "['tests/test_p.py::test_flaky']"
expect_json "[(t['instance'], t['id'], t['runs'], t['failures'], t['rate']) for t in s['repeat']['tests']]" \
  "[('p', 'tests/test_p.py::test_flaky', 20, 6, 0.3)]"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    .tpuci/runs/latest/summary.json "$TESTS/../docs/report.schema.json" && pass || fail "summary.json against the schema"
fi
# A probe is not a run of the suite: the history has none of it.
[ ! -e .tpuci/history.jsonl ] && pass || fail "a probe wrote the history"

# --test alone: the chosen test once, in the first shard only.
run_tpuci run --plain --test tests/test_p.py::test_flaky "$spec"
expect_json "[(i['name'], [t['id'] for t in i.get('tests', [])]) for i in s['instances']]" \
  "[('p[shard=1/2]', ['tests/test_p.py::test_flaky'])]"

run_tpuci run --repeat 0 "$spec"
expect_code 2 "--repeat 0"
run_tpuci run --test tests/x.py::t "$SPECS/basic.lua"
expect_code 2 "--test without a pytest job"
expect_out "no pytest job instance is selected"
finish
