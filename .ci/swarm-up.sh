#!/usr/bin/env bash
# Makes the engine at DOCKER_HOST a single-node Docker Swarm, for the
# swarm runtime's tests (tests/swarm/): `docker swarm init` advertising
# and listening on 127.0.0.1 only, so nothing outside this machine can
# join. Idempotent: an engine that is already an active manager is left
# as it is; one that is a worker or in an error state is an error.
# Speaks to the engine with curl (no docker CLI needed).
set -euo pipefail
: "${DOCKER_HOST:?DOCKER_HOST must name the engine (eval \"\$(.ci/engine-up.sh)\")}"
sock=${DOCKER_HOST#unix://}
say() { echo "swarm-up: $*" >&2; }
api() { curl -sf --max-time 60 --unix-socket "$sock" "$@"; }

state=$(api http://localhost/v1.41/info | python3 -c 'import json,sys; s=json.load(sys.stdin)["Swarm"]; print(s.get("LocalNodeState"), s.get("ControlAvailable"))')
case "$state" in
  "active True") say "the engine at $DOCKER_HOST is a swarm manager already"; exit 0 ;;
  inactive*) ;;
  *) say "the engine at $DOCKER_HOST is in a swarm state tpuci's tests cannot use: $state"; exit 1 ;;
esac
say "docker swarm init on $DOCKER_HOST (127.0.0.1 only)"
api -X POST -H 'Content-Type: application/json' \
  -d '{"ListenAddr": "127.0.0.1:2377", "AdvertiseAddr": "127.0.0.1", "DataPathAddr": "127.0.0.1"}' \
  http://localhost/v1.41/swarm/init >/dev/null || { say "swarm init failed"; exit 1; }
for _ in $(seq 100); do
  state=$(api http://localhost/v1.41/info | python3 -c 'import json,sys; s=json.load(sys.stdin)["Swarm"]; print(s.get("LocalNodeState"), s.get("ControlAvailable"))')
  [ "$state" = "active True" ] && { say "single-node swarm ready"; exit 0; }
  sleep 0.2
done
say "the swarm did not become active: $state"
exit 1
