#!/usr/bin/env bash
# The accelerator options on the docker runtime against podman's
# Docker-compatible service (tests/docker/accel_lib.sh): each read back
# from inside the container and from its inspect.
. "$TESTS/podman/lib.sh"
. "$TESTS/docker/accel_lib.sh"

PODMAN=1
accel_checks
# Podman ignores device requests: refused before anything is made
# (exit 3: the engine cannot do it, the spec is fine).
accel_gpus 3 "gpus.lua:1: job 'gpu': gpus: podman's Docker-compatible API ignores device requests"
finish
