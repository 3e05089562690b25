#!/usr/bin/env bash
# A job that needs more memory than its limit: the kernel kills it, and
# the outcome is oom (the task ran on the manager, whose container says
# State.OOMKilled). One within its limit passes.
. "$TESTS/swarm/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "hungry" { image = "bb", runtime = "swarm", memory = "16m",
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
  run = "head -c 64m /dev/zero | tail" }
job "modest" { image = "bb", runtime = "swarm", memory = "16m",
  run = "head -c 4m /dev/zero | tail | wc -c" }
LUA
tpuci_run run spec.lua
expect_code 1 "the OOM fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'oom', 'modest': 'passed'}"
expect_json '"memory limit 16 MiB" in s["instances"][0]["attempts"][-1]["cause"]' True
expect_no_swarm_leftovers "$(latest_run_id)" "$tp" "an OOM"
finish
