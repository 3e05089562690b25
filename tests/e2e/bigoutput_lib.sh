# Shared by tests/e2e/bigoutput.sh (local) and tests/docker/bigoutput.sh
# (a container): a job printing 2 GiB of one repeated line.
#   big_output_setup          sets size, line and limit_kb (the peak RSS
#                             allowed: more under ASan, whose quarantine
#                             keeps freed memory), skips (77) without
#                             /usr/bin/time or 5 GiB free for the run
#                             folder, and starts the expected
#                             checksum into want.sha in the background
#                             ($hashing)
#   big_output_run WHAT       runs `tpuci run big.lua` under /usr/bin/time
#                             into out.txt and rss.kb, then checks exit 0,
#                             the peak RSS, the log's size and SHA-256, and
#                             that the console printed under 1 MiB; $log
#                             is the attempt's log afterwards
big_output_setup() {
  size=$((2 * 1024 * 1024 * 1024))
  line=0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz
  [ -x /usr/bin/time ] || { echo "SKIP: needs /usr/bin/time for the peak RSS"; exit 77; }
  local free_kb
  free_kb=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
  if [ "$free_kb" -lt $((5 * 1024 * 1024)) ]; then
    echo "SKIP: only $((free_kb / 1024)) MiB free under $WORK, want 5 GiB for a 2 GiB log"
    exit 77
  fi
  limit_kb=$((256 * 1024))
  if ldd "$TPUCI" 2>/dev/null | grep -q asan; then limit_kb=$((768 * 1024)); fi
  (yes "$line" | head -c "$size" | sha256sum | cut -d' ' -f1 > want.sha) &
  hashing=$!
}

big_output_run() {
  local what=$1 t0=$SECONDS kb
  /usr/bin/time -f '%M' -o rss.kb "$TPUCI" run big.lua > out.txt 2>&1 &
  tp=$!
  wait "$tp"
  code=$?
  out=$(tail -c 2000 out.txt)
  expect_code 0 "2 GiB of output ($what)"
  kb=$(tail -n 1 rss.kb)
  echo "$what: 2 GiB in $((SECONDS - t0)) s, peak RSS $kb KiB"
  [ "$kb" -lt "$limit_kb" ] && pass || fail "peak RSS $kb KiB, want under $limit_kb"
  log=$(json 's["instances"][0]["attempts"][0]["log"]')
  [ "$(stat -c %s "$log")" = "$size" ] && pass || fail "the log has $(stat -c %s "$log") bytes, want $size"
  wait "$hashing"
  [ "$(sha256sum < "$log" | cut -d' ' -f1)" = "$(cat want.sha)" ] && pass || fail "the log's SHA-256 differs from the output's"
  # The console shows the tail, not 2 GiB.
  [ "$(stat -c %s out.txt)" -lt $((1024 * 1024)) ] && pass || fail "the console printed $(stat -c %s out.txt) bytes"
}
