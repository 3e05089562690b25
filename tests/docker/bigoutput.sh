#!/usr/bin/env bash
# A container that prints 2 GiB (tests/e2e/bigoutput.sh does the same for
# the local runtime): tpuci's memory stays bounded (peak RSS, from
# /usr/bin/time) while the attach stream brings it all, and the attempt's
# log is complete (byte count and SHA-256 of what the job printed). The
# engine keeps its own copy until the container is removed, so this is
# skipped (77) with less than 5 GiB free for the run folder or 8 GiB
# under the engine's data root, when that is on this machine. Most of its
# minute or two is the engine's.
. "$TESTS/docker/lib.sh"
. "$TESTS/e2e/bigoutput_lib.sh"

root=$(api /info | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("DockerRootDir", ""))')
case "$DOCKER_HOST" in
  unix://*)
    if [ -d "$root" ]; then
      free_kb=$(df -Pk "$root" | awk 'NR == 2 { print $4 }')
      if [ "$free_kb" -lt $((8 * 1024 * 1024)) ]; then
        echo "SKIP: only $((free_kb / 1024)) MiB free under the engine's $root, want 8 GiB"
        exit 77
      fi
    fi ;;
esac
big_output_setup
cat > big.lua <<LUA
image "bb" { ref = "$BUSYBOX", pull = "never" }
job "big" { image = "bb", network = "none", run = "yes $line | head -c $size" }
LUA
big_output_run docker
rm -rf .tpuci
finish
