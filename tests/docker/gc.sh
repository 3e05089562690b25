#!/usr/bin/env bash
# Leftovers: `kill -9` of tpuci leaves its containers; `tpuci gc` finds and
# removes them (dry run first). --keep-failed keeps a failed container and
# says how to look at it; gc removes it too once the run is over.
. "$TESTS/docker/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/a; sleep 100" }
job "b" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/b; sleep 100" }
LUA
"$TPUCI" run -j 2 spec.lua > run.log 2>&1 &
tp=$!
for _ in $(seq 200); do [ -e out/a ] && [ -e out/b ] && break; sleep 0.1; done
run_id=$(latest_run_id)
kill -9 "$tp"
wait "$tp" 2>/dev/null
left=$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")
[ "$left" = 2 ] && pass || fail "kill -9 left $left containers, expected 2"

run_tpuci doctor
expect_out "left by earlier runs"
run_tpuci gc --dry-run
expect_code 0 "gc --dry-run"
expect_out "would remove container tpuci-$run_id"
left=$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")
[ "$left" = 2 ] && pass || fail "dry run removed something ($left left)"
run_tpuci gc
expect_code 0 "gc"
expect_out "removed container tpuci-$run_id"
expect_no_leftovers "$run_id" "$tp" "after gc"

# --keep-failed.
cat > keep.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "broken" { image = "bb", network = "none", run = "echo evidence > /tmp/clue; exit 4" }
job "fine" { image = "bb", network = "none", run = "true" }
LUA
tpuci_run run --keep-failed keep.lua
expect_code 1 "a failed job"
run_id=$(latest_run_id)
expect_out "kept container tpuci-$run_id-broken-1"
expect_out "docker logs tpuci-$run_id-broken-1"
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 1 ] && pass || fail "not exactly the failed container kept"
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp" "tpuci.keep=1")" = 1 ] && pass || fail "kept container lacks tpuci.keep=1"
run_tpuci gc
expect_out "removed container tpuci-$run_id-broken-1"
expect_no_leftovers "$run_id" "$tp" "kept container after gc"
finish
