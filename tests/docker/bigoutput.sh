#!/usr/bin/env bash
# A container that prints 2 GiB (tests/e2e/bigoutput.sh does the same for
# the local runtime): tpuci's memory stays bounded (peak RSS, from
# /usr/bin/time) while the attach stream brings it all, and the attempt's
# log is complete (byte count and SHA-256 of what the job printed). The
# engine keeps its own copy until the container is removed (json-file:
# about twice the size), so this is skipped (77) with less than 5 GiB
# free for the run folder or 8 GiB under the engine's data root, when
# that is on this machine. Most of its minute or two is the engine's.
. "$TESTS/docker/lib.sh"

size=$((2 * 1024 * 1024 * 1024))
line=0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz
[ -x /usr/bin/time ] || { echo "SKIP: needs /usr/bin/time for the peak RSS"; exit 77; }
free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt $((5 * 1024 * 1024)) ]; then
  echo "SKIP: only $((free_kb / 1024)) MiB free under $WORK, want 5 GiB for a 2 GiB log"
  exit 77
fi
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
limit_kb=$((256 * 1024))
if ldd "$TPUCI" 2>/dev/null | grep -q asan; then limit_kb=$((768 * 1024)); fi

# The expected checksum is computed while tpuci runs.
(yes "$line" | head -c "$size" | sha256sum | cut -d' ' -f1 > want.sha) &
hashing=$!
cat > big.lua <<LUA
image "bb" { ref = "$BUSYBOX", pull = "never" }
job "big" { image = "bb", network = "none", run = "yes $line | head -c $size" }
LUA
t0=$SECONDS
/usr/bin/time -f '%M' -o rss.kb "$TPUCI" run big.lua > out.txt 2>&1 &
tp=$!
wait "$tp"
code=$?
out=$(tail -c 2000 out.txt)
expect_code 0 "2 GiB of output from a container"
kb=$(tail -n 1 rss.kb)
echo "docker: 2 GiB in $((SECONDS - t0)) s, peak RSS $kb KiB"
[ "$kb" -lt "$limit_kb" ] && pass || fail "peak RSS $kb KiB, want under $limit_kb"
log=$(json 's["instances"][0]["attempts"][0]["log"]')
[ "$(stat -c %s "$log")" = "$size" ] && pass || fail "the log has $(stat -c %s "$log") bytes, want $size"
wait "$hashing"
[ "$(sha256sum < "$log" | cut -d' ' -f1)" = "$(cat want.sha)" ] && pass || fail "the log's SHA-256 differs from the output's"
[ "$(stat -c %s out.txt)" -lt $((1024 * 1024)) ] && pass || fail "the console printed $(stat -c %s out.txt) bytes"
rm -rf .tpuci
finish
