#!/usr/bin/env bash
# retries.rerun = "unfinished" (issue 22.8): after a timeout, the retry
# runs the test the attempt was cut short in and those it never reached,
# not the test that failed and finished; once every test has finished
# there is no further retry. The default ("failed") runs the failing test
# again on every attempt.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/rerun/spec.lua

run_tpuci plan "$spec"
expect_out "rerunning unfinished tests only" "plan text"
run_tpuci run -j 2 "$spec"
expect_code 1 "test_a_fails fails"
runs() { # INSTANCE: "test: runs outcome" for each test
  json "' '.join(t['id'].split('::')[1] + ':' + str(t['runs']) + ':' + t['outcome'] for i in s['instances'] if i['name'] == '$1' for t in i['tests'])"
}
expect_json "[len(i['attempts']) for i in s['instances']]" "[2, 3]"
got=$(runs unfinished)
[ "$got" = "test_a_fails:1:failed test_b_hangs_once:2:passed test_c_after:1:passed" ] && pass ||
  fail "rerun = unfinished: $got"
got=$(runs default)
[ "$got" = "test_a_fails:3:failed test_b_hangs_once:2:passed test_c_after:1:passed" ] && pass ||
  fail "the default rerun: $got"
# The retry of b and c passes; test_a_fails still fails the instance.
expect_json "[a['outcome'] for a in s['instances'][0]['attempts']]" "['timeout', 'passed']"
expect_json "[i['outcome'] for i in s['instances']]" "['failed', 'failed']"

cat > bad.lua <<'LUA'
job "cmd" { run = "true", retries = { attempts = 2, rerun = "unfinished" } }
LUA
run_tpuci plan bad.lua
expect_code 2 "rerun on a command job"
expect_out "bad.lua:1: job 'cmd': retries.rerun: only a pytest job runs tests again"
finish
