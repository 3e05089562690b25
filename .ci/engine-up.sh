#!/usr/bin/env bash
# Starts a private Docker Engine for tpuci's tests and prints
#   export DOCKER_HOST=unix://$TPUCI_ENGINE_DIR/docker.sock
# on stdout (everything else goes to stderr), so a caller can
#   eval "$(.ci/engine-up.sh)"
# Idempotent: an engine already running from the same folder is reused.
# The folder lives outside the repository so that built test images are
# cached between runs; an empty or missing folder works too.
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

mkdir -p "$dir"

if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && answers; then
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
  if kill -0 "$old" 2>/dev/null; then
    say "dockerd pid $old is alive but does not answer; waiting for it"
  else
    rm -f "$pidfile"
  fi
fi
if ! [ -f "$pidfile" ]; then
  rm -f "$sock"
  mkdir -p "$dir/data" "$dir/exec"
  say "starting dockerd (log: $log)"
  # setsid: the engine outlives the shell that started it and does not get
  # its terminal's signals.
  setsid dockerd --host "unix://$sock" --data-root "$dir/data" \
    --exec-root "$dir/exec" --pidfile "$pidfile" \
    >>"$log" 2>&1 </dev/null &
fi

deadline=$((SECONDS + timeout))
until answers; do
  if [ $SECONDS -ge $deadline ]; then
    say "dockerd did not answer on $sock within ${timeout}s; last lines of $log:"
    tail -n 30 "$log" >&2 || true
    exit 1
  fi
  sleep 0.2
done
say "dockerd (pid $(cat "$pidfile" 2>/dev/null || echo '?')) answers on $sock"
echo "export DOCKER_HOST=unix://$sock"
