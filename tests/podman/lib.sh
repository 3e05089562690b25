# Helpers for the podman end-to-end tests: each test starts a podman
# service of its own (`podman system service`, Docker-compatible API) and
# points DOCKER_HOST at it; everything of the service lives under
# $WORK/podman and goes when the test ends. Source it first; it sources
# the generic tests/e2e/lib.sh (run_tpuci, expect_*, json, finish, $WORK).
# Skips the test (exit 77) when podman is not installed.
#
# The service runs in a mount and network namespace of its own
# (unshare), because a rootful podman 4.3 keeps state outside the folders
# its configuration names: its network state in /run/containers/networks,
# an image cache in /var/lib/containers/cache, netavark's iptables chains
# and the bridges of its networks. There, /run is an empty tmpfs and
# /var/lib an overlay whose writes land in $WORK/podman/varlib, so all of
# that goes with the namespace. The socket is a file, reachable from here.
# Its working directory is its folder: conmon writes a file "oom" into it
# at every OOM kill (containers/conmon#504).
. "$TESTS/e2e/lib.sh"

BUSYBOX=tpuci-test/busybox:1

if ! command -v podman > /dev/null 2>&1; then
  echo "SKIP: podman is not installed (apt-get install podman catatonit)"
  exit 77
fi
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: these tests start a rootful podman service and need root"
  exit 77
fi

PM=$WORK/podman
PODMAN_HOST=unix://$PM/podman.sock

# api PATH [CURL ARGS...]: a request to the service, body on stdout.
api() {
  local path=$1
  shift
  curl -sf --max-time 30 --unix-socket "$PM/podman.sock" "$@" "http://localhost$path"
}

# count_objects KIND LABEL...: containers (all states) or networks
# carrying all the labels ("tpuci.run=ID", "tpuci.pid=PID").
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

# podman_up: starts the service and loads the busybox test image into it
# (kept in $PM/storage when it is started again); exports DOCKER_HOST.
# PODMAN_INIT_PATH overrides the init binary podman is told to use. Fails
# the test (exit 1) when it cannot.
podman_up() {
  local init i
  init=${PODMAN_INIT_PATH:-$(command -v catatonit || command -v tini || true)}
  if [ -z "$init" ]; then
    echo "FAIL: podman needs an init binary for HostConfig.Init: apt-get install catatonit" >&2
    exit 1
  fi
  mkdir -p "$PM"/{storage,run,tmp,net,varlib/upper,varlib/work}
  cat > "$PM/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$PM/storage"
runroot = "$PM/run"
EOF
  # No default_ulimits: tpuci must give containers limits this podman can
  # set (tests/engines/basic.sh checks them).
  cat > "$PM/containers.conf" <<EOF
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
init_path = "$init"
tmp_dir = "$PM/tmp"
# Where an image load's upload goes (podman 4.3 leaves it there): in
# $PM, not /var/tmp, so the test's folder takes it away.
image_copy_tmp_dir = "$PM/tmp"
[network]
network_config_dir = "$PM/net"
EOF
  (
    cd "$PM" || exit 1
    CONTAINERS_CONF=$PM/containers.conf CONTAINERS_STORAGE_CONF=$PM/storage.conf \
      exec setsid unshare --mount --net --propagation private -- sh -c '
        mount -t tmpfs -o mode=755 tmpfs /run &&
        mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$1/varlib/upper,workdir=$1/varlib/work" /var/lib &&
        ip link set lo up &&
        exec podman system service --time=0 "unix://$1/podman.sock"' sh "$PM" \
      > "$PM/service.log" 2>&1 < /dev/null
  ) &
  echo $! > "$PM/service.pid"
  for i in $(seq 1 150); do
    api /_ping > /dev/null 2>&1 && break
    if ! kill -0 "$(cat "$PM/service.pid")" 2>/dev/null; then break; fi
    sleep 0.2
  done
  if ! api /_ping > /dev/null 2>&1; then
    echo "FAIL: podman system service did not answer on $PM/podman.sock; its log:" >&2
    tail -n 20 "$PM/service.log" >&2
    exit 1
  fi
  export DOCKER_HOST=$PODMAN_HOST
  if ! TPUCI_BUSYBOX_IMAGE=$BUSYBOX bash "$TESTS/images/build-busybox.sh" > "$PM/image.log" 2>&1; then
    echo "FAIL: cannot load $BUSYBOX into podman:" >&2
    tail -n 20 "$PM/image.log" >&2
    exit 1
  fi
}

# podman_down: removes every container and network of the service (the
# service does it, in its namespace), stops it and whatever of it is
# left (conmon processes name the folder), and the empty cgroups podman
# made for its containers. The podman tests hold one ctest lock, so no
# other podman of ours uses those cgroups meanwhile.
podman_down() {
  local pid ids id c i p
  [ -f "$PM/service.pid" ] || return 0
  pid=$(cat "$PM/service.pid")
  ids=$(ls "$PM/storage/overlay-containers" 2>/dev/null | grep -E '^[0-9a-f]{64}$')
  if api /_ping > /dev/null 2>&1; then
    ids="$ids $(api "/containers/json?all=1" | python3 -c 'import json,sys; print(" ".join(c["Id"] for c in json.load(sys.stdin)))')"
    for id in $ids; do
      api "/containers/$id?force=1&v=1" -X DELETE > /dev/null 2>&1
    done
    for id in $(api "/networks" | python3 -c 'import json,sys; print(" ".join(n["Name"] for n in json.load(sys.stdin) if n["Name"] not in ("podman", "bridge")))'); do
      api "/networks/$id" -X DELETE > /dev/null
    done
  fi
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  for p in $pid $(pgrep -f -- "$PM/" 2>/dev/null); do
    kill -KILL "$p" 2>/dev/null
  done
  # Containers the service did not stop (it died first, or lost them):
  # their processes and cgroups, found by their ids.
  for id in $(printf '%s\n' $ids | sort -u); do
    for c in /sys/fs/cgroup/*/libpod_parent/libpod-"$id"; do
      [ -d "$c" ] || continue
      for p in $(cat "$c/cgroup.procs" 2>/dev/null); do
        kill -KILL "$p" 2>/dev/null
      done
      for i in $(seq 1 20); do
        rmdir "$c" 2>/dev/null && break
        sleep 0.1
      done
    done
  done
  for c in /sys/fs/cgroup/*/libpod_parent; do
    [ -d "$c" ] || continue
    rmdir "$c/conmon" 2>/dev/null
    rmdir "$c" 2>/dev/null
  done
  rm -f "$PM/service.pid"
}

trap 'podman_down; rm -rf "$WORK"' EXIT
podman_up

# tpuci_run ARGS...: like run_tpuci, but remembers tpuci's pid in $tp.
tpuci_run() {
  "$TPUCI" "$@" > "$WORK/tpuci.out" 2>&1 &
  tp=$!
  wait "$tp"
  code=$?
  out=$(cat "$WORK/tpuci.out")
}

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

# podman_version: "4.3.1", from GET /version.
podman_version() {
  api /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["Version"])'
}
