#!/usr/bin/env bash
# Starts a private Docker Engine for tpuci's tests and prints
#   export DOCKER_HOST=unix://$TPUCI_ENGINE_DIR/docker.sock
# on stdout (everything else goes to stderr), so a caller can
#   eval "$(.ci/engine-up.sh)"
# Idempotent: an engine already running from the same folder is reused.
# The folder lives outside the repository so that built test images are
# cached between runs; an empty or missing folder works too.
# TPUCI_ENGINE_ARGS adds dockerd options (tests that start an engine of
# their own beside the main one pass "--bridge=none --iptables=false").
set -euo pipefail

dir=${TPUCI_ENGINE_DIR:-/var/tmp/tpuci-engine}
sock=$dir/docker.sock
pidfile=$dir/docker.pid
log=$dir/dockerd.log
timeout=${TPUCI_ENGINE_TIMEOUT:-60}

say() { echo "engine-up: $*" >&2; }

answers() {
  curl -sf --max-time 2 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1
}

# Whether pid $1 runs and is not a zombie nobody reaped.
live() {
  [ -n "$1" ] && [ -r "/proc/$1/stat" ] && awk '{ exit ($3 == "Z") }' "/proc/$1/stat"
}

# Whether pid $1 is a live dockerd serving this folder: a pid file can
# outlive its process, and the pid can be reused.
our_dockerd() {
  live "$1" || return 1
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q "dockerd.*$sock"
}

mkdir -p "$dir"

if [ -f "$pidfile" ] && our_dockerd "$(cat "$pidfile")" && answers; then
  say "reusing dockerd (pid $(cat "$pidfile")) at $sock"
  echo "export DOCKER_HOST=unix://$sock"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    say "dockerd is not installed and we are not root to install it"
    exit 1
  fi
  say "installing docker.io"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y docker.io >&2 || { apt-get update >&2 && apt-get install -y docker.io >&2; }
fi
command -v curl >/dev/null 2>&1 || {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y curl >&2 || { apt-get update >&2 && apt-get install -y curl >&2; }
}

# A stale pid file or socket from an engine that died.
if [ -f "$pidfile" ]; then
  old=$(cat "$pidfile")
  if our_dockerd "$old"; then
    say "dockerd pid $old is alive but does not answer; waiting for it"
  else
    rm -f "$pidfile"
  fi
fi
started=
if ! [ -f "$pidfile" ]; then
  # Leftovers of an engine that died without cleaning up: its containerd
  # and shims (found by this folder's paths, nothing else is touched) and
  # containerd's pid file, which would make the new engine wait for a
  # containerd that is gone.
  for p in $(pgrep -f -- "$dir/exec/containerd" 2>/dev/null || true); do
    kill -KILL "$p" 2>/dev/null || true
  done
  cpid=$dir/exec/containerd/containerd.pid
  if [ -f "$cpid" ]; then
    c=$(cat "$cpid" 2>/dev/null || true)
    if ! live "$c"; then
      rm -f "$cpid"
    fi
  fi
  rm -f "$sock"
  mkdir -p "$dir/data" "$dir/exec"
  say "starting dockerd (log: $log)"
  logstart=$(stat -c %s "$log" 2>/dev/null || echo 0)
  # setsid: the engine outlives the shell that started it and does not get
  # its terminal's signals.
  # shellcheck disable=SC2086
  setsid dockerd --host "unix://$sock" --data-root "$dir/data" \
    --exec-root "$dir/exec" --pidfile "$pidfile" ${TPUCI_ENGINE_ARGS:-} \
    >>"$log" 2>&1 </dev/null &
  started=$!
fi

log_tail() {
  tail -c +"$((${logstart:-0} + 1))" "$log" 2>/dev/null | grep -v 'module=grpc' | tail -n 20 >&2 || true
}

deadline=$((SECONDS + timeout))
until answers; do
  if [ -n "$started" ] && ! live "$started"; then
    say "dockerd exited before it answered; last lines of $log:"
    log_tail
    exit 1
  fi
  if [ $SECONDS -ge $deadline ]; then
    say "dockerd did not answer on $sock within ${timeout}s; last lines of $log:"
    log_tail
    exit 1
  fi
  sleep 0.2
done
say "dockerd (pid $(cat "$pidfile" 2>/dev/null || echo '?')) answers on $sock"
echo "export DOCKER_HOST=unix://$sock"
# Only the one that started it stops it (.ci/engine-down.sh).
echo "export TPUCI_ENGINE_STARTED=1"
