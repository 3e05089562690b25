#!/usr/bin/env bash
# Order dependence (issue 31): tpuci's failing first never makes a red,
# and a test that fails in one process order and passes in another is
# order-dependent, its candidates named and its polluter found.
#  - pair: issue 31's minimal pair (test_victim asserts a global is
#    "clean", test_polluter, after it in pytest's order, sets it "dirty"
#    and fails): run twice, the victim never fails;
#  - victim: a polluter that passes, before its victim: the victim fails
#    in attempt 1, passes in its retry: order-dependent, the polluter
#    found by the order checks;
#  - brittle: a test that passes only after its setter (pytest's order)
#    and failed last time: alone in the failing-first process it fails,
#    in its attempt it passes: order-dependent (brittle), the setter
#    named.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
cp -r "$TESTS/pytest/order" proj
spec=$WORK/proj/spec.lua
victim=t/test_b.py::test_victim
export ORDER_FAIL_ONCE=$WORK/fail-once
touch "$ORDER_FAIL_ONCE"

# test OUTCOME INSTANCE ID: the test's outcome in the latest summary, and
# whether it is order-dependent.
test_is() {
  json "[(t['outcome'], t.get('order_dependent', False)) for i in s['instances'] if i['name'] == '$1' for t in i['tests'] if t['id'] == '$2']"
}

run_tpuci run --no-cache -j 2 --junit run1.xml "$spec"
expect_code 1 "run 1: the polluter fails"
# pair, run 1: pytest's order, the victim before the polluter.
[ "$(test_is pair t/test_a.py::test_victim)" = "[('passed', False)]" ] && pass ||
  fail "pair, run 1: the victim: $(test_is pair t/test_a.py::test_victim)"
# victim: failed after the polluter, passed alone in the retry.
[ "$(test_is victim $victim)" = "[('passed', True)]" ] && pass ||
  fail "victim: $(test_is victim $victim), want passed and order-dependent"
expect_json "[i['outcome'] for i in s['instances'] if i['name'] == 'victim']" "['order-dependent']"
expect_json "[t['order']['candidates'] for i in s['instances'] if i['name'] == 'victim' for t in i['tests'] if t['id'] == '$victim']" \
  "[['t/test_a.py::test_polluter', 't/test_a.py::test_bystander', 't/test_b.py::test_other']]"
expect_json "[(t['order']['polluter'], t['order']['confirmed'], t['order']['failed_in'], t['order']['passed_in']) for i in s['instances'] if i['name'] == 'victim' for t in i['tests'] if t['id'] == '$victim']" \
  "[('t/test_a.py::test_polluter', True, 1, 2)]"
expect_json "[(c['test'], c['before'], c['result']) for i in s['instances'] if i['name'] == 'victim' for c in i['order_checks']][0]" \
  "('$victim', 3, 'failed')"
expect_out "[test   ] victim: FAILED $victim - AssertionError: the polluter ran before me"
expect_out "tpuci: victim: order check: $victim failed after 3 tests"
expect_out "  order-dependent $victim: AssertionError: the polluter ran before me"
expect_out "           failed after 3 tests in attempt 1, passed in attempt 2; it fails after t/test_a.py::test_polluter (found by "
expect_out "victim: 4 tests, 0 failed, 0 flaky, 1 order-dependent"
expect_out ", order-dependent 1 (of 3)"
# Every report says it: JUnit (a suite property), HTML, the history.
grep -q 'name="tpuci.order_dependent" value="t/test_b.py::test_victim: failed after 3 tests in attempt 1' run1.xml &&
  pass || fail "JUnit: no tpuci.order_dependent property"
grep -q '<span class="o o-order-dependent">order-dependent</span>' .tpuci/runs/latest/report.html &&
  pass || fail "HTML: no order-dependent badge"
grep -q '"victim","t/test_b.py::test_victim","o"' .tpuci/history.jsonl && pass ||
  fail "history: the victim is not 'o': $(tail -n 1 .tpuci/history.jsonl)"
# The brittle test was made to fail this time.
[ "$(test_is brittle t/test_a.py::test_needs)" = "[('failed', False)]" ] && pass ||
  fail "brittle, run 1: $(test_is brittle t/test_a.py::test_needs)"

rm -f "$ORDER_FAIL_ONCE"
run_tpuci run --no-cache -j 2 "$spec"
expect_code 1 "run 2: the polluter still fails"
# pair, run 2: the polluter failed last time; it runs first in a process
# of its own, and the victim, in pytest's order in its attempt, passes.
got=$(test_is pair t/test_a.py::test_victim)
case "$got" in
  "[('passed', False)]" | "[('passed', True)]") pass ;;
  *) fail "pair, run 2: the victim: $got (never failed)" ;;
esac
expect_not_out "FAILED t/test_a.py::test_victim"
expect_out "tpuci: pair: failing first: 1 test that failed last time runs first, in a process of its own"
expect_json "[i['first']['tests'] for i in s['instances'] if i['name'] == 'pair']" "[['t/test_z.py::test_polluter']]"
expect_json "[t['outcome'] for i in s['instances'] if i['name'] == 'pair' for t in i['tests'] if t['id'] == 't/test_z.py::test_polluter']" "['failed']"
# brittle, run 2: alone first it fails, after its setter it passes.
[ "$(test_is brittle t/test_a.py::test_needs)" = "[('passed', True)]" ] && pass ||
  fail "brittle, run 2: $(test_is brittle t/test_a.py::test_needs), want passed and order-dependent"
expect_json "[(t['order']['brittle'], t['order']['failed_in'], t['order']['passed_in'], t['order']['candidates'], t['order']['polluter']) for i in s['instances'] if i['name'] == 'brittle' for t in i['tests'] if t['id'] == 't/test_a.py::test_needs']" \
  "[(True, 0, 1, ['t/test_a.py::test_setter'], 't/test_a.py::test_setter')]"
expect_out "[test   ] brittle (failing first): FAILED t/test_a.py::test_needs - AssertionError: nothing set me up"
expect_out "failed first in the failing-first process, passed after 1 test in attempt 1; it passes after t/test_a.py::test_setter"
# Its instance passed: the red was tpuci's order, and is said as such.
expect_json "[i['outcome'] for i in s['instances'] if i['name'] == 'brittle']" "['order-dependent']"

# run 3: nothing is left to move for brittle (it passed in the end).
run_tpuci run --no-cache -j 2 "$spec"
expect_json "[i['first'] for i in s['instances'] if i['name'] == 'brittle']" "[None]"
expect_json "[i['outcome'] for i in s['instances'] if i['name'] == 'brittle']" "['passed']"
# tpuci flaky lists them with their class.
run_tpuci flaky
expect_out "o order-dependent"
printf '%s\n' "$out" | grep -E "^ +1\.00 +0/3 +ooo +t/test_b\.py::test_victim \[victim\]$" > /dev/null &&
  pass || fail "tpuci flaky: the victim is not 'ooo': $out"

# chance (issue 42.8): a test that fails now and then whatever ran before
# it. Its runs, counted in a file: 1 (after test_other in attempt 1)
# fails, 2 (alone, the retry) passes: a case, like the victim's; 3 (the
# check after test_other) fails: the failure came back; 4 (alone, a check
# apart from its candidates) fails: chance, not order. Flaky, not
# order-dependent; the old rule called it order-dependent, confirmed.
mkdir -p chance/t
cat > chance/t/test_a.py <<'PY'
def test_other():
    pass
PY
cat > chance/t/test_b.py <<'PY'
import os


def test_chance():
    path = os.environ["CHANCE_COUNT"]
    with open(path) as f:
        n = int(f.read() or 0) + 1
    with open(path, "w") as f:
        f.write(str(n))
    assert n not in (1, 3, 4), "run %d failed by chance" % n
PY
echo 0 > chance-count
cat > chance.lua <<LUA
job "chance" {
  pytest = { python = "/usr/bin/python3", args = { "t" }, failed_first = false },
  workdir = tpuci.spec_dir .. "/chance", env = { CHANCE_COUNT = "$WORK/chance-count" },
  retries = { attempts = 2 },
}
LUA
run_tpuci run --no-cache chance.lua
expect_code 0 "chance: passes, flaky"
expect_json "[i['outcome'] for i in s['instances']]" "['flaky']"
[ "$(test_is chance t/test_b.py::test_chance)" = "[('passed', False)]" ] && pass ||
  fail "chance: $(test_is chance t/test_b.py::test_chance), want passed and not order-dependent"
expect_out "tpuci: chance: order check: t/test_b.py::test_chance failed after 1 test"
expect_out "tpuci: chance: order check: t/test_b.py::test_chance failed after 0 tests (alone)"
expect_json "[(c['before'], c['result']) for i in s['instances'] for c in i['order_checks']]" \
  "[(1, 'failed'), (0, 'failed')]"
[ "$(cat chance-count)" = 4 ] && pass || fail "chance ran $(cat chance-count) times, want 4"
finish
