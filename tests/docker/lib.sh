# Helpers for the docker end-to-end tests. Source it first; it sources the
# generic tests/e2e/lib.sh (run_tpuci, expect_*, json, finish, $WORK).
# Skips the test (exit 77) when no engine answers at DOCKER_HOST, and
# builds the busybox test image when it is missing.
. "$TESTS/e2e/lib.sh"

DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}
export DOCKER_HOST
BUSYBOX=tpuci-test/busybox:1

# api PATH: GET on the engine, body on stdout (no docker CLI needed).
api() {
  case "$DOCKER_HOST" in
    unix://*) curl -sf --max-time 30 --unix-socket "${DOCKER_HOST#unix://}" "http://localhost$1" ;;
    tcp://*) curl -sf --max-time 30 "http://${DOCKER_HOST#tcp://}$1" ;;
    *) return 1 ;;
  esac
}

# A test that only uses an engine of its own (private_engine_up) sets
# PRIVATE_ENGINE_ONLY=1 first: it then needs dockerd and root, not an
# engine at DOCKER_HOST, and leaves that one alone.
if [ -n "${PRIVATE_ENGINE_ONLY:-}" ]; then
  if [ "$(id -u)" != 0 ] || ! command -v dockerd >/dev/null 2>&1; then
    echo "SKIP: a private engine needs root and dockerd"
    exit 77
  fi
elif ! api /_ping >/dev/null 2>&1; then
  echo "SKIP: no engine at $DOCKER_HOST"
  exit 77
elif ! api "/images/$BUSYBOX/json" >/dev/null 2>&1; then
  bash "$TESTS/images/build-busybox.sh" >&2 || { echo "FAIL: cannot build $BUSYBOX" >&2; exit 1; }
fi

# tpuci_run ARGS...: like run_tpuci, but remembers tpuci's pid in $tp, so
# that checks can tell this run's objects from those of another test's run
# that got the same run id (ids are unique per state folder only).
tpuci_run() {
  "$TPUCI" "$@" > "$WORK/tpuci.out" 2>&1 &
  tp=$!
  wait "$tp"
  code=$?
  out=$(cat "$WORK/tpuci.out")
}

# count_objects KIND LABEL...: containers (all states) or networks carrying
# all the labels ("tpuci.run=ID", "tpuci.pid=PID").
count_objects() {
  local kind=$1 filter
  shift
  filter=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps({"label":sys.argv[1:]})))' "$@")
  if [ "$kind" = containers ]; then
    api "/containers/json?all=1&filters=$filter"
  else
    api "/networks?filters=$filter"
  fi | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}

# private_engine_up DIR: starts a Docker Engine of the test's own (its
# socket, data and pid file under DIR; a bridge of its own and no
# iptables rules, so it does not meet the main engine: an engine started
# with --bridge=none would delete the main engine's docker0), with the
# busybox image, and sets PRIVATE_HOST to its DOCKER_HOST.
# private_engine_down DIR [SIG] stops it (SIGTERM: a graceful stop;
# SIGKILL: a crash) and waits until it is gone; private_engine_gone DIR
# then removes what it leaves (mounts, its bridge). PRIVATE_ENGINE_ARGS
# adds dockerd options (a TLS listener on TCP, --insecure-registry).
private_engine_up() {
  local dir=$1 line br
  mkdir -p "$dir"
  br=$(cat "$dir/bridge" 2>/dev/null || echo "tpucibr$$")
  if ! ip link show "$br" >/dev/null 2>&1; then
    ip link add name "$br" type bridge || return 1
    ip addr add "10.231.$(( $$ % 200 + 20 )).1/24" dev "$br" || return 1
    ip link set "$br" up
  fi
  echo "$br" > "$dir/bridge"
  line=$(TPUCI_ENGINE_DIR=$dir TPUCI_ENGINE_ARGS="--bridge=$br --iptables=false --ip-masq=false ${PRIVATE_ENGINE_ARGS:-}" \
    bash "$TESTS/../.ci/engine-up.sh") || return 1
  line=${line%%$'\n'*}
  PRIVATE_HOST=${line#export DOCKER_HOST=}
  DOCKER_HOST=$PRIVATE_HOST bash "$TESTS/images/build-busybox.sh" >/dev/null 2>&1
}
private_engine_down() {
  local dir=$1 sig=${2:-TERM} pid i
  pid=$(cat "$dir/docker.pid" 2>/dev/null) || return 0
  kill -"$sig" "$pid" 2>/dev/null
  for i in $(seq 1 300); do
    [ -d "/proc/$pid" ] || break
    sleep 0.1
  done
  if [ "$sig" = KILL ]; then
    # A crash leaves its containerd and shims: they go too.
    pkill -KILL -f -- "$dir/exec/containerd" 2>/dev/null || true
  fi
}
# private_engine_gone DIR: after private_engine_down, the mounts dockerd
# leaves under DIR (it bind-mounts its data root) go, so DIR can go.
private_engine_gone() {
  local m
  for m in $(awk -v d="$1" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  if [ -s "$1/bridge" ]; then
    ip link del "$(cat "$1/bridge")" 2>/dev/null || true
  fi
}

# fault_proxy RULE...: (re)starts faultproxy.py between tpuci and the
# engine at DOCKER_HOST (a unix socket) with those rules, listening on
# $WORK/proxy.sock, logging to $WORK/proxy.log; its pid is $pp (the
# caller's trap kills it).
fault_proxy() {
  local i
  [ -n "${pp:-}" ] && kill "$pp" 2>/dev/null && wait "$pp" 2>/dev/null
  rm -f "$WORK/proxy.sock"
  python3 "$TESTS/docker/faultproxy.py" "$WORK/proxy.sock" "${DOCKER_HOST#unix://}" "$@" \
    2> "$WORK/proxy.log" &
  pp=$!
  for i in $(seq 1 50); do [ -S "$WORK/proxy.sock" ] && break; sleep 0.1; done
}

# The id of the latest run (from its folder's name).
latest_run_id() {
  basename "$(readlink -f "$WORK/.tpuci/runs/latest")"
}

# expect_no_leftovers RUN_ID PID WHAT: no container or network of the run.
expect_no_leftovers() {
  local c n
  c=$(count_objects containers "tpuci.run=$1" "tpuci.pid=$2")
  n=$(count_objects networks "tpuci.run=$1" "tpuci.pid=$2")
  if [ "$c" = 0 ] && [ "$n" = 0 ]; then pass; else fail "$3: $c containers and $n networks of run $1 (pid $2) left"; fi
}
