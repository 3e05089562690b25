#!/usr/bin/env bash
# A job that needs more memory than its limit: the kernel kills it and the
# outcome is oom, read from the engine (State.OOMKilled).
. "$TESTS/docker/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "hungry" { image = "bb", network = "none", memory = "16m",
  -- The engine sometimes reports a memory kill as a plain exit 137 under
  -- load (State.OOMKilled false): retrying only "failed" makes the test
  -- need one attempt the engine got right; an oom is never retried.
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
  run = "head -c 64m /dev/zero | tail" }
job "modest" { image = "bb", network = "none", memory = "16m",
  run = "head -c 4m /dev/zero | tail | wc -c" }
LUA
tpuci_run run spec.lua
expect_code 1 "the OOM fails the run"
before=$failures
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'oom', 'modest': 'passed'}"
# Diagnostics: what the engine said about the hungry container.
[ "$failures" = "$before" ] || json '[(a["exit_code"], a["cause"], a["log_tail"]) for a in s["instances"][0]["attempts"]]' >&2
expect_json '"memory" in s["instances"][0]["attempts"][-1]["cause"]' True
expect_no_leftovers "$(latest_run_id)" "$tp" "after an OOM"
finish
