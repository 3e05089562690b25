#!/usr/bin/env bash
# A job past its timeout: the whole process tree is stopped (SIGTERM,
# grace, SIGKILL), the outcome is timeout, not failed. idle_timeout: an
# attempt that goes quiet is stopped the same way, one that keeps talking
# is not.
. "$TESTS/e2e/lib.sh"

# (One read: a zombie reaped between a test of the file and awk's open
# would read as alive. A stat that cannot be read is a process gone.)
alive() { awk '{ exit !($3 != "Z") }' "/proc/$1/stat" 2>/dev/null; }

mkdir out
OUT="$WORK/out" run_tpuci run "$SPECS/timeout.lua"
expect_code 1 "timeout"
expect_out "timed out after 1s"
expect_json 's["instances"][0]["outcome"]' timeout
expect_json 's["instances"][0]["attempts"][0]["signal"]' 9
for f in child grandchild; do
  pid=$(cat "out/$f.pid" 2>/dev/null)
  [ -n "$pid" ] || { fail "no $f pid"; continue; }
  for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && fail "$f $pid survived the timeout" || pass
done

# timeout = 0 is no timeout: the job runs to its end.
cat > zero.lua <<'LUA'
job "zero" { run = "sleep 1; echo finished", timeout = 0 }
LUA
run_tpuci run zero.lua
expect_code 0 "timeout = 0"
expect_json 's["instances"][0]["outcome"]' passed
grep -qx finished "$(json 's["instances"][0]["attempts"][0]["log"]')" && pass ||
  fail "timeout = 0: the job did not run to its end"
# idle_timeout: output keeps the attempt alive however long it runs; a
# quiet one is stopped (SIGTERM first: its trap prints), with the cause
# naming the quiet, and retried like any timeout.
cat > idle.lua <<'LUA'
job "talks" { run = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.5; done", idle_timeout = "2s" }
job "quiet" { run = [[trap 'echo got TERM; exit 143' TERM; echo started; while :; do sleep 0.1; done]],
              idle_timeout = "1500ms", retries = { attempts = 2, on = { "timeout" }, backoff = 0 } }
LUA
run_tpuci plan idle.lua
expect_out "idle:     no output for 1.5s: timeout" "plan text"
run_tpuci plan --json idle.lua
got=$(printf '%s' "$out" | /usr/bin/python3 -c 'import json,sys; print([i["idle_timeout_ms"] for i in json.load(sys.stdin)["instances"]])')
[ "$got" = "[2000, 1500]" ] && pass || fail "plan --json: idle_timeout_ms: '$got'"
run_tpuci run -j 2 idle.lua
expect_code 1 "a quiet attempt"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'talks': 'passed', 'quiet': 'timeout'}"
expect_json '[a["cause"] for a in s["instances"][1]["attempts"]]' "['no output for 1.5s', 'no output for 1.5s']"
expect_out "no output for 1.5s" "the console says which timeout"
grep -qx "got TERM" "$WORK/.tpuci/runs/latest/quiet/attempt-1.log" && pass ||
  fail "idle_timeout: the attempt did not get SIGTERM first"
grep -qx "tick 6" "$WORK/.tpuci/runs/latest/talks/attempt-1.log" && pass ||
  fail "idle_timeout: a job that keeps printing was stopped"
cat > idle_bad.lua <<'LUA'
job "x" { run = "true", idle_timeout = 0.0001 }
LUA
run_tpuci plan idle_bad.lua
expect_code 2 "idle_timeout under 1ms"
expect_out "idle_bad.lua:1: job 'x': idle_timeout: less than 1ms, got 0.0001 (write 0 for none)"
finish
