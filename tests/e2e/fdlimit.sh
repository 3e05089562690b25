#!/usr/bin/env bash
# File descriptors: 500 local jobs at -j 500 under `ulimit -n 1024` (soft
# and hard) used to end with 165 attempts `infra` ("too many open
# files"). The run now takes fewer slots, says so exactly once, and every
# job passes. With a higher hard limit the CLI raises its soft limit
# first, and nothing is lowered.
. "$TESTS/e2e/lib.sh"

cat > many.lua <<'LUA'
for i = 1, 500 do job ("j" .. i) { run = "sleep 1" } end
LUA

out=$(ulimit -Sn 1024 -Hn 1024 && "$TPUCI" run -j 500 many.lua 2>&1)
code=$?
expect_code 0 "500 jobs at -j 500 with 1024 descriptors"
expect_json 's["counts"]["infra"]' 0
expect_json 's["counts"]["passed"]' 500
expect_not_out "too many open files"
expect_out "tpuci: warning: -j 500 lowered to 320: only 1024 file descriptors (ulimit -n)"
n=$(printf '%s\n' "$out" | grep -c "lowered to")
[ "$n" = 1 ] && pass || fail "the warning is printed $n times, want once"
expect_json 's["jobs"]' 320

# A hard limit above the soft one: the CLI takes it, and so do its jobs.
cat > lim.lua <<'LUA'
job "lim" { run = "ulimit -n" }
LUA
if (ulimit -Sn 1024 && ulimit -Hn 4096) 2>/dev/null; then
  out=$(ulimit -Sn 1024 && ulimit -Hn 4096 && "$TPUCI" run -v -j 500 many.lua 2>&1 && "$TPUCI" run -v lim.lua 2>&1)
  code=$?
  expect_code 0 "soft 1024, hard 4096"
  expect_not_out "lowered to"
  expect_out "[lim] 4096"
else
  echo "note: cannot set a hard limit of 4096 here; the CLI's raise is not checked"
fi
finish
