"""Checks the test case identities of tests/junit/identity.sh's merged
JUnit reports, read as Maven Surefire's report parser reads them
(TestSuiteXmlParser): test cases are grouped by their classname, the
<testsuite> names are dropped, and a test is (classname, name); Jenkins'
JUnit plugin keys a test's history the same way.

usage: check_identity.py SRC.xml TESTS.xml MODULE
  SRC.xml    the run from /src (pytest's node ids tests/test_edge.py::...)
  TESTS.xml  the run from /src/tests (node ids test_edge.py::...), with
             --junit-file-line
  MODULE     the tests folder's dotted path from the project's folder
Prints FAIL lines and exits 1 on any."""
import sys
import xml.etree.ElementTree as ET

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def surefire(path):
    """{classname: [test case elements]}, the suites Surefire's parser
    makes (keyed by classname, in order), and every case in order."""
    suites, cases = {}, []
    for case in ET.parse(path).getroot().iter("testcase"):
        suites.setdefault(case.get("classname"), []).append(case)
        cases.append(case)
    return suites, cases


src_path, tests_path, mod = sys.argv[1], sys.argv[2], sys.argv[3]
instances = ["edge[py=3.11]", "edge[py=a,b]"]
names = {"test_ok": "", "test_edge": "", "test_oops": "", "test_err": ".TestK"}
want = {(f"{i}.{mod}.test_edge{names[n]}", n) for i in instances for n in names}

for path in (src_path, tests_path):
    suites, cases = surefire(path)
    ids = [(c.get("classname"), c.get("name")) for c in cases]
    # Unique per instance: no two test cases share an identity, so no
    # history merges two matrix instances.
    check(len(ids) == len(set(ids)), f"{path}: test cases share an identity: {ids}")
    check(set(ids) == want, f"{path}: identities {sorted(set(ids))}, want {sorted(want)}")
    for (cls, name), case in zip(ids, cases):
        # Surefire's package and class: the classname split at its last dot.
        check(cls.rsplit(".", 1)[-1] in ("test_edge", "TestK"), f"{path}: class of {cls}")
        fail = case.find("failure")
        typ = fail.get("type") if fail is not None else None
        expect = {"test_ok": None, "test_edge": "AssertionError", "test_oops": "Oops",
                  "test_err": "ValueError"}[name]
        check(typ == expect, f"{path}: {cls}::{name} type {typ!r}, want {expect!r}")

# Stable when the workdir moves: the same identities from /src and from
# /src/tests (checked above against one set).
_, src_cases = surefire(src_path)
_, tests_cases = surefire(tests_path)
check(not any(c.get("file") or c.get("line") for c in src_cases),
      f"{src_path}: file or line without --junit-file-line")
lines = {"test_ok": "15", "test_edge": "12", "test_oops": "24", "test_err": "29"}
for c in tests_cases:
    # With --junit-file-line: the module from the project's folder, and
    # the line where it failed in the project (the helper's assert for
    # test_edge), else where the test is.
    check(c.get("file") == "tests/test_edge.py", f"{tests_path}: {c.get('name')} file={c.get('file')!r}")
    check(c.get("line") == lines[c.get("name")],
          f"{tests_path}: {c.get('name')} line={c.get('line')!r}, want {lines[c.get('name')]}")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok")
