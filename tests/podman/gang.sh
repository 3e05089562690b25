#!/usr/bin/env bash
# Podman: gangs. Each host of a 3-host topology runs in a container on an
# internal network of the attempt's own (netavark, with aardvark-dns) and
# reaches the others by name; when one host fails, the others are stopped
# and the attempt says which; the network goes with the attempt.
. "$TESTS/podman/lib.sh"

cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
topology "trio" { hosts = 3 }
job "reach" { image = "bb", topology = "trio", run = [[
  for h in worker-0 worker-1 worker-2; do
    ping -c 1 -W 5 "$h" > /dev/null && echo "reached $h" || echo "missed $h"
  done
  hostname ]] }
job "broken" { image = "bb", topology = "trio", grace = "1s",
  run = "trap '' TERM; [ $TPUCI_HOST = 2 ] && exit 5; sleep 60" }
LUA
tpuci_run run -j 6 spec.lua
expect_code 1 "one gang fails"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'reach': 'passed', 'broken': 'failed'}"
for w in 0 1 2; do
  for h in 0 1 2; do
    expect_out "[worker-$w] reached worker-$h"
  done
  expect_out "[worker-$w] worker-$w"
done
expect_json 's["instances"][1]["attempts"][0]["cause"]' "worker-2: exit 5"
# The others ignored SIGTERM and were killed after the grace period, not
# after their 60 s.
expect_json 's["instances"][1]["attempts"][0]["duration_ms"] < 20000' True
expect_no_leftovers "$(latest_run_id)" "$tp" "after the gangs"
finish
