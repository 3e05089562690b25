#!/usr/bin/env bash
# `tpuci doctor SPEC` probes each network mode the spec's container jobs
# use (the default bridge, "none", a gang's private network, a named
# network) and reports each: on a bridge, a second container reaches the
# first by name (by address on the default bridge) and the bridge's own
# address, the gateway; on "none" one container starts. A network that
# does not exist, or a bridge that is deleted, down or without its
# address, is a FAIL with exit 3 before any run, not an infra failure of
# every attempt. Doctor leaves nothing behind. The deleted bridge is made
# on a private engine of the test's own; the bridge that is down or has no
# address is a named network's of the test's own (its bridge's name is
# chosen), made with busybox (ping) and with the python image (python3).
. "$TESTS/docker/lib.sh"

# Doctor runs through doctor_run, which keeps their pids: the probes'
# objects carry the pid, so another test's doctor running at the same time
# on the shared engine is not counted as this test's leftovers.
pids=""
doctor_run() { tpuci_run doctor "$@"; pids="$pids $tp"; }
probe_objects() { # containers and networks this test's doctor runs left
  local n=0 pid
  for pid in $pids; do
    n=$(( n + $(count_objects containers tpuci.instance=network-probe tpuci.pid=$pid) +
              $(count_objects networks tpuci.instance=network-probe tpuci.pid=$pid) ))
  done
  echo "$n"
}

cat > good.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "plain" { image = "bb", cmd = { "true" } }
job "isolated" { image = "bb", network = "none", cmd = { "true" } }
job "gang" { image = "bb", topology = "v4-16", cmd = { "true" } }
LUA
doctor_run good.lua
expect_code 0 "doctor on three working network modes"
expect_out "ok   network the engine's default (bridge): worker-1 reached worker-0 by address and the gateway " "the default bridge is checked"
expect_out 'ok   network "none": a container started on it' "network none is checked"
expect_out "ok   network a gang's private network: worker-1 reached worker-0 by name (ping, image tpuci-test/busybox:1)" "a gang's network is checked, by name"
[ "$(probe_objects)" = 0 ] && pass || fail "doctor left probe objects"

# A named network the engine does not have.
cat > missing.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "plain" { image = "bb", cmd = { "true" } }
job "elsewhere" { image = "bb", network = "tpuci-test-no-such-net", cmd = { "true" } }
LUA
doctor_run missing.lua
expect_code 3 "doctor with a network that does not exist"
expect_out 'FAIL network "tpuci-test-no-such-net"' "the missing network is named"
expect_out "ok   network the engine's default (bridge)" "the other mode is still checked"
[ "$(probe_objects)" = 0 ] && pass || fail "doctor left probe objects after a failure"

# Local jobs only: no container, no network check.
cat > local.lua <<'LUA'
job "here" { cmd = { "true" } }
LUA
doctor_run local.lua
expect_not_out "network the engine's default" "no network check without container jobs"

# A named network of the test's own, its bridge working, then down, then
# without its address: probed with ping (busybox) and python3.
net=tpuci-test-doctor-$$ br=tpdr$$
api_send() { # METHOD PATH [JSON]: like api, with a method and a body
  local url
  case "$DOCKER_HOST" in
    unix://*) url=(--unix-socket "${DOCKER_HOST#unix://}" "http://localhost$2") ;;
    tcp://*) url=("http://${DOCKER_HOST#tcp://}$2") ;;
    *) return 1 ;;
  esac
  curl -sf --max-time 30 -X "$1" -H 'Content-Type: application/json' \
    ${3:+--data "$3"} "${url[@]}" >/dev/null
}
edir=$WORK/engine
trap 'api_send DELETE "/networks/$net"; private_engine_down "$edir" TERM; private_engine_gone "$edir"; rm -rf "$WORK"' EXIT
api_send POST /networks/create \
  "{\"Name\": \"$net\", \"Options\": {\"com.docker.network.bridge.name\": \"$br\"}}" ||
  fail "cannot create network $net"
imgs=busybox
if api "/images/tpuci-test/python:1/json" >/dev/null; then
  imgs="busybox python"
else
  fail "no tpuci-test/python:1 (tests/images/build-python.sh makes it)"
fi
for img in $imgs; do
  cat > named-$img.lua <<LUA
image "i" { ref = "tpuci-test/$img:1", pull = "never" }
job "named" { image = "i", network = "$net", cmd = { "true" } }
LUA
done
doctor_run named-busybox.lua
expect_code 0 "doctor on a working named network"
expect_out "ok   network \"$net\": worker-1 reached worker-0 by name and the gateway " "the named network is checked, by name"
[ -f named-python.lua ] && doctor_run named-python.lua
expect_code 0 "doctor on a working named network, python3"
expect_out "(python3, image tpuci-test/python:1)" "an image without ping is probed with python3"
ip link set "$br" down
for img in $imgs; do
  doctor_run named-$img.lua
  expect_code 3 "doctor with the named network's bridge down ($img)"
  expect_out "FAIL network \"$net\": tpuci-doctor-" "a bridge that is down is reported ($img)"
  expect_out "does not answer" "it says that the peer does not answer ($img)"
done
ip link set "$br" up
ip addr flush dev "$br"
for img in $imgs; do
  doctor_run named-$img.lua
  expect_code 3 "doctor with the named network's bridge without its address ($img)"
  expect_out "the bridge is down or has no address" "a bridge without its address is reported ($img)"
done
[ "$(probe_objects)" = 0 ] && pass || fail "doctor left probe objects after the named network's failures"
api_send DELETE "/networks/$net" || fail "cannot remove network $net"

# A broken default bridge, on a private engine.
if private_engine_up "$edir"; then
  ip link del "$(cat "$edir/bridge")"
  DOCKER_HOST=$PRIVATE_HOST doctor_run good.lua
  expect_code 3 "doctor with the default bridge deleted"
  expect_out "FAIL network the engine's default (bridge)" "the broken bridge is reported"
  expect_out 'ok   network "none"' "network none still works"
else
  fail "cannot start a private engine"
fi
finish
