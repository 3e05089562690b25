"""Checks a tpuci run of tests/pytest/spec.lua: the merged JUnit (parsed
with a real XML parser), the report, retries and shards."""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

run_dir, junit_path, docker = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


root = ET.parse(junit_path).getroot()
suites = {s.get("name"): s for s in root.findall("testsuite")}


def cases(suite):
    out = {}
    for c in suites[suite].findall("testcase"):
        out[(c.get("classname"), c.get("name"))] = [k.tag for k in c]
    return out


# Test cases are named "INSTANCE.MODULE": the module's path from the
# project's folder (the git repository holding the spec, else its
# folder), whatever the job's workdir (docs/pytest.md).
here = os.path.dirname(os.path.abspath(__file__))
top = here
while top != "/" and not os.path.exists(os.path.join(top, ".git")):
    top = os.path.dirname(top)
if top == "/":
    top = here
MOD = os.path.relpath(os.path.join(here, "project", "tests"), top).replace(os.sep, ".")

# suite: every outcome exactly. From the second run on, the tests that
# failed in the run before also ran first in a process of their own (the
# failing-first process): one more earlier run each, said as such.
second = sys.argv[4] == "balanced" if len(sys.argv) > 4 else False
s = cases("suite")
T = f"suite.{MOD}.test_outcomes"
expect = {
    (T, "test_passes"): [],
    (T, "test_fails"): ["failure"] + ["rerunFailure"] * (3 if second else 2),
    (T, "test_fixture_error"): ["error"] + ["rerunError"] * (3 if second else 2),
    (T, "test_skipped"): ["skipped"],
    (T, "test_expected_failure"): ["skipped"],
    (T, "test_tpu_marked"): [],
    (T, "test_flaky_first_attempt"): ["flakyFailure"],
    (T, "test_param[1]"): [],
    (T, "test_param[2]"): [],
}
for key, tags in expect.items():
    got = [t for t in s.get(key, ["(missing)"]) if t not in ("system-out", "system-err")]
    check(got == tags, f"suite {key}: {got} != {tags}")
check(set(s) == set(expect), f"suite has unexpected cases: {sorted(set(s) - set(expect))}")
if second:
    traces = [t.text or "" for c in suites["suite"].findall("testcase") if c.get("name") == "test_fails"
              for r in c.findall("rerunFailure") for t in r.findall("stackTrace")]
    check(sum(t.startswith("[failing first") for t in traces) == 1,
          f"suite test_fails: no rerunFailure of the failing-first process: {[t[:40] for t in traces]}")
check(suites["suite"].get("tests") == "9", f"suite tests={suites['suite'].get('tests')}")
check(suites["suite"].get("failures") == "1" and suites["suite"].get("errors") == "1",
      f"suite failures={suites['suite'].get('failures')} errors={suites['suite'].get('errors')}")

# Retries ran only what failed: attempt 2 ran the 3 failing tests, attempt 3 the 2 still failing.
for n, want in ((2, 3), (3, 2)):
    log = open(os.path.join(run_dir, "suite", f"attempt-{n}.log")).read()
    m = re.search(r"collected (\d+) items?", log)
    check(m is not None and int(m.group(1)) == want,
          f"suite attempt {n} collected {m.group(1) if m else '?'} items, want {want}")

# The timeout is a failed test case, and the test that finished is kept.
h = cases("hang")
check(h.get((f"hang.{MOD}.test_timeout", "test_finishes_first")) == [], f"hang: {h}")
check(h.get((f"hang.{MOD}.test_timeout", "test_sleeps_past_timeout")) == ["failure"], f"hang: {h}")
timeout_cases = [k for k in h if k[0] == "tpuci"]
check(len(timeout_cases) == 1 and h[timeout_cases[0]] == ["failure"], f"hang timeout case: {h}")
msg = [c for c in suites["hang"].findall("testcase") if c.get("classname") == "tpuci"][0].find("failure").get("message")
check("timed out" in msg, f"hang failure message: {msg}")
# It names the test that was running (progress.jsonl's last start).
check("while running tests/test_timeout.py::test_sleeps_past_timeout" in msg,
      f"hang failure message does not name the running test: {msg}")
check(not any(c.get("file") or c.get("line") for c in root.iter("testcase")),
      "a testcase has file or line (no JUnit schema allows them)")

# Nothing selected: a failure naming the marker expression; allowed when allow_empty.
e = [c for c in suites["empty"].findall("testcase") if c.get("classname") == "tpuci"]
check(len(e) == 1 and "nothing_has_this" in e[0].find("failure").get("message"), "empty: no failure naming the markers")

report = json.load(open(os.path.join(run_dir, "summary.json")))
inst = {i["name"]: i for i in report["instances"]}
check(inst["suite"]["outcome"] == "failed", "suite outcome")
check(inst["empty"]["outcome"] == "failed", "empty outcome")
check(inst["empty_ok"]["outcome"] == "passed", f"empty_ok outcome {inst['empty_ok']['outcome']}")
check(inst["hang"]["outcome"] == "timeout", "hang outcome")
cause = inst["hang"]["attempts"][-1]["cause"]
check(cause.startswith("timed out after %s" % os.environ.get("TPUCI_HANG_TIMEOUT", "45s")) and
      " while running tests/test_timeout.py::test_sleeps_past_timeout (at " in cause and
      re.search(r"tests/test_timeout\.py:\d+ in test_sleeps_past_timeout; thread stacks in "
                r"\S*/hang/results-\d+/stacks\.txt\)$", cause),
      f"hang cause: {cause}")
flaky = [t for t in inst["suite"]["tests"] if t["flaky"]]
check([t["id"] for t in flaky] == ["tests/test_outcomes.py::test_flaky_first_attempt"], f"flaky tests {flaky}")
if docker:
    check(inst["oom"]["outcome"] == "oom", f"oom outcome {inst['oom']['outcome']}")
    o = [c for c in suites["oom"].findall("testcase") if c.get("classname") == "tpuci"]
    check(len(o) >= 1, "oom: no test case for the OOM-killed attempt")
    check(any("memory" in (c.find("failure").get("message") or "") for c in o
              if c.find("failure") is not None), "oom: no test case naming the memory kill")

# Shards: every test once, in exactly one shard; balanced by recorded durations.
durations = [0.6, 0.5, 0.4] + [0.05] * 12
loads, seen = [], []
for k in (1, 2, 3):
    ids = [c.get("name") for c in suites[f"sharded[shard={k}/3]"].findall("testcase")]
    # The shards of one instance share its identity.
    cls = {c.get("classname") for c in suites[f"sharded[shard={k}/3]"].findall("testcase")}
    check(cls <= {f"sharded.{MOD}.test_shards", "tpuci"}, f"shard {k}'s classnames: {cls}")
    seen += ids
    loads.append(sum(durations[int(re.search(r"\[(\d+)\]", n).group(1))] for n in ids))
check(sorted(seen) == sorted(f"test_work[{i}]" for i in range(15)), f"shards: {seen}")
if sys.argv[4] == "balanced":
    ideal = sum(durations) / 3
    check(max(loads) <= 1.1 * ideal, f"shards unbalanced: {loads} (ideal {ideal:.2f})")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok")
