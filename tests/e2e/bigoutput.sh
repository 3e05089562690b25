#!/usr/bin/env bash
# A job that prints 2 GiB (local runtime; tests/docker/bigoutput.sh does
# the same in a container): tpuci's memory stays bounded (peak RSS, from
# /usr/bin/time), the attempt's log is complete (byte count and SHA-256
# of what the job printed), and the console shows only the tail.
# Skipped (77) with less than 5 GiB free for the run folder.
. "$TESTS/e2e/lib.sh"

size=$((2 * 1024 * 1024 * 1024))
line=0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz
[ -x /usr/bin/time ] || { echo "SKIP: needs /usr/bin/time for the peak RSS"; exit 77; }
free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt $((5 * 1024 * 1024)) ]; then
  echo "SKIP: only $((free_kb / 1024)) MiB free under $WORK, want 5 GiB for a 2 GiB log"
  exit 77
fi
# ASan keeps freed memory in quarantine (256 MiB by default): allow for it.
limit_kb=$((256 * 1024))
if ldd "$TPUCI" 2>/dev/null | grep -q asan; then limit_kb=$((768 * 1024)); fi

# The expected checksum is computed while tpuci runs.
(yes "$line" | head -c "$size" | sha256sum | cut -d' ' -f1 > want.sha) &
hashing=$!
cat > big.lua <<LUA
job "big" { run = "yes $line | head -c $size" }
LUA
t0=$SECONDS
/usr/bin/time -f '%M' -o rss.kb "$TPUCI" run big.lua > out.txt 2>&1
code=$?
out=$(tail -c 2000 out.txt)
expect_code 0 "2 GiB of output"
kb=$(tail -n 1 rss.kb)
echo "local: 2 GiB in $((SECONDS - t0)) s, peak RSS $kb KiB"
[ "$kb" -lt "$limit_kb" ] && pass || fail "peak RSS $kb KiB, want under $limit_kb"
log=$(json 's["instances"][0]["attempts"][0]["log"]')
[ "$(stat -c %s "$log")" = "$size" ] && pass || fail "the log has $(stat -c %s "$log") bytes, want $size"
wait "$hashing"
[ "$(sha256sum < "$log" | cut -d' ' -f1)" = "$(cat want.sha)" ] && pass || fail "the log's SHA-256 differs from the output's"
# The console shows the tail and names the log, not 2 GiB.
[ "$(stat -c %s out.txt)" -lt $((1024 * 1024)) ] && pass || fail "the console printed $(stat -c %s out.txt) bytes"
grep -q "bytes left out; the whole log: $log" out.txt && pass || fail "the console does not name the whole log"
rm -rf .tpuci
finish
