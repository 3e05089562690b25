#!/usr/bin/env bash
# Reports: summary.json, --report-json and --report-yaml validate against
# docs/report.schema.json and say the same thing; `tpuci show` and
# `tpuci rerun --failed` read them back.
. "$TESTS/e2e/lib.sh"
schema="$TESTS/../docs/report.schema.json"

mkdir out
OUT="$WORK/out" run_tpuci run -j 2 --report-json r.json --report-yaml r.yaml "$SPECS/basic.lua"
expect_code 1 "basic run"
check=$(/usr/bin/python3 - "$schema" r.json r.yaml .tpuci/runs/latest/summary.json <<'PY' 2>&1
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
j = json.load(open(sys.argv[2]))
y = yaml.safe_load(open(sys.argv[3]))
s = json.load(open(sys.argv[4]))
jsonschema.validate(j, schema)
jsonschema.validate(y, schema)
assert j == y, "YAML and JSON reports differ"
assert j == s, "--report-json differs from summary.json"
assert j["verdict"] == "failed" and j["exit_code"] == 1
bad = [i for i in j["instances"] if i["name"] == "bad"][0]
assert bad["attempts"][0]["log_tail"] == "about to fail\nbroken\n", bad["attempts"][0]["log_tail"]
assert j["instances"][2]["matrix"] == {"python": "3.10"}
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "report validation: $check"

# A NUL byte in a job's output: every report keeps the bytes after it
# (the failure message), each escaped its own way.
cat > nul.lua <<'LUA'
job "nul" { run = "printf 'before\\000after: the failure message\\n'; exit 1" }
LUA
run_tpuci run --report-json nul.json --report-yaml nul.yaml --junit nul.xml nul.lua
expect_code 1 "a job whose output holds a NUL"
check=$(/usr/bin/python3 - nul.json nul.yaml nul.xml .tpuci/runs/latest/report.html <<'PY' 2>&1
import json, sys, yaml
import xml.etree.ElementTree as ET
want = "before\0after: the failure message\n"
j = json.load(open(sys.argv[1]))
y = yaml.safe_load(open(sys.argv[2]))
assert j["instances"][0]["attempts"][0]["log_tail"] == want, repr(j["instances"][0]["attempts"][0]["log_tail"])
assert y["instances"][0]["attempts"][0]["log_tail"] == want, repr(y["instances"][0]["attempts"][0]["log_tail"])
out = ET.parse(sys.argv[3]).getroot().find(".//testcase/system-out").text
assert out == "before#x00after: the failure message\n", repr(out)
html = open(sys.argv[4], encoding="utf-8").read()
assert "before\ufffdafter: the failure message" in html, "report.html lost the text after the NUL"
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "NUL in a log tail: $check"

# The HTML report: always in the run folder, and where --report-html says.
run_tpuci run --report-html page.html "$SPECS/pass.lua"
expect_code 0 "--report-html"
[ -s page.html ] && grep -q "verdict\|PASSED\|passed" page.html && pass || fail "no --report-html page"
[ -s .tpuci/runs/latest/report.html ] && pass || fail "no report.html in the run folder"

# A flaky run and an interrupted-free timeout run validate too.
OUT="$WORK/out" run_tpuci run --report-yaml f.yaml "$SPECS/flaky.lua"
expect_code 0 "flaky run"
check=$(/usr/bin/python3 -c '
import json, sys, yaml, jsonschema
r = yaml.safe_load(open("f.yaml"))
jsonschema.validate(r, json.load(open(sys.argv[1])))
assert r["instances"][0]["outcome"] == "flaky"
print("ok")' "$schema" 2>&1)
[ "$check" = ok ] && pass || fail "flaky report: $check"

# A bad report path is reported once, with the error; the verdict stands,
# the exit code says the records are incomplete, and summary.json (written
# last) says which file is missing. show reads that back.
run_tpuci run --report-json /nonexistent/dir/r.json "$SPECS/pass.lua"
expect_code 4 "unwritable report path"
expect_out "tpuci: cannot write /nonexistent/dir/r.json: No such file or directory"
[ "$(printf '%s\n' "$out" | grep -c 'cannot write')" = 1 ] && pass || fail "told more than once"
expect_out "verdict: PASSED"
expect_out "records incomplete: 1 file could not be written (exit code 4)"
expect_out "summary: .tpuci/runs/" "the summary's path, relative to the current folder"
expect_json 's["exit_code"], s["verdict"]' "(4, 'passed')"
expect_json 's["write_errors"]' "[{'path': '/nonexistent/dir/r.json', 'error': 'No such file or directory'}]"
grep -q "Records incomplete" .tpuci/runs/latest/report.html && grep -q "/nonexistent/dir/r.json" .tpuci/runs/latest/report.html &&
  pass || fail "report.html does not say the records are incomplete"
/usr/bin/python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
  "$schema" .tpuci/runs/latest/summary.json && pass || fail "a summary with write_errors does not validate"
run_tpuci show
expect_code 4 "show a run with incomplete records"
expect_out "verdict: PASSED"
expect_out "records incomplete: 1 file could not be written (exit code 4)"

# tpuci show: the latest run, or one by id, with its exit code.
run_tpuci run "$SPECS/basic.lua"
id=$(json 's["run_id"]')
run_tpuci run "$SPECS/pass.lua"
run_tpuci show
expect_code 0 "show latest"
expect_out "verdict: PASSED"
expect_out "summary: .tpuci/runs/$(json 's["run_id"]')/summary.json" "show names the run's own summary, not latest's"
run_tpuci show "$id"
expect_code 1 "show by id"
expect_out "bad "
expect_out "verdict: FAILED"
run_tpuci show --json "$id"
[ "$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')" = "$id" ] && pass || fail "show --json"
run_tpuci show no-such-run
expect_code 2 "show unknown run"
expect_out "no such run"

# tpuci rerun --failed runs only what did not pass in the latest run.
run_tpuci run "$SPECS/basic.lua"
run_tpuci rerun --failed
expect_code 1 "rerun"
expect_out "1 instance did not pass"
expect_json '[i["name"] for i in s["instances"]]' "['bad']"
run_tpuci run "$SPECS/pass.lua"
run_tpuci rerun --failed
expect_code 0 "rerun with nothing failed"
expect_out "nothing to run again"
run_tpuci rerun
expect_code 2 "rerun without --failed"
finish
