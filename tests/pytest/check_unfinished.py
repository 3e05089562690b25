#!/usr/bin/env python3
"""Checks a run of tests/pytest/unfinished/spec.lua (tests/pytest/unfinished.sh).

Usage: check_unfinished.py RUN_DIR JUNIT_XML
Prints "ok", or one line per problem.

Every collected test is in summary.json and in the merged JUnit with the
same final outcome; the retries ran the test that was running, the tests
that never finished, and the failures, in collection order (read back from
each attempt's progress.jsonl); tests that never ran are "not-run" in the
JSON and <error type="tpuci.not-run"> in the JUnit.
"""
import json
import re
import os
import sys
import xml.etree.ElementTree as ET

run_dir, junit = sys.argv[1], sys.argv[2]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


summary = json.load(open(os.path.join(run_dir, "summary.json"), encoding="utf-8"))
insts = {i["name"]: i for i in summary["instances"]}
suites = {s.get("name"): s for s in ET.parse(junit).getroot().findall("testsuite")}


def junit_tests(name):
    """{id: outcome} of a suite's test cases, less tpuci's attempt cases."""
    out = {}
    for c in suites[name].findall("testcase"):
        if c.get("classname") == "tpuci":
            continue
        tags = [k.tag for k in c]
        err = c.find("error")
        if err is not None and err.get("type") == "tpuci.not-run":
            o = "not-run"
        elif "failure" in tags:
            o = "failed"
        elif "error" in tags:
            o = "error"
        elif "skipped" in tags:
            o = "skipped"
        else:
            o = "passed"
        out[c.get("classname") + "::" + c.get("name")] = (o, any(t.startswith("flaky") for t in tags))
    return out


def by_node(name, ju, js):
    """The JUnit cases keyed as summary.json's ids are mangled: their
    classname is INSTANCE.MODULE[.CLASS] with the module's path from the
    project's folder (docs/pytest.md, "Test case identities"), where
    summary.json has pytest's node id (from its rootdir)."""
    group = re.sub(r",?shard=\d+/\d+", "", name).replace("[]", "")
    out = {}
    for k, v in ju.items():
        check(k.startswith(group + "."), f"{name}: JUnit case {k} is not named by its instance {group}")
        k = k[len(group) + 1:]
        cls, _, test = k.partition("::")
        for j in js:
            jcls, _, jtest = j.partition("::")
            if test == jtest and (cls == jcls or cls.endswith("." + jcls)):
                k = j
                break
        out[k] = v
    return out


def mangle(node_id):
    path, _, rest = node_id.partition("::")
    return path[:-3].replace("/", ".") + "::" + rest


def collected(inst, attempt):
    """The node ids pytest collected in an attempt (host 0 for a gang)."""
    # The instance's folder is where its attempts' logs are.
    logs = [a["log"] for a in insts[inst]["attempts"] if a.get("log")]
    folder = os.path.join(os.path.dirname(logs[0]), f"results-{attempt}")
    if os.path.isdir(os.path.join(folder, "worker-0")):
        folder = os.path.join(folder, "worker-0")
    for line in open(os.path.join(folder, "progress.jsonl"), encoding="utf-8"):
        rec = json.loads(line)
        if "collected" in rec:
            return [i.split("::", 1)[1] for i in rec["collected"]]
    return None


# JSON = JUnit, test by test.
for name, inst in insts.items():
    tests = inst.get("tests", [])
    js = {mangle(t["id"]): (t["outcome"], t["flaky"]) for t in tests}
    check(name in suites, f"{name}: no JUnit suite")
    if name in suites:
        ju = by_node(name, junit_tests(name), js)
        check(js == ju, f"{name}: summary.json {sorted(js.items())} != JUnit {sorted(ju.items())}")

def outcomes(name):
    return {t["id"].split("::", 1)[1]: (t["outcome"], t["flaky"]) for t in insts[name]["tests"]}


A, B, C, D = ("test_a_fails", "test_b_hangs_on_first_attempt", "test_c_after_the_hang", "test_d_xpass")
want = {
    "hang": ("failed", {A: ("failed", False), B: ("passed", True), C: ("passed", False), D: ("passed", False)}),
    "hang-xpass": ("flaky", {D: ("passed", False), B: ("passed", True), C: ("passed", False)}),
    "hang-once": ("timeout", {A: ("failed", False), B: ("failed", False), C: ("not-run", False),
                              D: ("not-run", False)}),
}
for name, (outcome, tests) in want.items():
    check(insts[name]["outcome"] == outcome, f"{name}: outcome {insts[name]['outcome']}, want {outcome}")
    check(outcomes(name) == tests, f"{name}: tests {outcomes(name)}, want {tests}")

# What each retry ran, in collection order.
check(collected("hang", 2) == [A, B, C, D], f"hang attempt 2 ran {collected('hang', 2)}")
check(collected("hang-xpass", 2) == [B, C], f"hang-xpass attempt 2 ran {collected('hang-xpass', 2)}")
n = [f"test_n[{i}]" for i in range(44)]
ab = outcomes("abort")
check(insts["abort"]["outcome"] == "failed", f"abort: {insts['abort']['outcome']}")
check([k for k, v in ab.items() if v[0] == "passed"] == n[:12], "abort: tests 0-11 passed")
check(ab[n[12]] == ("failed", False), f"abort: the test it crashed in: {ab.get(n[12])}")
check([k for k, v in ab.items() if v[0] == "not-run"] == n[13:], "abort: tests 13-43 never ran")
check(collected("abort-retry", 2) == n[12:], f"abort-retry attempt 2 ran {collected('abort-retry', 2)}")
check(insts["abort-retry"]["outcome"] == "flaky", f"abort-retry: {insts['abort-retry']['outcome']}")
shards = [i for i in insts if i.startswith("sharded[")]
ids = sorted(t for s in shards for t in outcomes(s))
check(ids == sorted(f"test_s[{i}]" for i in range(6)), f"shards: tests {ids}")
hung = [s for s in shards if "test_s[2]" in outcomes(s)]
if hung:
    first = collected(hung[0], 1)
    again = collected(hung[0], 2)
    check(again == first[first.index("test_s[2]"):], f"{hung[0]}: attempt 2 ran {again} after {first}")
    check(outcomes(hung[0])["test_s[2]"] == ("passed", True), f"{hung[0]}: test_s[2] not flaky")
g = insts["gang"]
check(g["outcome"] == "flaky", f"gang: {g['outcome']}")
check("while running tests/test_gang.py::test_g_b on worker-1" in g["attempts"][0]["cause"],
      f"gang: attempt 1's cause {g['attempts'][0]['cause']!r}")
check(outcomes("gang")["test_g_b"] == ("passed", True), f"gang: {outcomes('gang')}")
# The stacks faulthandler wrote at the SIGTERM are in the JUnit of the test
# that hung, named per host.
root = ET.parse(junit).getroot()
def earlier_text(suite, name):
    for c in root.findall(f"testsuite[@name='{suite}']/testcase[@name='{name}']"):
        return "".join(e.findtext("stackTrace") or "" for e in c
                       if e.tag in ("flakyFailure", "rerunFailure", "flakyError", "rerunError")) + \
            "".join(e.text or "" for e in c if e.tag in ("failure", "error"))
    return ""
t = earlier_text("hang", B)
check("The stacks of its threads when tpuci stopped it" in t and
      'File "/src/tests/test_r.py", line 4 in test_b_hangs_on_first_attempt' in t,
      f"hang: test_b's attempt 1 in JUnit has no stacks: {t[:300]!r}")
t = earlier_text("gang", "test_g_b")
check("The stacks of its threads on worker-1 when tpuci stopped it" in t and
      'File "/src/tests/test_gang.py", line 13 in test_g_b' in t,
      f"gang: test_g_b's attempt 1 in JUnit has no worker-1 stacks: {t[:300]!r}")
tt = insts["test-timeout"]
check(tt["outcome"] == "failed" and len(tt["attempts"]) == 1 and tt["attempts"][0]["outcome"] == "failed",
      f"test-timeout: {tt['outcome']}, attempts {[a['outcome'] for a in tt['attempts']]}")
check(outcomes("test-timeout") == {"test_over_the_limit": ("failed", False), "test_after_it": ("passed", False)},
      f"test-timeout: {outcomes('test-timeout')}")
t = earlier_text("test-timeout", "test_over_the_limit")
check("test_timeout: longer than 2s (tpuci); the stacks of its threads" in t and
      'File "/src/tests/test_slow.py", line 7 in test_over_the_limit' in t,
      f"test-timeout: the failure has no stacks: {t[:400]!r}")
print("\n".join(problems) if problems else "ok")
