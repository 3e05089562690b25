#!/usr/bin/env bash
# The accelerator options on the docker runtime (tests/docker/accel_lib.sh):
# each read back from inside the container and from its inspect.
. "$TESTS/docker/lib.sh"
. "$TESTS/docker/accel_lib.sh"
case "$DOCKER_HOST" in
  unix://*) ;;
  *) echo "SKIP: the test removes its kept containers through a unix socket"; exit 77 ;;
esac

accel_checks
# The request reached the engine, which has no such device: infra.
accel_gpus 1 'infra  ] gpu: docker engine: starting container'
expect_out 'failed: could not select device driver "" with capabilities: [[gpu]]' "the engine's refusal"
finish
