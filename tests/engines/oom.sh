#!/usr/bin/env bash
# A job that needs more memory than its limit, on each engine
# (engine.sh): the kernel kills it; one within its limit passes; so does
# a gang's host, the others stopped. On docker and swarm (whose task ran
# on the manager, whose container says State.OOMKilled) the outcome is
# oom, read from the engine. Podman before 5.0 never sets
# State.OOMKilled: its conmon records the kill in a file "oom" in its
# working directory, where podman does not look (containers/podman#13102,
# containers/conmon#504). So on podman 4 tpuci takes the SIGKILL under the
# limit for an OOM kill: the outcome is oom with exit 137, and the cause
# says what that probably is; on podman 5 and later it is read, as on
# Docker.
#
# Docker only: an engine that misses OOM kills (State.OOMKilled false:
# Docker does for containers killed right after their start), made by a
# proxy that hides them (faultproxy.py no-oom): a job that sat at its
# limit for a few seconds before the kill is oom all the same (the
# engine's stats showed the limit reached), and so is one killed at once
# (a SIGKILL tpuci did not send, under the limit), its cause saying it
# was probably out of memory, naming the limit; retries.on = {"oom"}
# retries it.
. "$TESTS/engines/engine.sh"

spec spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "hungry" { image = "bb", @NONET@ memory = "16m",
  -- The engine sometimes reports a memory kill as a plain exit 137 under
  -- load (State.OOMKilled false): retrying only "failed" makes the test
  -- need one attempt the engine got right; an oom is never retried.
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
  run = "head -c 64m /dev/zero | tail" }
job "modest" { image = "bb", @NONET@ memory = "16m",
  run = "head -c 4m /dev/zero | tail | wc -c" }
topology "duo" { hosts = 2 }
job "ganghungry" { image = "bb", topology = "duo", memory = "16m",
  -- Killed at once, like hungry: the same room for a kill the engine
  -- reported as a plain exit 137 (CI saw it once on swarm).
  retries = { attempts = 3, on = { "failed" }, backoff = "100ms" },
  run = "if [ $TPUCI_HOST = 1 ]; then head -c 64m /dev/zero | tail; exit $?; fi; sleep 30" }
LUA
major=99
if [ "$ENGINE" = podman ]; then
  version=$(podman_version)
  major=${version%%.*}
fi
engine_run run -j 3 spec.lua
expect_code 1 "the OOM fails the run"
if [ "$major" -ge 5 ]; then
  before=$failures
  expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'oom', 'modest': 'passed', 'ganghungry': 'oom'}"
  # Diagnostics: what the engine said about the hungry container.
  [ "$failures" = "$before" ] || json '[(a["exit_code"], a["cause"], a["log_tail"]) for a in s["instances"][0]["attempts"]]' >&2
  # The engine's word, or (its OOM kill unreported, the swarm reads no
  # stats) tpuci's: an oom all the same, "under a memory limit of 16 MiB".
  expect_json 'any(w in s["instances"][0]["attempts"][-1]["cause"] for w in ("memory limit 16 MiB", "memory limit of 16 MiB"))' True
else
  expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'hungry': 'oom', 'modest': 'passed', 'ganghungry': 'oom'}"
  expect_json 's["instances"][0]["attempts"][0]["exit_code"]' 137
  expect_json 's["instances"][0]["attempts"][0]["cause"]' "exit 137 (SIGKILL under a memory limit of 16 MiB: probably out of memory, but podman $version does not report OOM kills)"
  expect_json 's["instances"][2]["attempts"][0]["cause"].startswith("worker-1: exit 137 (SIGKILL under a memory limit of 16 MiB")' True
  # The limit was enforced: the kernel killed the job, and conmon saw it.
  [ -e "$PM/oom" ] && pass || fail "no $PM/oom: conmon saw no OOM kill (did podman change?)"
fi
expect_json 's["instances"][1]["attempts"][0]["exit_code"]' 0
expect_gone "$(latest_run_id)" "$tp" "after an OOM"

[ "$ENGINE" = docker ] || finish
case "$DOCKER_HOST" in
  unix://*) ;;
  *) echo "the unreported OOM kill needs a unix socket engine: not checked"; finish ;;
esac
trap 'kill $pp 2>/dev/null; rm -rf "$WORK"' EXIT
fault_proxy 'no-oom*:GET:/containers/[0-9a-f]+/json'
cat > hidden.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
-- Its page cache fills the limit (the stats' max usage reaches it),
-- then, seconds later, it needs more than the limit.
job "filled" { image = "bb", network = "none", memory = "16m",
  run = "head -c 24m /dev/zero > /tmp/fill; sleep 4; head -c 64m /dev/zero | tail" }
job "sudden" { image = "bb", network = "none", memory = "16m",
  retries = { attempts = 2, on = { "oom" }, backoff = "100ms" },
  run = "head -c 64m /dev/zero | tail" }
LUA
rm -rf .tpuci
DOCKER_HOST=unix://$WORK/proxy.sock tpuci_run run --plain hidden.lua
expect_code 1 "OOM kills the engine did not report"
grep -q "OOMKilled hidden" "$WORK/proxy.log" && pass || fail "the proxy hid no OOM kill"
cause() { json "[i for i in s['instances'] if i['name'] == '$1'][0]['attempts'][-1]['cause']"; }
expect_json '[i["outcome"] for i in s["instances"] if i["name"] == "filled"]' "['oom']"
case "$(cause filled)" in
  "killed by the kernel: out of memory (memory limit 16 MiB; the engine reported no OOM kill, but its stats showed the limit reached)") pass ;;
  *) fail "filled: cause '$(cause filled)'" ;;
esac
# Killed before the engine's first stats: an oom that says what it
# probably was (or the stats' words, should a sample have caught it at
# the limit); retried as an oom.
case "$(json '[i["outcome"] for i in s["instances"] if i["name"] == "sudden"][0]'):$(cause sudden)" in
  "oom:exit 137 (SIGKILL, not sent by tpuci, under a memory limit of 16 MiB: probably out of memory; the engine reported no OOM kill)") pass ;;
  "oom:killed by the kernel: out of memory (memory limit 16 MiB; the engine reported no OOM kill, but its stats showed the limit reached)") pass ;;
  *) fail "sudden: $(json '[i["outcome"] for i in s["instances"] if i["name"] == "sudden"][0]'): '$(cause sudden)'" ;;
esac
expect_json '[len(i["attempts"]) for i in s["instances"] if i["name"] == "sudden"]' "[2]"
expect_gone "$(latest_run_id)" "$tp" "after the hidden OOM kills"
finish
