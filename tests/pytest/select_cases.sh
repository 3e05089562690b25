#!/usr/bin/env bash
# The adversarial suite of select = "affected" (issue 41, docs/pytest.md):
# small projects, each with a change a recorder can easily not see (code
# run at import or collection, what decides an import, reads it does not
# see, new tests, a file saved during the run, a second checkout, the
# results cache, threads, subprocesses), each run with the selection and
# with every test from the same record (tests/pytest/select_cases.py); no
# failing test may be left out, no test may fail only under tpuci, and
# every case's change must really fail a test. Prints a line per case and
# the figures (the fraction of the suite the measurements ran).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest"; exit 77; }
if /usr/bin/python3 "$TESTS/pytest/select_cases.py" "$TPUCI" > cases.txt 2>&1; then
  pass
else
  fail "a case missed a failing test, failed only under tpuci, or could not run (below)"
fi
cat cases.txt
grep -q '^cases: [0-9]*; missed a failing test: 0 ' cases.txt && pass || fail "no summary, or a miss"
finish
