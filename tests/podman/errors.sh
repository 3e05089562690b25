#!/usr/bin/env bash
# Podman's own failures with what to do about them: an init binary it
# cannot find (Debian's podman 4.3 looks in /usr/libexec/podman/catatonit).
# The errors every engine has are tests/engines/errors.sh's.
. "$TESTS/podman/lib.sh"

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

finish
