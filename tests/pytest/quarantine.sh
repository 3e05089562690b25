#!/usr/bin/env bash
# The quarantine (issue 22.5, docs/quarantine.md): tpuci-quarantine.yaml
# beside the spec. A quarantined test still runs, and its failure does not
# fail the run but is reported as quarantined in the console, the JUnit
# (properties), summary.json (against the schema), the HTML report and
# GitHub's step summary; an expired entry is a warning and its test
# counts again; a quarantined test that passed its last K runs is "ready
# to release", and `tpuci flaky --release` names the entry to remove.
# Each entry's count of what it covered is said; `test: "*"` is a
# warning. An invalid file (a second document too) stops the run before
# it starts (exit 2, file:line: key).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/quarantine/spec.lua
qfile=$TESTS/pytest/quarantine/tpuci-quarantine.yaml

# 1. test_quar and test_expired fail: the first is quarantined, the
#    second's entry expired, so it fails the run.
MODE= run_tpuci run --plain --junit junit.xml "$spec"
expect_code 1 "an expired entry counts again"
expect_out "warning: $qfile:6: the quarantine of 'tests/test_q.py::test_exp*' (owner bob) expired on 2020-01-01: it counts again"
expect_out "quarantined tests/test_q.py::test_quar (failed): AssertionError: quarantined and failing"
expect_out "quarantined until 2099-12-31 by @alice ($qfile:2): fails on the CPU emulation, issue 123"
expect_out "failed tests/test_q.py::test_expired"
expect_out "q: 3 tests, 1 failed, 0 flaky, 1 quarantined (failed, not counted)"
expect_json "[i.get('quarantined') for i in s['instances']]" "[None]"
expect_json "s['quarantine']['expired']" "['$qfile:6']"
# What each entry covered: said at the end (the expired one covers none).
expect_out "tpuci: quarantine $qfile:2: 'tests/test_q.py::test_quar' covered 1 test in this run, 1 failing"
expect_not_out "quarantine $qfile:6:" "an expired entry's count"
expect_json "[(m['where'], m['tests'], m['failing']) for m in s['quarantine']['matched']]" \
  "[('$qfile:2', 1, 1), ('$qfile:6', 0, 0)]"

# 2. Only the quarantined test fails: the run passes, and every record
#    says why.
summary=$WORK/step-summary.md
: > "$summary"
MODE=e GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$summary run_tpuci run --junit junit.xml --report-html r.html "$spec"
expect_code 0 "a quarantined failure does not fail the run"
printf '%s\n' "$out" | grep '^::warning ' | grep 'test_quar' | grep -q 'quarantined until 2099-12-31 (@alice) in [^:]*::AssertionError' &&
  pass || fail "no ::warning for the quarantined failure: $out"
expect_not_out "::error" "no error annotation for a quarantined failure"
expect_out "passed 0, flaky 0, failed 0, timeout 0, oom 0, infra 0, cancelled 0, quarantined 1"
expect_out "verdict: PASSED"
expect_json "s['verdict'], s['instances'][0]['outcome'], s['instances'][0]['quarantined']" "('passed', 'failed', True)"
quar="[t for t in s['instances'][0]['tests'] if t['id'].endswith('::test_quar')][0]"
expect_json "sorted((t['id'].split('::')[1], t['outcome'], t.get('quarantine', {}).get('owner')) for t in s['instances'][0]['tests'])" \
  "[('test_expired', 'passed', None), ('test_ok', 'passed', None), ('test_quar', 'failed', '@alice')]"
expect_json "$quar['quarantine']['ready_to_release']" "False"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
  /usr/bin/python3 -c 'import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
    .tpuci/runs/latest/summary.json "$TESTS/../docs/report.schema.json" && pass || fail "summary.json against the schema"
fi
/usr/bin/python3 - junit.xml <<'PY' && pass || fail "junit.xml: the quarantine's properties"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
props = [(p.get("name"), p.get("value")) for p in suite.find("properties")]
assert ("tpuci.quarantined_failure", "true") in props, props
assert any(n == "tpuci.quarantined" and v.startswith("tests/test_q.py::test_quar: fails on the CPU emulation")
           and "owner @alice, until 2099-12-31" in v for n, v in props), props
PY
grep -q 'data-hook="quarantined"' r.html && pass || fail "r.html: no quarantined badge"
grep -q 'quarantined until 2099-12-31 by' "$summary" && pass || fail "step summary: $(cat "$summary")"
grep -q '| `q` | quarantined |' "$summary" && pass || fail "step summary: the instance's outcome: $(cat "$summary")"

# 3. The quarantined test passes three runs in a row: ready to release
#    after 3 (not after 4), and flaky --release names its entry.
for n in 1 2; do MODE=eq "$TPUCI" run -q --release-after 3 "$spec" > "pass$n.out" 2>&1; done
grep -q "ready to release" pass2.out && fail "ready to release after 2 passing runs: $(cat pass2.out)" || pass
MODE=eq run_tpuci run --release-after 3 --report-html r.html "$spec"
expect_code 0 "the quarantined test passes"
expect_out "ready to release: tests/test_q.py::test_quar ($qfile:2, owner @alice): passed its last runs"
expect_json "$quar['quarantine']['ready_to_release']" "True"
grep -q 'data-hook="release"' r.html && pass || fail "r.html: no ready-to-release badge"
run_tpuci flaky --release --quarantine "$qfile" --release-after 3
expect_code 0 "flaky --release"
expect_out "$qfile:2: tests/test_q.py::test_quar (owner @alice, until 2099-12-31): passed its last 3 runs: remove the entry"
expect_not_out "test_exp*" "an expired entry is not listed"
run_tpuci flaky --release --quarantine "$qfile" --release-after 4
expect_out "no quarantine entry is ready to release (4 passing runs in a row needed)"
run_tpuci flaky --release-after 3
expect_code 2 "--release-after without --release"

# 4. test: "*" covers every test: a warning, and its count.
printf -- '- test: "*"\n  reason: r\n  owner: bob\n  until: 2099-01-01\n' > all.yaml
MODE= run_tpuci run --plain --quarantine all.yaml "$spec"
expect_code 0 "every failure quarantined"
expect_out "warning: all.yaml:1: test '*' covers every test: no test failure fails a pytest job while it holds (until 2099-01-01, owner bob)"
expect_out "tpuci: quarantine all.yaml:1: '*' covered 3 tests in this run, 2 failing"

# 5. An invalid file (and a missing one) stops the run before it starts.
printf -- '- test: a\n  reason: r\n  owner: o\n  until: 2099-01-01\n---\n- test: b\n' > two.yaml
run_tpuci run --quarantine two.yaml "$spec"
expect_code 2 "a second document"
expect_out "two.yaml:6: a second document (the quarantine is one list of entries"
printf -- '- test: tests/x.py::t\n  reason: r\n  until: 2099-01-01\n' > bad.yaml
run_tpuci run --quarantine bad.yaml "$spec"
expect_code 2 "an invalid quarantine"
expect_out "bad.yaml:1: 'owner' is missing"
run_tpuci run --quarantine nowhere.yaml "$spec"
expect_code 2 "a missing quarantine"
expect_out "nowhere.yaml: cannot read"
finish
