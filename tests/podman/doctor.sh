#!/usr/bin/env bash
# Podman: `tpuci doctor` says it talks to podman (name, version, API),
# what it does about the limits of a service without CAP_SYS_RESOURCE,
# that podman before 5.0 does not report OOM kills, the disk under its
# storage, the images; and fails (exit 3) for a missing image.
. "$TESTS/podman/lib.sh"

version=$(podman_version)
major=${version%%.*}
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "true" }
LUA
run_tpuci doctor spec.lua
expect_code 0 "doctor against podman"
expect_out "ok   engine: Podman Engine $version (API 1.41, tpuci uses 1.41) at DOCKER_HOST=$PODMAN_HOST"
expect_not_out "Docker Engine"
pid=$(cat "$PM/service.pid")
caps=$(awk '/^CapEff/ { print $2 }' "/proc/$pid/status")
if (( (0x$caps >> 24) & 1 )); then
  expect_out "ok   podman limits: the service (pid $pid) can give containers podman's default"
else
  expect_out "ok   podman limits: the service (pid $pid, root, without CAP_SYS_RESOURCE) may give containers at most"
  expect_out "tpuci asks for those limits (HostConfig.Ulimits)"
fi
if [ "$major" -lt 5 ]; then
  expect_out "warn podman OOM: podman $version never reports OOM kills"
else
  expect_not_out "podman OOM"
fi
expect_out "free under $PM/storage"
expect_out "ok   image tpuci-test/busybox:1 (\"bb\"): present"
expect_out "ok   leftovers: none from earlier runs"
# The network probe: two containers on podman's default network.
expect_out "ok   network the engine's default (bridge): worker-1 reached worker-0 by address" "the reach probe on podman"

cat > missing.lua <<'LUA'
image "ghost" { ref = "tpuci-test/does-not-exist:1", pull = "never" }
job "b" { image = "ghost", run = "true" }
LUA
run_tpuci doctor missing.lua
expect_code 3 "doctor: a missing image"
expect_out "FAIL image tpuci-test/does-not-exist:1 (\"ghost\"): not present and pull = \"never\""
finish
