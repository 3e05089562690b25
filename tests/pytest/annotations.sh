#!/usr/bin/env bash
# GitHub annotations (docs/cli.md, "Output"; issue 24.6), with the local
# runtime and Debian's python3-pytest: a failing test is annotated at the
# line it failed at (a helper's assert, not the test's def line), once for
# all the matrix instances it failed in (the title names them), an
# instance failure alike once for its instances; at most 10 ::error lines
# (GitHub's cap per step), then a ::notice saying how many more the step
# summary has, and the step summary lists every one.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir -p proj/tests
cat > proj/tests/helpers.py <<'PY'
def check(n):
    assert n < 0, "case %d is not negative" % n
PY
{
  echo "from helpers import check"
  for i in $(seq 1 12); do printf '\n\ndef test_case_%02d():\n    check(%d)\n' "$i" "$i"; done
} > proj/tests/test_many.py
cat > proj/spec.lua <<'LUA'
job "cmd" { matrix = { v = { "1", "2" } }, run = "exit 3" }
job "py" {
  matrix = { v = { "1", "2" } },
  env = { PYTHONDONTWRITEBYTECODE = "1" },
  pytest = { python = "/usr/bin/python3", args = { "tests/", "-p", "no:cacheprovider" } },
}
LUA
git init -q proj
cd proj || exit 1
GITHUB_ACTIONS=true GITHUB_WORKSPACE="$WORK/proj" GITHUB_STEP_SUMMARY="$WORK/step.md" \
  run_tpuci run spec.lua
expect_code 1 "the run"
errors=$(printf '%s\n' "$out" | grep -c '^::error ')
[ "$errors" = 10 ] && pass || fail "$errors ::error lines, want GitHub's 10"
expect_out "::error file=spec.lua,line=1,title=tpuci%3A cmd[v=1]%2C cmd[v=2] failed::exit 3"
expect_out "::error file=tests/helpers.py,line=2,title=tests/test_many.py%3A%3Atest_case_01 failed in py[v=1]%2C py[v=2]::AssertionError: case 1 is not negative"
expect_not_out "file=tests/test_many.py" "an annotation at a test's def line"
n=$(printf '%s\n' "$out" | grep -c 'test_case_01 failed')
[ "$n" = 1 ] && pass || fail "test_case_01 has $n annotations, want 1 for both instances"
expect_out "::notice title=tpuci::3 more failures are not annotated (GitHub shows 10 per step); the step summary lists every failed test and instance"
rows=$(grep -c '^| `tests/test_many.py::test_case_' "$WORK/step.md")
[ "$rows" = 24 ] && pass || fail "the step summary lists $rows failed tests, want 24 (12 in each instance)"
finish
