#!/usr/bin/env bash
# The command line: help, version, usage errors, plan.
. "$TESTS/e2e/lib.sh"

run_tpuci --version
expect_code 0 "--version"
expect_out "tpuci 0."

run_tpuci --help
expect_code 0 "--help"
expect_out "usage: tpuci <command>"
expect_out "exit codes"

run_tpuci help run
expect_code 0 "help run"
expect_out "--fail-fast"
expect_out "--deadline"

run_tpuci
expect_code 2 "no command"

run_tpuci frobnicate
expect_code 2 "unknown command"
expect_out "unknown command 'frobnicate'"

run_tpuci run
expect_code 2 "run without spec"
expect_out "missing SPEC"

run_tpuci run -j 0 "$SPECS/pass.lua"
expect_code 2 "-j 0"

run_tpuci run --deadline soon "$SPECS/pass.lua"
expect_code 2 "bad --deadline"

run_tpuci run "$WORK/nonexistent.lua"
expect_code 2 "missing spec file"
expect_out "nonexistent.lua: cannot read spec"

run_tpuci plan "$SPECS/basic.lua"
expect_code 0 "plan"
expect_out "unit[python=3.10]"
expect_out "unit[python=3.11]"
[ ! -d .tpuci ] && pass || fail "plan must not create a run folder"

run_tpuci plan --json "$SPECS/basic.lua"
expect_code 0 "plan --json"
names=$(printf '%s' "$out" | python3 -c 'import json,sys; print(",".join(i["name"] for i in json.load(sys.stdin)["instances"]))')
[ "$names" = "ok,bad,unit[python=3.10],unit[python=3.11]" ] && pass || fail "plan --json names: $names"

run_tpuci plan --json --only 'unit*' "$SPECS/basic.lua"
expect_code 0 "plan --only"
names=$(printf '%s' "$out" | python3 -c 'import json,sys; print(",".join(i["name"] for i in json.load(sys.stdin)["instances"]))')
[ "$names" = "unit[python=3.10],unit[python=3.11]" ] && pass || fail "plan --only names: $names"

run_tpuci plan --only 'nothing*' "$SPECS/basic.lua"
expect_code 2 "--only matching nothing"
expect_out "no job instance matches 'nothing*'"

run_tpuci topologies
expect_code 0 "topologies"
expect_out "v5litepod-8"
expect_out "tpu-v6e-slice"
run_tpuci topologies --emulate jax v4-16
expect_code 0 "topologies v4-16"
expect_out "TPU_HOST_BOUNDS=1,1,2"
expect_out "XLA_FLAGS=--xla_force_host_platform_device_count=4"
expect_out "host 1 (worker-1):"
expect_out "source: tpu-topology.md (its sections), by value:"
expect_out "    host_bounds: 4a (xla_dist); 4b (v4-16 tpu-env HOST_BOUNDS 1,1,2)"
run_tpuci topologies v4-61
expect_code 2 "unknown topology"
expect_out "did you mean 'v4-64'?"

finish
