#!/usr/bin/env bash
# A benchmark's smoke run (tests/README.md, label bench): bench/NAME with
# SMOKE=1 (tiny sizes) against the tpuci under test must run to its end
# and print its figures. It checks that the script works, never the
# figures (timings belong to the benchmarks, not to tests).
# usage: smoke.sh SCRIPT PATTERN   (SCRIPT relative to bench/; PATTERN: a
# line its output must have). Exit 77 when what it needs is missing.
set -u
script=$1 pattern=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
case "$script" in
  docker/* | cache/* | pytest/xdist.sh | pytest/deps.sh)
    sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
    curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping > /dev/null 2>&1 ||
      { echo "SKIP: no engine at $sock"; exit 77; }
    ;;
esac
case "$script" in
  cache/*) docker image inspect tpuci-test/python:1 > /dev/null 2>&1 || { echo "SKIP: no tpuci-test/python:1"; exit 77; } ;;
  pytest/xdist.sh | pytest/deps.sh) docker image inspect tpuci-test/torch:1 > /dev/null 2>&1 || { echo "SKIP: no tpuci-test/torch:1"; exit 77; } ;;
  local/*) command -v hyperfine > /dev/null && command -v parallel > /dev/null ||
      { echo "SKIP: hyperfine or parallel missing"; exit 77; } ;;
esac
out=$(SMOKE=1 bash "$root/bench/$script" "$TPUCI" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 40
if [ $rc != 0 ]; then
  echo "FAIL: bench/$script exited $rc"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -qE -- "$pattern"; then
  echo "FAIL: bench/$script printed no line matching '$pattern'"
  exit 1
fi
echo "bench/$script ran (SMOKE=1)"
