#!/usr/bin/env bash
# Leftovers on each engine (engine.sh): `kill -9` of tpuci while a job and
# a 2-host gang run leaves their containers (services on swarm) and the
# gang's network; `tpuci doctor` and the next run warn about them, `tpuci
# gc --dry-run` lists them and removes nothing, `tpuci gc` removes them
# (the units first, they hold the network) and nothing is left when it
# returns; a second gc finds nothing. --keep-failed keeps a failed job's
# unit and a failed gang's units and network, says how to look at them,
# and gc removes them once the run is over.
# What only one engine has: docker keeps a container's output with the
# "local" log driver; swarm's gc waits for the tasks of a job that ignores
# SIGTERM (tests/swarm/gc.sh).
. "$TESTS/engines/engine.sh"

mkdir out
spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
job "a" { image = "bb", @NONET@ mounts = { ["out"] = "/out" }, run = "touch /out/a; sleep 600" }
job "g" { image = "bb", topology = "duo", mounts = { ["out"] = "/out" }, run = "touch /out/g-$TPUCI_HOST; sleep 600" }
LUA
engine_start run -j 3 spec.lua
# Up to 5 minutes: a loaded machine starts a gang slowly.
for _ in $(seq 3000); do [ -e out/a ] && [ -e out/g-0 ] && [ -e out/g-1 ] && break; sleep 0.1; done
run_id=$(latest_run_id)
kill -9 "$tp"
wait "$tp" 2>/dev/null
dead=$tp   # the runs below set $tp
# a's, g's two hosts' and g's go (its start barrier's, which the hosts
# waited for).
[ "$(engine_jobs "tpuci.run=$run_id" "tpuci.pid=$dead")" = 4 ] && pass || fail "kill -9 did not leave the 4 ${ENGINE_UNIT}s"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$dead")" = 1 ] && pass || fail "kill -9 did not leave the gang's network"

engine_run doctor spec.lua
expect_out "4 ${ENGINE_UNIT}s and 1 $ENGINE_NET left by earlier runs; run \`tpuci gc\`"
spec ok.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "ok" { image = "bb", @NONET@ run = "true" }
LUA
engine_run run ok.lua
expect_code 0 "a run beside leftovers"
expect_out "left by earlier runs; run \`tpuci gc\`"
run_tpuci gc --dry-run
expect_code 0 "gc --dry-run"
expect_out "would remove $ENGINE_UNIT tpuci-$run_id-a-1 (run $run_id"
expect_out "would remove $ENGINE_UNIT tpuci-$run_id-g-1${ENGINE_HOST_SUFFIX}1 (run $run_id"
expect_out "would remove $ENGINE_NET tpuci-$run_id-g-1 (run $run_id, job g)"
[ "$(engine_jobs "tpuci.run=$run_id" "tpuci.pid=$dead")" = 4 ] && pass || fail "the dry run removed something"
run_tpuci gc
expect_code 0 "gc"
expect_out "removed $ENGINE_UNIT tpuci-$run_id-a-1 (run $run_id)"
expect_out "removed $ENGINE_UNIT tpuci-$run_id-g-1${ENGINE_HOST_SUFFIX}0 (run $run_id)"
expect_out "removed $ENGINE_UNIT tpuci-$run_id-g-1${ENGINE_HOST_SUFFIX}1 (run $run_id)"
expect_out "removed $ENGINE_NET tpuci-$run_id-g-1 (run $run_id)"
expect_not_out "FAILED"
# Gone when gc returns, without waiting here.
u=$(engine_jobs "tpuci.pid=$dead")
n=$(count_objects networks "tpuci.pid=$dead")
c=$(count_objects containers "tpuci.pid=$dead")
[ "$u$n$c" = 000 ] && pass || fail "when gc returned: $u ${ENGINE_UNIT}s, $n networks and $c containers left"
expect_gone "$run_id" "$dead" "after gc"
run_tpuci gc
expect_out "nothing to remove"

# --keep-failed keeps the failed job and the failed gang, network
# included, and says how to look at them; gc removes them.
spec keep.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "duo" { hosts = 2 }
job "broken" { image = "bb", @NONET@ run = "echo evidence > /tmp/clue; exit 4" }
job "fine" { image = "bb", @NONET@ run = "true" }
job "g" { image = "bb", topology = "duo", run = "[ $TPUCI_HOST = 0 ] || exit 5; sleep 100" }
LUA
engine_run run --keep-failed -j 4 keep.lua
expect_code 1 "failed jobs"
run_id=$(latest_run_id)
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'broken': 'failed', 'fine': 'passed', 'g': 'failed'}"
expect_out "worker-1: exit 5"
expect_out "kept $ENGINE_UNIT tpuci-$run_id-broken-1: see its output with \`docker "
expect_out "kept $ENGINE_UNIT tpuci-$run_id-g-1${ENGINE_HOST_SUFFIX}0"
expect_out "kept $ENGINE_UNIT tpuci-$run_id-g-1${ENGINE_HOST_SUFFIX}1"
expect_out "kept network tpuci-$run_id-g-1"
[ "$(engine_jobs "tpuci.run=$run_id" "tpuci.pid=$tp")" = 3 ] && pass || fail "not exactly the failed ${ENGINE_UNIT}s kept"
[ "$(engine_jobs "tpuci.run=$run_id" "tpuci.pid=$tp" "tpuci.keep=1")" = 3 ] && pass || fail "the kept ${ENGINE_UNIT}s lack tpuci.keep=1"
[ "$(count_objects networks "tpuci.run=$run_id" "tpuci.pid=$tp")" = 1 ] && pass || fail "the failed gang's network was not kept"
if [ "$ENGINE" = docker ]; then
  # The engine keeps its copy of the output with the "local" log driver
  # (half json-file's cost per byte; bench/README.md).
  logdriver=$(api "/containers/tpuci-$run_id-broken-1/json" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["HostConfig"]["LogConfig"]["Type"])')
  [ "$logdriver" = local ] && pass || fail "the container's log driver is '$logdriver', want local"
fi
run_tpuci gc
expect_out "removed $ENGINE_UNIT tpuci-$run_id-broken-1"
expect_out "removed $ENGINE_NET tpuci-$run_id-g-1"
expect_not_out "FAILED"
expect_gone "$run_id" "$tp" "the kept ones after gc"
finish
