#!/usr/bin/env bash
# Podman: `kill -9` of tpuci leaves its containers, and a gang's network;
# `tpuci doctor` and the next run warn about them, `tpuci gc --dry-run`
# lists them and `tpuci gc` removes them (labels and label filters on
# containers and networks). --keep-failed keeps a failed container until
# gc.
. "$TESTS/podman/lib.sh"

mkdir out
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
job "a" { image = "bb", network = "none", mounts = { ["out"] = "/out" }, run = "touch /out/a; sleep 100" }
job "g" { image = "bb", topology = "duo", mounts = { ["out"] = "/out" }, run = "touch /out/g-$TPUCI_HOST; sleep 100" }
LUA
"$TPUCI" run -j 3 spec.lua > run.log 2>&1 &
tp=$!
for _ in $(seq 300); do [ -e out/a ] && [ -e out/g-0 ] && [ -e out/g-1 ] && break; sleep 0.1; done
run_id=$(latest_run_id)
kill -9 "$tp"
wait "$tp" 2>/dev/null
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 3 ] && pass || fail "kill -9 did not leave the 3 containers"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$tp")" = 1 ] && pass || fail "kill -9 did not leave the gang's network"
# A gang's network is internal (podman keeps the flag).
internal=$(api "/networks/tpuci-$run_id-g-1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Internal"))')
[ "$internal" = True ] && pass || fail "the gang's network is not internal: Internal = $internal"

run_tpuci doctor
expect_out "warn leftovers: 3 containers and 1 network left by earlier runs; run \`tpuci gc\`"
cat > ok.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", network = "none", run = "true" }
LUA
run_tpuci run ok.lua
expect_code 0 "a run beside leftovers"
expect_out "warning: 3 containers and 1 network left by earlier runs"
run_tpuci gc --dry-run
expect_code 0 "gc --dry-run"
expect_out "would remove container tpuci-$run_id-a-1"
expect_out "would remove network tpuci-$run_id-g-1"
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp")" = 3 ] && pass || fail "the dry run removed something"
run_tpuci gc
expect_code 0 "gc"
expect_out "removed container tpuci-$run_id-a-1"
expect_out "removed container tpuci-$run_id-g-1-worker-0"
expect_out "removed container tpuci-$run_id-g-1-worker-1"
expect_out "removed network tpuci-$run_id-g-1"
expect_out "tpuci gc: 4 objects removed"
expect_no_leftovers "$run_id" "$tp" "after gc"
run_tpuci gc
expect_out "nothing to remove"

# --keep-failed keeps the failed container; gc removes it afterwards.
cat > keep.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "broken" { image = "bb", network = "none", run = "exit 4" }
LUA
tpuci_run run --keep-failed keep.lua
expect_code 1 "a failed job"
run_id=$(latest_run_id)
expect_out "kept container tpuci-$run_id-broken-1"
[ "$(count_objects containers "tpuci.run=$run_id" "tpuci.pid=$tp" "tpuci.keep=1")" = 1 ] && pass || fail "the failed container was not kept"
run_tpuci gc
expect_out "removed container tpuci-$run_id-broken-1"
expect_no_leftovers "$run_id" "$tp" "the kept container after gc"
finish
