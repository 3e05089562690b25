#!/usr/bin/env python3
"""Compares what `tpuci run` printed with the merged JUnit it wrote.

Usage: check_counts.py CONSOLE_OUTPUT JUNIT_XML
Prints "ok", or one line per disagreement.

The console's summary table (instance, outcome, attempts, duration), its
"NAME: N tests, F failed, K flaky" lines for pytest instances and its
"instances: passed N, flaky N, ... (of T)" line are matched against the JUnit file:
one <testsuite> per instance (property tpuci.kind says command or pytest);
a command suite is one test case whose outcome is the instance's (no child:
passed; flaky elements only: flaky; <failure>/<error type="tpuci.X">: X);
a pytest suite's test cases, less the attempts tpuci added (classname
"tpuci", name "SUITE attempt N"), are its tests, those with a <failure> or
<error> the failed ones, those with only flaky elements the flaky ones.
"""
import re
import sys
import xml.etree.ElementTree as ET

OUTCOMES = ("passed", "flaky", "failed", "timeout", "oom", "infra", "cancelled")
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


console = open(sys.argv[1], encoding="utf-8").read().splitlines()
root = ET.parse(sys.argv[2]).getroot()
suites = {s.get("name"): s for s in root.findall("testsuite")}

# The summary table: from its header to the first blank line.
table = {}
start = next(i for i, l in enumerate(console) if re.match(r"^instance\s+outcome\s+attempts\s+duration$", l))
for line in console[start + 1:]:
    if not line.strip():
        break
    m = re.match(r"^(.*?)\s+(passed|flaky|failed|timeout|oom|infra|cancelled|not run)\s+(\d+)\s+\S+$", line)
    check(m is not None, f"table line not understood: {line!r}")
    if m:
        table[m.group(1)] = (m.group(2), int(m.group(3)))
tests_lines = {m.group(1): tuple(int(g) for g in m.groups()[1:])
               for m in (re.match(r"^(.*): (\d+) tests, (\d+) failed, (\d+) flaky$", l) for l in console) if m}
counts_line = next(l for l in console if l.startswith("instances: passed ") and "(of " in l)
counts = dict((k, int(v)) for k, v in re.findall(r"(\w+) (\d+)", counts_line.split(" (of ")[0]))
total = int(re.search(r"\(of (\d+)\)", counts_line).group(1))

check(set(table) == set(suites), f"instances: console {sorted(table)}, junit {sorted(suites)}")
check(total == len(suites), f"console says {total} instances, junit has {len(suites)} suites")
check(counts == {o: sum(1 for v in table.values() if v[0] == o) for o in OUTCOMES},
      f"the counts line {counts} disagrees with the table")

junit_outcomes = {}
for name, s in suites.items():
    props = {p.get("name"): p.get("value") for p in s.find("properties")}
    cases = s.findall("testcase")
    tags = lambda c: [k.tag for k in c]
    failing = lambda c: any(t in ("failure", "error") for t in tags(c))
    flaky = lambda c: not failing(c) and any(t.startswith("flaky") for t in tags(c))
    outcome, attempts = table.get(name, ("?", -1))
    check(int(props["tpuci.attempts"]) == attempts,
          f"{name}: {attempts} attempts on the console, {props['tpuci.attempts']} in junit")
    if props["tpuci.kind"] == "command":
        check(len(cases) == 1, f"{name}: a command suite with {len(cases)} test cases")
        c = cases[0]
        bad = [k for k in c if k.tag in ("failure", "error")]
        got = bad[0].get("type").split(".", 1)[1].replace("not-run", "not run") if bad else \
            "flaky" if flaky(c) else "passed"
        check(got == outcome, f"{name}: console {outcome}, junit {got}")
    else:
        tests = [c for c in cases
                 if not (c.get("classname") == "tpuci" and re.fullmatch(re.escape(name) + r" attempt \d+", c.get("name")))]
        want = (len(tests), sum(failing(c) for c in tests), sum(flaky(c) for c in tests))
        if tests:
            check(tests_lines.get(name) == want,
                  f"{name}: console says {tests_lines.get(name)} (tests, failed, flaky), junit {want}")
        suite_failing = int(s.get("failures")) + int(s.get("errors")) > 0
        check(suite_failing == (outcome not in ("passed", "flaky")),
              f"{name}: console {outcome}, junit failures={s.get('failures')} errors={s.get('errors')}")
    # A suite's counts are its test cases'.
    check(int(s.get("tests")) == len(cases), f"{name}: tests={s.get('tests')}, {len(cases)} test cases")
    check(int(s.get("failures")) + int(s.get("errors")) == sum(failing(c) for c in cases),
          f"{name}: failures+errors disagree with its test cases")

for k in ("tests", "failures", "errors"):
    check(int(root.get(k)) == sum(int(s.get(k)) for s in suites.values()), f"root {k}")

print("\n".join(problems) if problems else "ok")
sys.exit(1 if problems else 0)
