# Swarm nodes of a test's own: each a dockerd in a network namespace of
# its own, the namespaces joined by veth pairs (loopback and veth
# addresses only; nothing in the root namespace, whose FORWARD policy
# would drop traffic across a bridge there). Source it; needs root, ip,
# nsenter and dockerd.
#
#   node_up DIR NAME ADDR      a namespace NAME with address ADDR/24 on
#                              its veth end, a dockerd with its socket,
#                              data and exec root under DIR/NAME; sets
#                              NODE_HOST to its DOCKER_HOST
#   link_up NAME1 NAME2 A1 A2  a veth pair between the two namespaces
#                              (call before node_up of either)
#   node_down DIR NAME         stops that dockerd, its containerd and
#                              shims, unmounts what it left, deletes the
#                              namespace
#   node_crash DIR NAME        kills that dockerd and its containerd
#                              (SIGKILL, as a crash): its containers run
#                              on under their shims; node_up DIR NAME
#                              starts it again
#
# Namespace and link names are short (Linux caps names at 15 bytes).
#
# Sourcing it skips the test (exit 77) without root, nsenter, dockerd or
# the docker CLI (the tests load images with it).
if [ "$(id -u)" != 0 ] || ! command -v nsenter >/dev/null || ! command -v dockerd >/dev/null ||
   ! command -v docker >/dev/null; then
  echo "SKIP: needs root, nsenter, dockerd and the docker CLI"
  exit 77
fi

link_up() {
  local a=$1 b=$2 aa=$3 ab=$4
  ip netns add "$a" 2>/dev/null || true
  ip netns add "$b" 2>/dev/null || true
  ip netns exec "$a" ip link add "v$a" type veth peer name "v$b" netns "$b" || return 1
  ip netns exec "$a" ip addr add "$aa/24" dev "v$a"
  ip netns exec "$b" ip addr add "$ab/24" dev "v$b"
  ip netns exec "$a" ip link set "v$a" up
  ip netns exec "$b" ip link set "v$b" up
}

node_up() {
  local dir=$1/$2 name=$2 i
  ip netns add "$name" 2>/dev/null || true
  ip netns exec "$name" ip link set lo up
  mkdir -p "$dir/data" "$dir/exec"
  # After a crash: the pid file of a containerd that died with its
  # dockerd would make the new one wait for it (as .ci/engine-up.sh).
  i=$(cat "$dir/exec/containerd/containerd.pid" 2>/dev/null)
  if [ -n "$i" ] && ! [ -d "/proc/$i" ]; then rm -f "$dir/exec/containerd/containerd.pid"; fi
  # nsenter, not `ip netns exec`: that remounts /sys, and dockerd then
  # finds no devices cgroup.
  nsenter --net="/var/run/netns/$name" setsid dockerd --host "unix://$dir/docker.sock" \
    --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/docker.pid" \
    >>"$dir/dockerd.log" 2>&1 </dev/null &
  for i in $(seq 1 300); do
    curl -sf --max-time 2 --unix-socket "$dir/docker.sock" http://localhost/_ping >/dev/null 2>&1 && break
    sleep 0.2
  done
  NODE_HOST=unix://$dir/docker.sock
  curl -sf --max-time 2 --unix-socket "$dir/docker.sock" http://localhost/_ping >/dev/null 2>&1
}

node_down() {
  local dir=$1/$2 name=$2 pid i m
  pid=$(cat "$dir/docker.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 1 300); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
  fi
  pkill -KILL -f -- "$dir/exec/containerd" 2>/dev/null || true
  for m in $(awk -v d="$dir" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  ip netns del "$name" 2>/dev/null || true
}

node_crash() {
  local dir=$1/$2 pid cpid i
  pid=$(cat "$dir/docker.pid" 2>/dev/null) || return 1
  cpid=$(cat "$dir/exec/containerd/containerd.pid" 2>/dev/null)
  kill -KILL "$pid" 2>/dev/null
  # Its containerd goes with it (it dies with its parent, a moment
  # later; a new dockerd would wait for it otherwise); shims stay.
  [ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
  for i in $(seq 1 300); do
    if ! [ -d "/proc/$pid" ] && { [ -z "$cpid" ] || ! [ -d "/proc/$cpid" ]; }; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}
