#!/usr/bin/env bash
# A job past its timeout: the whole process tree is stopped (SIGTERM,
# grace, SIGKILL), the outcome is timeout, not failed.
. "$TESTS/e2e/lib.sh"

alive() { [ -r "/proc/$1/stat" ] && ! awk '{ exit !($3 == "Z") }' "/proc/$1/stat"; }

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
finish
