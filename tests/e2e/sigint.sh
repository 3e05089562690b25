#!/usr/bin/env bash
# SIGINT mid-run: running attempts are stopped, nothing survives, the
# summary is written, exit 130. A second signal forces.
. "$TESTS/e2e/lib.sh"

# (One read: a zombie reaped between a test of the file and awk's open
# would read as alive. A stat that cannot be read is a process gone.)
alive() { awk '{ exit !($3 != "Z") }' "/proc/$1/stat" 2>/dev/null; }

mkdir out
OUT="$WORK/out" "$TPUCI" run -j 2 "$SPECS/slow.lua" > run.log 2>&1 &
tp=$!
# (Both pids written: -s, not -e, which is true before echo has written.)
for _ in $(seq 300); do [ -s out/bg-1.pid ] && [ -s out/bg-2.pid ] && break; sleep 0.1; done
[ -s out/bg-1.pid ] && [ -s out/bg-2.pid ] && pass || fail "jobs did not start"
kill -INT "$tp"
wait "$tp"
code=$?
out=$(cat run.log)
expect_code 130 "SIGINT"
expect_out "interrupted: stopping 2 running attempts"
expect_out "verdict: INTERRUPTED"
expect_json '[i["outcome"] for i in s["instances"]]' "['cancelled', 'cancelled', 'cancelled', 'cancelled']"
expect_json 's["exit_code"]' 130
for f in out/bg-*.pid; do
  pid=$(cat "$f")
  case "$pid" in ''|*[!0-9]*) fail "$f holds '$pid', not a pid"; continue ;; esac
  # A killed process may wait for the CPU on a loaded machine.
  for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && fail "$f ($pid) survived SIGINT: $(cat "/proc/$pid/stat" 2>&1)" || pass
done
[ ! -e out/bg-3.pid ] && pass || fail "a queued job started after SIGINT"

# A job that ignores SIGTERM, and a second SIGINT: killed at once.
cat > stubborn.lua <<'LUA'
job "stubborn" { run = [[ trap '' TERM INT; echo $$ > "$OUT/stubborn.pid"; while :; do sleep 0.1; done ]], env = { OUT = tpuci.env("OUT") }, grace = "60s" }
LUA
OUT="$WORK/out" "$TPUCI" run stubborn.lua > run2.log 2>&1 &
tp=$!
for _ in $(seq 300); do [ -s out/stubborn.pid ] && break; sleep 0.1; done
kill -INT "$tp"
# The second signal once the first was taken (two at once could be one).
for _ in $(seq 300); do grep -q "interrupted: stopping" run2.log && break; sleep 0.1; done
kill -INT "$tp"
start=$(date +%s)
wait "$tp"
code=$?
out=$(cat run2.log)
expect_code 130 "second SIGINT"
expect_out "forcing"
[ $(( $(date +%s) - start )) -lt 20 ] && pass || fail "second SIGINT did not force"
pid=$(cat out/stubborn.pid)
case "$pid" in ''|*[!0-9]*) fail "stubborn.pid holds '$pid', not a pid" ;; *) pass ;; esac
for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
alive "$pid" && fail "stubborn job survived" || pass
finish
