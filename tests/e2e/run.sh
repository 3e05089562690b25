#!/usr/bin/env bash
# tpuci run: outcomes, exit codes, logs, summary.json, --only, -j.
. "$TESTS/e2e/lib.sh"

run_tpuci run "$SPECS/pass.lua"
expect_code 0 "all passing"
expect_out "verdict: PASSED"
[ -L .tpuci/runs/latest ] && pass || fail "no .tpuci/runs/latest link"
expect_json 's["counts"]["passed"]' 2
expect_json 'len(s["instances"])' 2

run_tpuci run -j 2 "$SPECS/basic.lua"
expect_code 1 "one failing"
expect_out "verdict: FAILED"
expect_out "bad: exit 3"
# Not a terminal: each finished attempt's output is printed whole, as
# one block, and there is no escape code anywhere.
expect_out "--- output of bad, attempt 1/1 ---
about to fail
broken
--- end of bad ---"
expect_out "--- output of ok, attempt 1/1 ---
hello from ok
--- end of ok ---"
case "$out" in *$'\033'*) fail "escape codes in non-terminal output" ;; *) pass ;; esac
expect_json '[i["outcome"] for i in s["instances"]]' "['passed', 'failed', 'passed', 'passed']"
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' 3
expect_json 's["exit_code"]' 1
log=$(json 's["instances"][2]["attempts"][0]["log"]')
grep -q "python=3.10 matrix=3.10" "$log" && pass || fail "matrix value not in unit[python=3.10] log: $(cat "$log")"
# attempts.jsonl has one line per attempt.
n=$(wc -l < .tpuci/runs/latest/attempts.jsonl)
[ "$n" = 4 ] && pass || fail "attempts.jsonl has $n lines, want 4"

run_tpuci run --no-cache --only 'unit*' "$SPECS/basic.lua"
expect_code 0 "--only unit*"
expect_json 'len(s["instances"])' 2
expect_not_out "[start] bad"

run_tpuci run --no-cache -q "$SPECS/pass.lua"
expect_code 0 "quiet"
expect_not_out "[start]"

run_tpuci run --no-cache -v "$SPECS/basic.lua"
expect_code 1 "verbose"
expect_out "[ok] hello from ok"
expect_out "[unit[python=3.11]] python=3.11 matrix=3.11"

# Topologies with the local runtime: one host gets its environment; a
# gang is refused before anything runs.
cat > topo.lua <<'LUA'
topology "v4-8" { emulate = "pjrt" }
topology "v4-16" { emulate = "jax" }
job "one" { topology = "v4-8", run = "echo env=$TPU_ACCELERATOR_TYPE,$CPU_NUM_DEVICES,$TPU_WORKER_HOSTNAMES,$PJRT_DEVICE,$TPU_CHIPS_PER_HOST_BOUNDS" }
job "gang" { topology = "v4-16", run = "true" }
LUA
run_tpuci run -v --only one topo.lua
expect_code 0 "single-host topology, local"
expect_out "[one] env=v4-8,4,localhost,CPU,2,2,1"
run_tpuci run -j 4 topo.lua
expect_code 2 "local gang"
expect_out "topo.lua:4: 'gang' is a gang of 2 hosts, which needs the docker runtime"
# A catalogue type named directly, without a declaration: its default
# emulation; a name that is neither fails with a suggestion.
cat > direct.lua <<'LUA'
job "one" { topology = "v4-8", run = "echo env=$TPU_ACCELERATOR_TYPE,$CPU_NUM_DEVICES,$PJRT_DEVICE" }
LUA
run_tpuci run -v direct.lua
expect_code 0 "a catalogue type named directly"
expect_out "[one] env=v4-8,4,CPU"
printf 'job "one" { topology = "v4-61", run = "true" }\n' > typo.lua
run_tpuci run typo.lua
expect_code 2 "an unknown topology name"
expect_out "typo.lua:1: job 'one': topology 'v4-61' is neither declared nor a TPU type (did you mean 'v4-64'?)"
# A gang in containers brings its own network: a network key is refused
# before any engine is asked.
cat > gangnet.lua <<'LUA'
topology "v4-16" {}
job "g" { image = "tpuci-test/busybox:1", topology = "v4-16", network = "none", run = "true" }
LUA
DOCKER_HOST=unix:///nonexistent run_tpuci run -j 2 gangnet.lua
expect_code 2 "gang with a network"
expect_out "gangnet.lua:2: 'g': a gang gets a private network of its own"
finish
