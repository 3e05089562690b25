# Helpers for the swarm end-to-end tests. Source it first: it sources the
# docker tests' lib.sh (skips without an engine, builds the busybox image,
# api, tpuci_run, count_objects, latest_run_id), then skips (exit 77) when
# the engine at DOCKER_HOST is not a manager of an active swarm
# (.ci/swarm-up.sh makes the CI engine a single-node swarm).
. "$TESTS/docker/lib.sh"

swarm_state=$(api /info | python3 -c 'import json,sys; s=json.load(sys.stdin)["Swarm"]; print(s.get("LocalNodeState"), s.get("ControlAvailable"))' 2>/dev/null)
if [ "$swarm_state" != "active True" ]; then
  echo "SKIP: the engine at $DOCKER_HOST is not a swarm manager ($swarm_state); .ci/swarm-up.sh makes it one"
  exit 77
fi

# q LABEL...: the URL-encoded filter {"label": [...]}.
q() {
  python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":sys.argv[1:]})))' "$@"
}

# count_services LABEL...: services carrying all the labels.
count_services() {
  api "/services?filters=$(q "$@")" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}

# expect_no_swarm_leftovers RUN_ID PID WHAT: no service, network or
# container of the run (a task's container may take a moment to go after
# its task: asked for up to 10 s).
expect_no_swarm_leftovers() {
  local s n c i
  for i in $(seq 50); do
    s=$(count_services "tpuci.run=$1" "tpuci.pid=$2")
    n=$(count_objects networks "tpuci.run=$1" "tpuci.pid=$2")
    c=$(count_objects containers "tpuci.run=$1" "tpuci.pid=$2")
    [ "$s$n$c" = 000 ] && break
    sleep 0.2
  done
  if [ "$s$n$c" = 000 ]; then pass; else fail "$3: $s services, $n networks and $c containers of run $1 (pid $2) left"; fi
  echo "leftovers after $3: $s services, $n networks, $c containers" >&2
}
