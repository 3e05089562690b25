#!/usr/bin/env bash
# The history across runs tells the truth (issue 31.4-6, 31.8):
#  - a cancelled run (Ctrl-C, --deadline) writes no failure for the tests
#    it did not reach or cut short: `tpuci flaky` counts none;
#  - a test is one test whichever shard ran it: failing in runs 1, 3, 5
#    of a 2-shard job (of one commit) is one row at 0.80 (also from rows
#    written with the shard in the instance, as before: one row, whose
#    changes are no flips, being of no known tree, issue 42.6);
#  - 60 runs, 4 at a time, sharing one state folder keep 60 runs in the
#    history and every duration, and none ends with exit 4;
#  - the quarantine file is named relative to the current folder, and an
#    entry that also covers passing tests is said on the console.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
cp -r "$TESTS/pytest/history" proj
git init -q proj && git -C proj add -A && git -C proj -c user.email=t@t -c user.name=t commit -qm init
spec=$WORK/proj/spec.lua
export HISTORY_RELEASE=$WORK/release HISTORY_RUN=0

# wait_for FILE PATTERN: until FILE holds PATTERN (grep -E), at most 120 s.
wait_for() {
  local i
  for i in $(seq 1200); do
    grep -qE "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}

# ---- A cancelled run: its unreached tests are absent, not failed.
touch "$HISTORY_RELEASE"
for n in 1 2; do
  run_tpuci run --no-cache --only cancel "$spec"
  expect_code 0 "cancel: passing run $n"
done
rm -f "$HISTORY_RELEASE"
"$TPUCI" run --no-cache --only cancel "$spec" > interrupted.txt 2>&1 &
pid=$!
wait_for interrupted.txt '^tpuci: run folder ' || fail "no run folder said"
dir=$(sed -n 's/^tpuci: run folder //p' interrupted.txt | head -n 1)
# Ctrl-C while the second test runs (the third and fourth never start).
wait_for "$dir/cancel/results-1/progress.jsonl" '"start": "t/test_c.py::test_2_waits"' ||
  fail "test_2_waits never started: $(cat interrupted.txt)"
kill -INT "$pid"
wait "$pid"
code=$?
expect_code 130 "Ctrl-C"
last=$(tail -n 1 .tpuci/history.jsonl)
case "$last" in
  *'"cancel","t/test_c.py::test_1_passes","p"'*) pass ;;
  *) fail "the interrupted run's history has no pass of test_1: $last" ;;
esac
case "$last" in
  *test_2_waits* | *test_3_passes* | *test_4_passes*) fail "the interrupted run wrote tests it did not finish: $last" ;;
  *) pass ;;
esac
# --deadline: the same.
run_tpuci run --no-cache --only cancel --deadline 4s "$spec"
expect_code 1 "cancel: --deadline"
run_tpuci flaky --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print([(t["id"], t["outcomes"]) for t in json.load(sys.stdin)["tests"] if t["instance"] == "cancel"])')
[ "$got" = "[]" ] && pass || fail "tpuci flaky counts failures of a cancelled run: $got"
run_tpuci flaky
expect_out "4 runs in the history (.tpuci/history.jsonl), 0 tests failed in them"
# The interrupted attempt's test case says "cancelled" once.
junit=$dir/junit.xml
grep -q 'message="cancelled: interrupted while running t/test_c.py::test_2_waits' "$junit" && pass ||
  fail "junit: no 'cancelled: interrupted while running' message: $(grep -o 'message="cancel[^"]*"' "$junit")"
grep -q 'cancelled: cancelled' "$junit" && fail "junit says 'cancelled: cancelled'" || pass

# ---- Shards: one test, one history, whichever shard ran it.
for n in 1 2 3 4 5; do
  HISTORY_RUN=$n run_tpuci run --no-cache --only 'flip*' "$spec"
  [ $((n % 2)) = 1 ] && expect_code 1 "flip: run $n fails" || expect_code 0 "flip: run $n passes"
done
run_tpuci flaky --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys
print([(t["instance"], t["outcomes"][-5:], round(t["flip_rate"], 2)) for t in json.load(sys.stdin)["tests"] if t["id"] == "t/test_f.py::test_flip"])')
[ "$got" = "[('flip', 'fpfpf', 0.8)]" ] && pass || fail "tpuci flaky: test_flip of the 2-shard job: $got"
# Rows written with the shard in the instance (before issue 31) read as
# one test too: the issue's two rows, -pfpf in shard 2 and f---- in 1.
mkdir old
for n in 1 2 3 4 5; do
  case $n in 1) code=f shard=1 ;; 2 | 4) code=p shard=2 ;; *) code=f shard=2 ;; esac
  printf '{"run":"r%d","time":%d000,"commit":null,"tests":[["flip[shard=%d/2]","t/test_f.py::test_flip","%s",0.01,null]]}\n' \
    "$n" "$n" "$shard" "$code" >> old/history.jsonl
done
run_tpuci flaky --state-dir old
expect_out "1 test failed in them"
expect_out "5 of them of no known tree (outside git, or recorded before trees were)"
expect_out "     0.00      3/5     fpfpf                           t/test_f.py::test_flip [flip]"

# ---- 60 runs, 4 at a time, one state folder.
mkdir -p conc/logs
export TPUCI spec
seq 1 60 | xargs -P 4 -I{} sh -c '"$TPUCI" run --no-cache -j 1 --only quiet --state-dir conc/state "$spec" > conc/logs/{}.txt 2>&1; echo $? > conc/logs/{}.rc'
ok=$(cat conc/logs/*.rc | grep -cx 0)
four=$(cat conc/logs/*.rc | grep -cx 4)
lines=$(wc -l < conc/state/history.jsonl)
runs=$(/usr/bin/python3 -c 'import json; print(json.load(open("conc/state/timings.json"))["tests"]["t/test_q.py::test_quick"]["runs"])')
echo "60 runs 4 at a time: $ok exit 0, $four exit 4, $lines runs in the history, $runs durations"
[ "$ok" = 60 ] && [ "$four" = 0 ] && pass ||
  fail "60 runs 4 at a time: $ok exit 0, $four exit 4: $(grep -h 'cannot' conc/logs/*.txt | sort | uniq -c)"
[ "$lines" = 60 ] && pass || fail "60 runs 4 at a time kept $lines runs in the history"
[ "$runs" = 60 ] && pass || fail "60 runs 4 at a time kept $runs durations of the test"
ls -a conc/state | grep -q '\.tmp$' && fail "temporary files left: $(ls -a conc/state)" || pass

# ---- The quarantine: named from here; its glob covers a passing test.
cp -r "$TESTS/pytest/history/quar" .
run_tpuci run --no-cache --junit quar.xml quar/spec.lua
expect_code 0 "quarantined failure only"
expect_out "quarantined until 2099-12-31 by @alice (quar/tpuci-quarantine.yaml:1): broken on this machine"
expect_out "quarantine: quar/tpuci-quarantine.yaml:1 also covers 1 test that passed: t/test_q.py::test_q_fine"
grep -q 'name="tpuci.quarantined" value="t/test_q.py::test_q_broken: broken on this machine (owner @alice, until 2099-12-31, quar/tpuci-quarantine.yaml:1)"' quar.xml &&
  pass || fail "junit: the quarantine property: $(grep -o 'tpuci.quarantined" value="[^"]*"' quar.xml)"
finish
