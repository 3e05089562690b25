#!/usr/bin/env bash
# Engine faults injected by a proxy between tpuci and the engine
# (faultproxy.py). A container whose create answer is lost on the way
# (the engine made it, the connection broke before its answer): the
# attempt is infra, and tpuci finds the container by its name and removes
# it; nothing waits for `tpuci gc`.
. "$TESTS/docker/lib.sh"

case "$DOCKER_HOST" in
  unix://*) ;;
  *) echo "SKIP: needs a unix socket engine"; exit 77 ;;
esac
trap 'kill $pp 2>/dev/null; rm -rf "$WORK"' EXIT

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "j" { image = "bb", network = "none", run = "echo hello",
          retries = { attempts = 2, on = { "infra" }, backoff = "1s" } }
LUA

# One create answer lost. curl may send the request again on its own
# (the connection was reused), which the engine refuses (409: the name is
# taken, by the container the lost answer named): that container is this
# attempt's own and is used. Either way the run passes and nothing stays.
fault_proxy 'drop-response:POST:/containers/create'
DOCKER_HOST=unix://$WORK/proxy.sock tpuci_run run --plain --no-cache spec.lua
expect_code 0 "one lost create answer"
grep -q "containers/create.* dropped" "$WORK/proxy.log" && pass || fail "the proxy dropped no create answer"
expect_no_leftovers "$(latest_run_id)" "$tp" "after a lost create answer"

# Every create answer lost: both attempts are infra, naming the step, and
# every container the engine made was found by its name and removed.
fault_proxy 'drop-response*:POST:/containers/create'
DOCKER_HOST=unix://$WORK/proxy.sock tpuci_run run --plain --no-cache spec.lua
expect_code 1 "every create answer lost"
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['infra', 'infra']"
expect_json 'all("creating container" in a["cause"] for a in s["instances"][0]["attempts"])' True
n=$(grep -c "containers/create.* dropped" "$WORK/proxy.log")
[ "$n" -ge 2 ] && pass || fail "the proxy dropped $n create answers"
expect_no_leftovers "$(latest_run_id)" "$tp" "after lost create answers"
finish
