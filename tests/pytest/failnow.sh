#!/usr/bin/env bash
# A failure is said when it happens (issue 31.7): a line per failed test
# on the plain and GitHub consoles as pytest's progress reports it, while
# the shard that ran it still runs (its next test waits for a file this
# script makes only once the line is there).
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/failnow/spec.lua

# wait_for FILE PATTERN: until FILE holds PATTERN (grep -F), at most 120 s.
wait_for() {
  local i
  for i in $(seq 1200); do
    grep -qF -- "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}

for style in plain github; do
  export FAILNOW_RELEASE=$WORK/release-$style
  if [ $style = github ]; then export GITHUB_ACTIONS=true; else unset GITHUB_ACTIONS; fi
  "$TPUCI" run --no-cache -j 2 "$spec" > $style.txt 2>&1 &
  pid=$!
  line="[test   ] failnow[shard=1/2]: FAILED t/test_a.py::test_fails_early - AssertionError: broken from the start"
  if wait_for $style.txt "$line"; then
    pass
    # Said while its shard runs: its attempt has not ended, and its next
    # test has not finished (it waits for the release).
    grep -qE '^\[(failed |pass   )\] failnow\[shard=1/2\]: ' $style.txt &&
      fail "$style: the shard ended before its failure was said: $(cat $style.txt)" || pass
    dir=$(sed -n 's/^tpuci: run folder //p' $style.txt | head -n 1)
    grep -q '"id": "t/test_a.py::test_waits_for_release", "when": "call"' \
      "$dir/failnow_shard=1_2_"*/results-1/progress.jsonl 2> /dev/null &&
      fail "$style: the shard's next test had finished" || pass
  else
    fail "$style: no line for the failed test: $(cat $style.txt)"
  fi
  touch "$FAILNOW_RELEASE"
  wait "$pid"
  code=$?
  out=$(cat $style.txt)
  expect_code 1 "$style: the run"
  # Once: a line per test and process.
  n=$(grep -cF "$line" $style.txt)
  [ "$n" = 1 ] && pass || fail "$style: the failure was said $n times"
done
finish
