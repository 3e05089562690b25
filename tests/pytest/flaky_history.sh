#!/usr/bin/env bash
# The history across runs (issue 22.4): five runs in which one test flips
# (fails on even runs), one always fails and one always passes; `tpuci
# flaky` ranks them by flip rate with their outcomes run by run and last
# failure, as text and JSON; the HTML report shows a failed test's recent
# outcomes as a strip; --runs narrows the window; no history is a
# clear error, exit 2. The project is a git repository of its own, one
# commit: every run is of one tree, so test_flip's changes are flips
# (issue 42.6).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
cp -r "$TESTS/pytest/flaky" proj
git init -q proj && git -C proj add -A && git -C proj -c user.email=t@t -c user.name=t commit -qm init
spec=$WORK/proj/spec.lua

run_tpuci flaky
expect_code 2 "no history yet"
expect_out ".tpuci/history.jsonl: no history yet"

for n in 1 2 3 4 5; do
  echo "$n" > run.txt
  RUN_FILE=$WORK/run.txt "$TPUCI" run -q "$spec" > "run$n.out" 2>&1
done
[ "$(wc -l < .tpuci/history.jsonl)" = 5 ] && pass || fail "history.jsonl: $(wc -l < .tpuci/history.jsonl) lines, want 5"

# The latest run's report: each failed test's outcomes in the last runs.
expect_json "sorted((t['id'].split('::')[1], t.get('recent')) for t in s['instances'][0]['tests'])" \
  "[('test_broken', 'fffff'), ('test_flip', None), ('test_ok', None)]"
grep -q 'data-hook="recent"' .tpuci/runs/latest/report.html && pass || fail "report.html: no strip of recent outcomes"
grep -q '<i class="r-f">f</i><i class="r-f">f</i>' .tpuci/runs/latest/report.html && pass || fail "report.html: the strip's squares"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    .tpuci/runs/latest/summary.json "$TESTS/../docs/report.schema.json" && pass || fail "summary.json against the schema"
fi

run_tpuci flaky --json
expect_code 0 "flaky --json"
got=$(printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print(len(r["runs"]), [(t["id"].split("::")[1], t["outcomes"], t["flips"], t["fails"], t["runs"], round(t["flip_rate"], 2)) for t in r["tests"]])')
want="5 [('test_flip', 'pfpfp', 4, 2, 5, 0.8), ('test_broken', 'fffff', 0, 5, 5, 0.0)]"
[ "$got" = "$want" ] && pass || fail "flaky --json: $got, want $want"
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)["tests"][0]
assert t["last_failure_run"] and "fails on even runs" in t["last_failure"], t' && pass || fail "the last failure"

run_tpuci flaky
expect_out "5 runs in the history (.tpuci/history.jsonl), 2 tests failed in them"
expect_out "0.80      2/5     pfpfp" "the text row"
expect_out "fails on even runs" "the last failure's message"
run_tpuci flaky --runs 2 --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print([t["outcomes"] for t in json.load(sys.stdin)["tests"]])')
[ "$got" = "['fp', 'ff']" ] && pass || fail "--runs 2: $got"
run_tpuci flaky --runs x
expect_code 2 "a bad --runs"
finish
