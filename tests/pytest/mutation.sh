#!/usr/bin/env bash
# The miss rate of select = "affected" (issue 35, docs/pytest.md): every
# mutant of tests/pytest/mutation/proj (a package of six modules calling
# each other, a session fixture, a data file) and of specs/guide's library
# run with the selection and with every test (tests/pytest/mutation.py);
# no failing test may be left out. Prints the figures (the fraction of
# the suite each selection ran).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest"; exit 77; }
cp -r "$TESTS/../specs/guide" guide
printf 'tests/test_core.py\n-m\nnot slow\n' > guide/.pytest-args
if /usr/bin/python3 "$TESTS/pytest/mutation.py" "$TPUCI" "$TESTS/pytest/mutation/proj" guide > figures.txt 2>&1; then
  pass
else
  fail "a failing test was left out, or a record run failed"
fi
cat figures.txt
grep -q 'misses: 0;' figures.txt && pass || fail "no figures"
finish
