#!/usr/bin/env bash
# `tpuci run --test ID` with jobs split by markers (issue 42.5; docs/cli.md,
# "--test"): the job whose selection collects ID runs it; the others end
# not-applicable, neither a pass nor a failure, with a cause naming their
# selection, and no case of theirs in the JUnit report. The run passes
# when ID passed where it ran, and fails when no job collects it. A node
# id that does not exist at all is still a failure (pytest's exit 4).
. "$TESTS/e2e/lib.sh"
py=/usr/bin/python3
"$py" -c 'import pytest' 2> /dev/null || { echo "SKIP: $py has no pytest"; exit 77; }

mkdir -p proj/tests
cat > proj/tests/test_a.py <<'PY'
import pytest


@pytest.mark.tpu
def test_tpu():
    pass


def test_cpu():
    pass


@pytest.mark.slow
def test_slow():
    pass
PY
printf '[pytest]\nmarkers =\n    tpu\n    slow\n' > proj/pytest.ini
cat > spec.lua <<LUA
local function pj(markers)
  return { workdir = tpuci.spec_dir .. "/proj",
           pytest = { python = "$py", markers = markers, args = { "tests/" } },
           retries = { attempts = 2, on = { "failed" }, backoff = "10ms" } }
end
job "cpu" (pj("not tpu and not slow"))
job "tpu" (pj("tpu"))
LUA

run_tpuci run --test tests/test_a.py::test_tpu --junit j.xml spec.lua
expect_code 0 "--test of a tpu test with a cpu job beside"
expect_out "[n/a    ] cpu: --test: not collected by this job's selection -m 'not tpu and not slow'"
expect_out "not-applicable 1 (of 2)"
expect_out "verdict: PASSED"
expect_json "dict((i['name'], (i['outcome'], len(i['attempts']))) for i in s['instances'])" \
  "{'cpu': ('not-applicable', 1), 'tpu': ('passed', 1)}"
if grep -q 'classname="tpuci"' j.xml; then fail "a case for the not-applicable job in j.xml"; else pass; fi
grep -q 'name="test_tpu"' j.xml && pass || fail "test_tpu is not in j.xml"

run_tpuci run --test tests/test_a.py::test_cpu spec.lua
expect_code 0 "--test of a cpu test"
expect_json "dict((i['name'], i['outcome']) for i in s['instances'])" \
  "{'cpu': 'passed', 'tpu': 'not-applicable'}"

# No job collects it: the run fails, and says why.
run_tpuci run --test tests/test_a.py::test_slow spec.lua
expect_code 1 "--test of a test no job collects"
expect_out "--test: no pytest job's selection collects it"
expect_json "sorted(set(i['outcome'] for i in s['instances']))" "['not-applicable']"

# A node id that does not exist is a failure, not "not applicable".
run_tpuci run --test tests/test_a.py::test_not_there spec.lua
expect_code 1 "--test of a missing test"
expect_json "sorted(set(i['outcome'] for i in s['instances']))" "['failed']"
finish
