#!/usr/bin/env python3
"""Reads tpuci's merged JUnit report back with xml.etree.

Usage: check_merged.py TEST_JUNIT_HISTORY_BINARY
Runs `BINARY --emit FILE` (a fixed four-instance run, see
test_junit_history.c), parses FILE with Python's own parser, checks that
every testsuite's counts match its test cases and the root's match the
sum, then checks the numbers that run must give.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

FLAKY = ("flakyFailure", "flakyError")
RERUN = ("rerunFailure", "rerunError")


def counts(suite):
    c = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0,
         "flaky": 0, "rerun": 0, "abnormal": 0}
    for case in suite.findall("testcase"):
        c["tests"] += 1
        tags = [child.tag for child in case]
        c["failures"] += tags.count("failure")
        c["errors"] += tags.count("error")
        c["skipped"] += tags.count("skipped")
        c["flaky"] += sum(tags.count(t) for t in FLAKY)
        c["rerun"] += sum(tags.count(t) for t in RERUN)
        if case.get("classname") == "tpuci":
            c["abnormal"] += 1
        outcomes = [t for t in tags if t in ("failure", "error", "skipped")]
        assert len(outcomes) <= 1, f"{case.get('name')}: {outcomes}"
        for child in case:
            if child.tag in FLAKY + RERUN:
                assert child.find("stackTrace") is not None, case.get("name")
                assert "message" in child.attrib
            if child.tag in RERUN:
                assert outcomes and outcomes[0] in ("failure", "error"), \
                    f"{case.get('name')}: rerun* needs a final failure"
            if child.tag in FLAKY:
                assert not outcomes or outcomes[0] == "skipped", \
                    f"{case.get('name')}: flaky* needs a final pass"
    return c


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "merged.xml")
        subprocess.run([binary, "--emit", path], check=True)
        root = ET.parse(path).getroot()

    assert root.tag == "testsuites", root.tag
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seen = {}
    for suite in root.findall("testsuite"):
        c = counts(suite)
        for k in total:
            assert int(suite.get(k)) == c[k], (suite.get("name"), k, suite.get(k), c[k])
            total[k] += c[k]
        props = {p.get("name"): p.get("value")
                 for p in suite.find("properties").findall("property")}
        assert props["tpuci.kind"] == "pytest", props
        c["attempts"] = int(props["tpuci.attempts"])
        c["flaky_tests"] = int(props["tpuci.flaky"])
        c["time"] = float(suite.get("time"))
        seen[suite.get("name")] = c
    for k in ("tests", "failures", "errors"):
        assert int(root.get(k)) == total[k], (k, root.get(k), total[k])
    # Jenkins' schema has no `skipped` on the root.
    assert root.get("skipped") is None
    assert abs(float(root.get("time")) - sum(c["time"] for c in seen.values())) < 0.01

    expected = {
        # The real pytest report, then a re-run where only test_fail fails.
        "py[3.11]": dict(tests=22, failures=1, errors=0, skipped=3, flaky=9,
                         rerun=1, abnormal=0, attempts=2, flaky_tests=9, time=90.0),
        # Timed out after four of five tests, then timed out with no report:
        # test_slow never ran (an error, tpuci.not-run).
        "py[3.12]": dict(tests=7, failures=3, errors=1, skipped=1, flaky=0,
                         rerun=0, abnormal=2, attempts=2, flaky_tests=0, time=1560.0),
        # An infrastructure failure, then a pass.
        "lint <&>": dict(tests=2, failures=0, errors=0, skipped=0, flaky=1,
                         rerun=0, abnormal=1, attempts=2, flaky_tests=0, time=60.0),
        # A crash before pytest wrote anything.
        "crash": dict(tests=1, failures=1, errors=0, skipped=0, flaky=0,
                      rerun=0, abnormal=1, attempts=1, flaky_tests=0, time=2.0),
    }
    assert list(seen) == list(expected), list(seen)
    for name, want in expected.items():
        for k, v in want.items():
            assert seen[name][k] == v, (name, k, seen[name][k], v)
    assert total == dict(tests=32, failures=5, errors=1, skipped=4), total
    not_run = root.find("testsuite[@name='py[3.12]']/testcase[@name='test_slow']/error")
    assert not_run is not None and not_run.get("type") == "tpuci.not-run", not_run

    # Escaping survived: the real report's odd names and messages.
    py311 = root.find("testsuite[@name='py[3.11]']")
    names = {c.get("name") for c in py311.findall("testcase")}
    assert 'test_param[4-<&>"]' in names and "test_unicode_\u00fcn\u00ef" in names
    timeout = root.find("testsuite[@name='py[3.12]']/testcase[@name='py[3.12] attempt 1']/failure")
    assert timeout.get("message") == \
        "timeout: timed out after 25m; 1 test did not report", timeout.get("message")
    assert "tests/test_api.py::test_slow" in timeout.text
    infra = root.find("testsuite[@name='lint <&>']/testcase/flakyError")
    assert infra.get("message").startswith('infra: image pull failed: "tpuci/py" <not found>')
    print(f"check_merged: {total['tests']} test cases in {len(seen)} suites, counts consistent")


if __name__ == "__main__":
    main()
