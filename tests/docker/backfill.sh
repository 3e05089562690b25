#!/usr/bin/env bash
# Backfill (issue 23.5): while a 2-host gang waits for 2 free slots (-j 2,
# one taken by a long job), a later 1-slot job runs in the idle slot
# instead of waiting behind it; the slot the long job frees is held for
# the gang, which then starts before the jobs behind it.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2, emulate = "none" }
local mounts = { ["out"] = "/out" }
-- Ends once b1 ran (or after 30 s: then b1 waited behind the gang).
job "long" { image = "bb", mounts = mounts,
             run = "n=0; while [ ! -e /out/b1 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done" }
job "gang" { image = "bb", topology = "duo", run = "true" }
-- b1 outlives long, so long's slot is the one held for the gang.
job "b1" { image = "bb", mounts = mounts, run = "touch /out/b1; sleep 8" }
job "b2" { image = "bb", run = "true" }
job "b3" { image = "bb", run = "true" }
LUA
tpuci_run run -j 2 spec.lua
expect_code 0 "the jobs"
start() { json "[i for i in s['instances'] if i['name'] == '$1'][0]['attempts'][0]['start_ms']"; }
long=$(start long) gang=$(start gang) b1=$(start b1) b2=$(start b2) b3=$(start b3)
[ "$b1" -lt "$gang" ] && pass || fail "b1 waited behind the gang (b1 at $b1, gang at $gang)"
[ "$b1" -lt $((long + 20000)) ] && pass || fail "b1 did not run while long did (long at $long, b1 at $b1)"
[ "$gang" -lt "$b2" ] && [ "$gang" -lt "$b3" ] && pass ||
  fail "the gang was passed by more than the idle slot (gang at $gang, b2 at $b2, b3 at $b3)"
expect_no_leftovers "$(latest_run_id)" "$tp" "after the backfill"
finish
