#!/usr/bin/env bash
# Stops the dockerd that .ci/engine-up.sh started (found by its pid file in
# $TPUCI_ENGINE_DIR) and waits for it to exit. Nothing else is touched.
set -euo pipefail

dir=${TPUCI_ENGINE_DIR:-/var/tmp/tpuci-engine}
pidfile=$dir/docker.pid
timeout=${TPUCI_ENGINE_TIMEOUT:-60}

if ! [ -f "$pidfile" ]; then
  echo "engine-down: no $pidfile, nothing to stop" >&2
  exit 0
fi
pid=$(cat "$pidfile")
# Gone, or a zombie nobody reaped: nothing to stop.
if ! [ -r "/proc/$pid/stat" ] || awk '{ exit !($3 == "Z") }' "/proc/$pid/stat"; then
  echo "engine-down: dockerd $pid is not running" >&2
  rm -f "$pidfile"
  exit 0
fi
# Make sure the pid really is a dockerd before signalling it.
if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q dockerd; then
  echo "engine-down: pid $pid is not a dockerd; leaving it alone" >&2
  exit 1
fi
kill -TERM "$pid"
deadline=$((SECONDS + timeout))
while [ -r "/proc/$pid/stat" ] && ! awk '{ exit !($3 == "Z") }' "/proc/$pid/stat"; do
  if [ $SECONDS -ge $deadline ]; then
    echo "engine-down: dockerd $pid still running after ${timeout}s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
    break
  fi
  sleep 0.2
done
echo "engine-down: dockerd $pid stopped" >&2
