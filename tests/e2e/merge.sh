#!/usr/bin/env bash
# tpuci merge (docs/reports.md, "Merging runs"; issue 24.4): two runners'
# --only runs of one spec (pytest in real containers of the Python test
# image, and a command job), their run folders moved elsewhere as a
# workflow's artifacts are, merged into one summary (valid against
# docs/report.schema.json), one JUnit report (every suite of both, the
# totals added up; valid against Jenkins' schema and Surefire's rules),
# one HTML report whose log links reach the logs, and one step summary;
# the exit code is the runs' verdict together; a folder that is not
# there or not a run's, a corrupt summary or junit.xml and an instance in
# two folders are one-line errors naming them (exit 2). Skips (exit 77)
# without an engine or the image, or when npm cannot reach the registry.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"
command -v xmllint >/dev/null || { fail "xmllint is missing (Debian package libxml2-utils; tests/deps.sh)"; finish; }
. "$TESTS/junit/jenkins_xsd.sh"
schema="$TESTS/../docs/report.schema.json"

mkdir -p proj/tests
cat > proj/tests/test_m.py <<'PY'
def test_ok():
    pass


def test_bad():
    assert 1 == 2, "one is not two"
PY
cat > proj/spec.lua <<LUA
image "py" { ref = "$image", pull = "never" }
job "py" {
  image = "py", workdir = "/src", network = "none",
  mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true } },
  env = { PYTHONDONTWRITEBYTECODE = "1" },
  pytest = { args = { "tests/", "-p", "no:cacheprovider" } },
  matrix = { v = { "1", "2" } },
}
job "cmd" { run = "echo fine" }
LUA
# Two runners, each in a checkout of its own.
cp -r proj a && cp -r proj b
(cd a && "$TPUCI" run --only 'py*' spec.lua > out 2>&1); code=$?
expect_code 1 "runner a (pytest)"
(cd b && "$TPUCI" run --only cmd spec.lua > out 2>&1); code=$?
expect_code 0 "runner b (command)"
# Downloaded elsewhere, as a merge job downloads the runners' artifacts.
mkdir -p artifacts/a artifacts/b out
mv a/.tpuci artifacts/a/ && mv b/.tpuci artifacts/b/
rm artifacts/*/.tpuci/runs/latest
dirs=(artifacts/*/.tpuci/runs/*/)
[ ${#dirs[@]} = 2 ] && pass || fail "run folders: ${dirs[*]}"

GITHUB_STEP_SUMMARY="$WORK/step.md" run_tpuci merge --junit out/m.xml --report-html out/m.html \
  --report-json out/m.json --report-yaml out/m.yaml "${dirs[@]}"
expect_code 1 "the merge (pytest failed)"
expect_out "py[v=1]: 2 tests, 1 failed"
expect_out "instances: passed 1, flaky 0, failed 2"
expect_out "verdict: FAILED"
msg=$(/usr/bin/python3 - "$schema" out/m.json out/m.yaml "${dirs[@]}" <<'PY' 2>&1
import json, sys, yaml, jsonschema
schema, j, y, dirs = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), yaml.safe_load(open(sys.argv[3])), sys.argv[4:]
jsonschema.validate(j, schema)
jsonschema.validate(y, schema)
runs = [json.load(open(d + "summary.json")) for d in dirs]
bad = []
if sorted(i["name"] for i in j["instances"]) != sorted(i["name"] for r in runs for i in r["instances"]):
    bad.append("instances %r" % [i["name"] for i in j["instances"]])
if j["counts"]["total"] != 3 or j["counts"]["passed"] != 1 or j["counts"]["failed"] != 2:
    bad.append("counts %r" % j["counts"])
if (j["verdict"], j["exit_code"]) != ("failed", 1):
    bad.append("verdict %r exit %r" % (j["verdict"], j["exit_code"]))
if [m["run_dir"] for m in j["merged"]] != [d.rstrip("/") for d in dirs]:
    bad.append("merged %r" % j["merged"])
for i in j["instances"]:
    for a in i["attempts"]:
        if not a["log"].startswith("artifacts/"):
            bad.append("a log not named where it is now: " + a["log"])
print("\n".join(bad) or "ok")
PY
)
[ "$msg" = ok ] && pass || fail "merged summary: $msg"
# The JUnit: every suite of both runs, in order, the totals added up.
msg=$(/usr/bin/python3 - out/m.xml "${dirs[@]}" <<'PY' 2>&1
import sys, xml.etree.ElementTree as ET
m = ET.parse(sys.argv[1]).getroot()
runs = [ET.parse(d + "junit.xml").getroot() for d in sys.argv[2:]]
want = [s.get("name") for r in runs for s in r.findall("testsuite")]
got = [s.get("name") for s in m.findall("testsuite")]
bad = [] if got == want else ["suites %r, want %r" % (got, want)]
for k in ("tests", "failures", "errors"):
    if int(m.get(k)) != sum(int(r.get(k)) for r in runs):
        bad.append("%s=%s" % (k, m.get(k)))
if abs(float(m.get("time")) - sum(float(r.get("time")) for r in runs)) > 0.002:
    bad.append("time=" + m.get("time"))
# Each suite as its run wrote it.
for r in runs:
    for s in r.findall("testsuite"):
        ms = [x for x in m.findall("testsuite") if x.get("name") == s.get("name")][0]
        ms.tail = s.tail = None
        if ET.tostring(ms) != ET.tostring(s):
            bad.append("suite %s changed" % s.get("name"))
print("\n".join(bad) or "ok")
PY
)
[ "$msg" = ok ] && pass || fail "merged JUnit: $msg"
for s in "$jenkins" "$TESTS/junit/xsd/testsuites.xsd"; do
  if msg=$(xmllint --noout --schema "$s" out/m.xml 2>&1); then pass
  else fail "out/m.xml against $(basename "$s"): $msg"; fi
done
# The HTML report's log links, relative to its folder, reach the logs.
msg=$(/usr/bin/python3 - out/m.html "${dirs[@]}" <<'PY' 2>&1
import os, re, sys, urllib.parse
page = sys.argv[1]
html = open(page).read()
import html as h
pairs = re.findall(r'<a class="log" href="([^"]+)"><code>([^<]*)</code>', html)
links = [l for l, _ in pairs]
bad = [l for l in links if not os.path.isfile(os.path.join(os.path.dirname(page), urllib.parse.unquote(l)))]
# Each label is the link's own path, relative to the page.
bad += ["label %r of %r" % (t, l) for l, t in pairs if h.unescape(t) != urllib.parse.unquote(l)]
# The header names the merged runs' folders.
m = re.search(r"<dt>Merged runs</dt><dd>(.*?)</dd>", html)
if m is None or not all(d.rstrip("/") in m.group(1) for d in sys.argv[2:]):
    bad.append("merged runs: %r" % (m and m.group(1)))
print("ok" if len(links) == 3 and not bad else "links %r, broken %r" % (links, bad))
PY
)
[ "$msg" = ok ] && pass || fail "HTML report: $msg"
summary=$(cat "$WORK/step.md")
case "$summary" in
  *'### tpuci: failed'*'| `py[v=1]` | failed | 1 |'*'| `cmd` | passed | 1 |'*'#### Failed tests'*'| `tests/test_m.py::test_bad` | `py[v=2]` | failed | `AssertionError: one is not two` |'*) pass ;;
  *) fail "step summary: $summary" ;;
esac

# The command runner alone passed.
run_tpuci merge "${dirs[1]}"
expect_code 0 "the merge of the passing run"
expect_out "verdict: PASSED"

# The exported workflow's last job (tpuci export github --per-job): its
# merge script, run with bash as GitHub runs it, over the runners' run
# folders laid out as download-artifact leaves the artifacts tpuci-SLUG.
(cd proj && "$TPUCI" export github "${GH_SOURCE[@]}" --per-job spec.lua) > wf.yml
/usr/bin/python3 -c 'import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["jobs"]["report"]["steps"]:
    if s["name"] == "Merge the entries'"'"' runs": print(s["run"], end="")' wf.yml > merge-step.sh
entries=$(/usr/bin/python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["jobs"]["report"]["steps"][7]["env"]["TPUCI_ENTRIES"])' wf.yml)
[ "$entries" = 2 ] && pass || fail "TPUCI_ENTRIES=$entries, want 2"
mkdir -p gh/tpuci-runs/tpuci-py gh/tpuci-runs/tpuci-cmd
cp -r artifacts/a/.tpuci gh/tpuci-runs/tpuci-py/ && cp -r artifacts/b/.tpuci gh/tpuci-runs/tpuci-cmd/
ln -s "$(ls artifacts/a/.tpuci/runs)" gh/tpuci-runs/tpuci-py/.tpuci/runs/latest
merge_step() { (cd gh && PATH="$(dirname "$TPUCI"):$PATH" TPUCI_ENTRIES=$entries \
                 GITHUB_STEP_SUMMARY="$WORK/gh-step.md" bash --noprofile --norc -eo pipefail ../merge-step.sh > ../gh.out 2>&1); }
merge_step; code=$?
out=$(cat gh.out)
expect_code 1 "the workflow's merge step (a test failed)"
expect_out "verdict: FAILED"
for f in tpuci-report.json tpuci-report.yaml tpuci-report.html tpuci-junit.xml; do
  [ -s "gh/$f" ] && pass || fail "the merge step wrote no $f"
done
grep -q '| `cmd` | passed |' "$WORK/gh-step.md" && pass || fail "the merge step's step summary: $(cat "$WORK/gh-step.md")"
# An entry that uploaded no run: the others merged, the step fails.
rm -rf gh/tpuci-runs/tpuci-py gh/tpuci-report.*
merge_step; code=$?
out=$(cat gh.out)
expect_code 1 "the merge step without one entry's run"
expect_out "::warning title=tpuci::1 finished runs of 2 entries: the others did not upload one"
expect_out "verdict: PASSED"
# None: an error.
rm -rf gh/tpuci-runs/tpuci-cmd
merge_step; code=$?
out=$(cat gh.out)
expect_code 1 "the merge step without runs"
expect_out "::error title=tpuci::no entry uploaded a finished run"

# One line, naming what is wrong, exit 2.
one_line() { # WHAT WANT: $out is one line holding WANT, exit 2
  expect_code 2 "$1"
  expect_out "$2" "$1"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass || fail "$1: not one line: $out"
}
run_tpuci merge "${dirs[0]}" nowhere
one_line "a missing folder" "tpuci merge: nowhere: no such run folder"
mkdir notarun
run_tpuci merge notarun
one_line "a folder without summary.json" "tpuci merge: notarun/summary.json: no such file or directory"
run_tpuci merge "${dirs[0]}" "${dirs[0]}"
one_line "the same folder twice" "instance 'py[v=1]' is in both"
cp -r "${dirs[1]}" broken && printf '{"instances": [' > broken/summary.json
run_tpuci merge broken
one_line "a corrupt summary" "tpuci merge: broken/summary.json:1: not a tpuci summary"
cp -r "${dirs[1]}" nojunit && rm nojunit/junit.xml
run_tpuci merge --junit x.xml nojunit
one_line "no junit.xml" "tpuci merge: nojunit/junit.xml: cannot read"
cp -r "${dirs[1]}" badjunit && echo '<testsuite name="x"/>' > badjunit/junit.xml
run_tpuci merge --junit x.xml badjunit
one_line "another JUnit document" "not tpuci's merged JUnit report: its root is <testsuite>"
expect_out "tpuci merge: badjunit/junit.xml:1:" "another JUnit document: its place"

# The merged specs, each once by its whole name: ci/spec.lua holds
# spec.lua's name but is another spec.
cp -r "${dirs[0]}" ci-run && cp -r "${dirs[1]}" plain-run
/usr/bin/python3 - ci-run/summary.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["spec"] = "ci/" + s["spec"]
json.dump(s, open(sys.argv[1], "w"))
PY
plain_spec=$(/usr/bin/python3 -c 'import json; print(json.load(open("plain-run/summary.json"))["spec"])')
run_tpuci merge --report-json specs.json ci-run plain-run
merged_spec=$(/usr/bin/python3 -c 'import json; print(json.load(open("specs.json"))["spec"])')
[ "$merged_spec" = "ci/$plain_spec, $plain_spec" ] && pass || fail "merged spec '$merged_spec'"
finish
