#!/usr/bin/env bash
# Podman: errors before anything runs (a missing image, one that cannot
# be pulled: exit 3), an engine step refused (infra, the container
# removed all the same), and podman's own failures with what to do about
# them: an init binary it cannot find (Debian's podman 4.3 looks in
# /usr/libexec/podman/catatonit).
. "$TESTS/podman/lib.sh"

mkdir out
cat > missing.lua <<'LUA'
image "ghost" { ref = "tpuci-test/does-not-exist:1", pull = "never" }
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "touch /out/ran", mounts = { ["out"] = "/out" } }
job "b" { image = "ghost", run = "true" }
LUA
run_tpuci run missing.lua
expect_code 3 "missing image"
expect_out "image 'tpuci-test/does-not-exist:1' is not present and pull = \"never\""
sed 's/pull = "never" }/pull = "missing" }/' missing.lua > pull.lua
run_tpuci run pull.lua
expect_code 3 "image that cannot be pulled"
expect_out "image 'tpuci-test/does-not-exist:1' is not present and could not be pulled"
[ ! -e out/ran ] && pass || fail "a job ran although an image was missing"

# Podman refuses a network that does not exist when the container is
# created (Docker: when it starts); a command that cannot be executed
# ends with catatonit's exit 1 (Docker's tini: 127).
cat > infra.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "net" { image = "bb", network = "no-such-network", run = "true" }
job "cmd" { image = "bb", cmd = { "/no/such/binary" } }
LUA
tpuci_run run infra.lua
expect_code 1 "an infra failure fails the run"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'net': 'infra', 'cmd': 'failed'}"
expect_json '"creating container" in s["instances"][0]["attempts"][0]["cause"] and "no-such-network" in s["instances"][0]["attempts"][0]["cause"]' True
expect_json 's["instances"][1]["attempts"][0]["exit_code"] != 0' True
expect_no_leftovers "$(latest_run_id)" "$tp" "after an infra failure"

# A podman that cannot find its init binary: every attempt is infra, and
# the cause says how to fix podman's configuration.
podman_down
PODMAN_INIT_PATH=/usr/libexec/podman/no-such-catatonit podman_up
cat > ok.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
job "a" { image = "bb", run = "true" }
LUA
tpuci_run run ok.lua
expect_code 1 "no init binary"
expect_json 's["instances"][0]["outcome"]' infra
expect_out "container-init binary not found"
expect_out "install catatonit and set init_path = \"/usr/bin/catatonit\" in the [engine] table of podman's containers.conf"
expect_no_leftovers "$(latest_run_id)" "$tp" "after the init failure"

# No service at all.
DOCKER_HOST=unix://$PM/nonexistent.sock run_tpuci run ok.lua
expect_code 3 "unreachable engine"
expect_out "unix://$PM/nonexistent.sock"
finish
