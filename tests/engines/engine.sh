# The engine an engines/ scenario runs against, and everything that
# differs between the engines, in one place. A scenario script sources it
# first; ctest runs each scenario once per engine (tests/engines/
# CMakeLists.txt), naming the engine in its first argument or in
# TPUCI_TEST_ENGINE (docker, podman or swarm), e.g.
#   TPUCI=build/tpuci TESTS=tests bash tests/engines/basic.sh podman
#
# How each engine is reached (the lib.sh of tests/<engine>/, sourced here,
# which also skips, exit 77, when the engine is not there):
#   docker  the engine at DOCKER_HOST;
#   podman  a `podman system service` of the test's own (podman/lib.sh),
#           DOCKER_HOST pointed at it, gone when the test ends;
#   swarm   the engine at DOCKER_HOST, a manager of an active swarm;
#           tpuci is told `--engine swarm` (ENGINE_FLAG), the spec being
#           the one written for docker.
# What each engine makes of a job: docker and podman a container (and a
# network for a gang), swarm a service whose task runs a container (and
# an overlay network for a gang, or for network = "none", which services
# do not have: so the scenarios' specs say @NONET@ where docker and podman
# get `network = "none",` and swarm nothing).
# What a job prints after tpuci stops it (SIGTERM at its timeout, or on
# Ctrl-C) reaches its log on docker and podman; on swarm tpuci stops a job
# by removing its service, and the log stream of a removed service ends
# there: ENGINE_LOGS_AFTER_STOP is 0.
# What tpuci calls a job's unit and a gang's network in its messages
# (gc, --keep-failed): ENGINE_UNIT and ENGINE_NET; a gang host's unit is
# <attempt's name>-worker-<i> on docker and podman, -w<i> on swarm
# (ENGINE_HOST_SUFFIX).
# Where the engine refuses a network that does not exist
# (ENGINE_NONET_STEP): docker when the container starts, podman when it
# is created, swarm when the service is created. A command that cannot
# be executed exits 127 under docker's init (tini; swarm's tasks run it
# too), 1 under podman's (catatonit): ENGINE_NOEXEC_EXIT.
# The accelerator options: a Swarm service cannot be privileged, have
# host devices, an IPC mode or GPUs (ENGINE_HOST_DEVICES=0: the run is
# refused, exit 2, tests/swarm/errors.sh); podman's inspect does not show
# a container's sysctls (ENGINE_VIEW_KEYS, engine_opts_view). gpus = "all"
# on a machine without GPUs: docker's engine refuses the start (infra,
# exit 1), podman's API would ignore the request (refused before the run,
# exit 3): ENGINE_GPUS_CODE and ENGINE_GPUS_SAYS.
# How long a scenario waits for a gang's hosts to be up
# (ENGINE_GANG_UP_S): Debian 12's netavark 1.4 lets a podman network's
# bridge take the lowest MAC address of its ports, so a container that
# joins (a later host, the gang's go) can change it, and a host whose
# cached gateway address was its own port's reaches neither the gateway
# nor aardvark-dns on it until its ARP entry is renewed: up to about
# 100 s (fixed upstream in late 2023: containers/netavark#833). Its gangs come
# up late now and then; docker's and swarm's do not. A scenario whose
# gang has a timeout puts @GANG_RETRY@ in its job (spec below): on
# podman a gang not up within 150 s is infra and tried again, up to
# three times (ENGINE_GANG_RETRY); the scenario checks the last attempt.
ENGINE=${1:-${TPUCI_TEST_ENGINE:-}}
ENGINE_LOGS_AFTER_STOP=1
ENGINE_UNIT=container ENGINE_NET=network ENGINE_HOST_SUFFIX=-worker-
ENGINE_NOEXEC_EXIT=127 ENGINE_HOST_DEVICES=1 ENGINE_GANG_UP_S=30
ENGINE_VIEW_KEYS="shm capadd capdrop ulimits sysctls" ENGINE_GANG_RETRY=
case "$ENGINE" in
  docker) . "$TESTS/docker/lib.sh"; ENGINE_FLAG=()
          ENGINE_NONET_STEP="starting container" ENGINE_GPUS_CODE=1
          ENGINE_GPUS_SAYS='could not select device driver "" with capabilities: [[gpu]]' ;;
  podman) . "$TESTS/podman/lib.sh"; ENGINE_FLAG=()
          ENGINE_NONET_STEP="creating container" ENGINE_NOEXEC_EXIT=1 ENGINE_GPUS_CODE=3
          ENGINE_GPUS_SAYS="gpus: podman's Docker-compatible API ignores device requests"
          ENGINE_VIEW_KEYS="shm capadd capdrop ulimits" ENGINE_GANG_UP_S=150
          ENGINE_GANG_RETRY='start_timeout = "150s", retries = { attempts = 3, on = { "infra" } },' ;;
  swarm) . "$TESTS/swarm/lib.sh"; ENGINE_FLAG=(--engine swarm)
         ENGINE_LOGS_AFTER_STOP=0 ENGINE_UNIT=service ENGINE_NET="overlay network"
         ENGINE_HOST_SUFFIX=-w ENGINE_NONET_STEP="creating service" ENGINE_HOST_DEVICES=0 ;;
  *) echo "FAIL: name the engine (docker, podman or swarm) as the first argument or in TPUCI_TEST_ENGINE, not '$ENGINE'" >&2; exit 1 ;;
esac
export TPUCI_TEST_ENGINE=$ENGINE

# engine_skip REASON: this scenario does not apply to this engine.
engine_skip() {
  echo "SKIP: $ENGINE: $*"
  exit 77
}

# spec FILE: writes stdin to FILE, @NONET@ made this engine's way of
# saying "no network" (see above).
spec() {
  local nonet='network = "none",'
  [ "$ENGINE" = swarm ] && nonet=
  sed -e "s/@NONET@/$nonet/g" -e "s/@GANG_RETRY@/$ENGINE_GANG_RETRY/g" > "$1"
}

# last_attempt INSTANCE: the number of the instance's last attempt.
last_attempt() {
  json "len([i for i in s['instances'] if i['name'] == '$1'][0]['attempts'])"
}

# engine_run SUBCOMMAND ARGS...: tpuci_run (tests/docker/lib.sh: $code,
# $out, tpuci's pid in $tp) with this engine's flag after SUBCOMMAND.
engine_run() {
  local sub=$1
  shift
  tpuci_run "$sub" "${ENGINE_FLAG[@]}" "$@"
}
# engine_start SUBCOMMAND ARGS...: the same in the background (tpuci's
# pid in $tp); engine_wait then sets $code and $out.
engine_start() {
  local sub=$1
  shift
  "$TPUCI" "$sub" "${ENGINE_FLAG[@]}" "$@" > "$WORK/tpuci.out" 2>&1 &
  tp=$!
}
engine_wait() {
  wait "$tp"
  code=$?
  out=$(cat "$WORK/tpuci.out")
}

# expect_gone RUN_ID PID WHAT: nothing of the run is left on the engine:
# containers and networks, and on swarm services (whose containers may
# take a moment to go after their task).
expect_gone() {
  if [ "$ENGINE" = swarm ]; then
    expect_no_swarm_leftovers "$@"
  else
    expect_no_leftovers "$@"
  fi
}

# engine_jobs LABEL...: how many of the engine's objects for jobs carry
# all the labels: services on swarm, containers (all states) elsewhere.
engine_jobs() {
  if [ "$ENGINE" = swarm ]; then count_services "$@"; else count_objects containers "$@"; fi
}

# wait_containers N LABEL...: waits up to 60 s (a loaded machine may be
# slow to start a task) until N containers (on
# swarm, the tasks' containers) carry all the labels; their count is $c.
wait_containers() {
  local want=$1
  shift
  local until=$((SECONDS + 60))
  while :; do
    c=$(count_objects containers "$@")
    [ "$c" = "$want" ] && return
    [ "$SECONDS" -lt "$until" ] || return
    sleep 0.1
  done
}

# engine_opts_view NAME: what the engine recorded of a kept unit's
# accelerator options, one "key value" line each of ENGINE_VIEW_KEYS:
# /dev/shm's size, the capabilities added and dropped (without CAP_),
# the ulimits (without podman's own nproc) and the sysctls; from the
# container's HostConfig, or the service's ContainerSpec on swarm.
engine_opts_view() {
  local path=/containers/$1/json
  [ "$ENGINE" = swarm ] && path=/services/$1
  api "$path" | KEYS=$ENGINE_VIEW_KEYS python3 -c '
import json, os, sys
o = json.load(sys.stdin)
caps = lambda l: sorted(c.upper().replace("CAP_", "") for c in l or [])
if "HostConfig" in o:
    h = o["HostConfig"]
    v = {"shm": h.get("ShmSize"), "capadd": caps(h.get("CapAdd")), "capdrop": caps(h.get("CapDrop")),
         "ulimits": h.get("Ulimits"), "sysctls": h.get("Sysctls")}
else:
    c = o["Spec"]["TaskTemplate"]["ContainerSpec"]
    shm = [m.get("TmpfsOptions", {}).get("SizeBytes") for m in c.get("Mounts") or []
           if m["Type"] == "tmpfs" and m["Target"] == "/dev/shm"]
    v = {"shm": shm[0] if shm else None, "capadd": caps(c.get("CapabilityAdd")),
         "capdrop": caps(c.get("CapabilityDrop")), "ulimits": c.get("Ulimits"), "sysctls": c.get("Sysctls")}
v["ulimits"] = sorted((u["Name"].lower().replace("rlimit_", ""), u["Soft"], u["Hard"])
                      for u in v["ulimits"] or [] if "nproc" not in u["Name"].lower())
for k in os.environ["KEYS"].split():
    print(k, v[k])'
}
