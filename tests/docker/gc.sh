#!/usr/bin/env bash
# Leftovers: `kill -9` of tpuci leaves its containers; `tpuci gc` finds and
# removes them (dry run first). --keep-failed keeps a failed container and
# says how to look at it; gc removes it too once the run is over. The same
# for a gang's containers and network.
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
# The engine keeps its copy of the output with the "local" log driver
# (half json-file's cost per byte; bench/README.md).
logdriver=$(api "/containers/tpuci-$run_id-broken-1/json" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["HostConfig"]["LogConfig"]["Type"])')
[ "$logdriver" = local ] && pass || fail "the container's log driver is '$logdriver', want local"
run_tpuci gc
expect_out "removed container tpuci-$run_id-broken-1"
expect_no_leftovers "$run_id" "$tp" "kept container after gc"

# A gang killed with -9 leaves its hosts and its network; gc removes the
# containers first (they hold the network), then the network.
rm -f out/*
cat > gang.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
job "g" { image = "bb", topology = "duo", mounts = { ["out"] = "/out" }, run = "touch /out/g-$TPUCI_HOST; sleep 100" }
LUA
"$TPUCI" run gang.lua > run.log 2>&1 &
tp=$!
for _ in $(seq 200); do [ -e out/g-0 ] && [ -e out/g-1 ] && break; sleep 0.1; done
run_id=$(latest_run_id)
kill -9 "$tp"
wait "$tp" 2>/dev/null
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 2 ] && pass || fail "kill -9 of a gang did not leave its 2 containers"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$tp")" = 1 ] && pass || fail "kill -9 of a gang did not leave its network"
run_tpuci doctor
expect_out "left by earlier runs"
run_tpuci gc --dry-run
expect_out "would remove network tpuci-$run_id-g-1"
run_tpuci gc
expect_code 0 "gc of a gang"
expect_out "removed container tpuci-$run_id-g-1-worker-0"
expect_out "removed container tpuci-$run_id-g-1-worker-1"
expect_out "removed network tpuci-$run_id-g-1"
expect_no_leftovers "$run_id" "$tp" "the gang after gc"

# --keep-failed keeps a failed gang, network included; gc removes it.
cat > keepgang.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
job "g" { image = "bb", topology = "duo", run = "[ $TPUCI_HOST = 0 ] || exit 5; sleep 100" }
LUA
tpuci_run run --keep-failed keepgang.lua
expect_code 1 "a failed gang"
run_id=$(latest_run_id)
expect_out "worker-1: exit 5"
expect_out "kept container tpuci-$run_id-g-1-worker-0"
expect_out "kept container tpuci-$run_id-g-1-worker-1"
expect_out "kept network tpuci-$run_id-g-1"
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp" "tpuci.keep=1")" = 2 ] && pass || fail "the failed gang's containers were not kept"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$tp")" = 1 ] && pass || fail "the failed gang's network was not kept"
run_tpuci gc
expect_out "removed network tpuci-$run_id-g-1"
expect_no_leftovers "$run_id" "$tp" "the kept gang after gc"
finish
