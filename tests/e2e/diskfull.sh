#!/usr/bin/env bash
# A full disk under the run folder: on a real 5 MB tmpfs, jobs print more
# than fits. Every file that could not be written is told once, with its
# path and the error; the attempts keep their verdicts; the CLI names no
# summary.json that is not there; the exit code is 4. Then the same with
# the tmpfs full before the run starts. Needs root (mount).
. "$TESTS/e2e/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
mkdir disk
mount -t tmpfs -o size=5m tmpfs "$WORK/disk" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
trap 'cd /; umount "$WORK/disk" 2>/dev/null; rm -rf "$WORK"' EXIT

# Ten jobs of 700 kB each: 7 MB into 5 MB.
cat > big.lua <<'LUA'
for i = 1, 10 do
  job ("big" .. i) { run = "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 700000; echo done" }
end
LUA

# check_full: what every run on a full disk must show.
check_full() {
  expect_code 4 "$1: exit code"
  expect_out "No space left on device" "$1"
  expect_out "verdict: PASSED" "$1"
  expect_out "records incomplete: " "$1"
  # Each file is told once.
  dups=$(printf '%s\n' "$out" | grep '^tpuci: cannot write ' | sort | uniq -d)
  [ -z "$dups" ] && pass || fail "$1: told more than once: $dups"
  # The attempts keep their verdicts.
  n=$(printf '%s\n' "$out" | grep -c '^\[pass   \] big')
  [ "$n" = 10 ] && pass || fail "$1: $n pass lines, want 10"
  # Whatever summary.json the CLI names exists; when it is missing, the
  # CLI says so and the failure was told.
  named=$(printf '%s\n' "$out" | sed -n 's/^summary: \(.*summary\.json\)$/\1/p')
  if [ -n "$named" ]; then
    [ -s "$named" ] && pass || fail "$1: the CLI names $named, which is not there"
  else
    expect_out "summary: not written" "$1"
    expect_out "/summary.json: No space left on device" "$1"
  fi
  # The records that are there are whole: attempts.jsonl has only whole
  # JSON lines.
  bad=$(/usr/bin/python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)' "$(readlink -f .tpuci/runs/latest)/attempts.jsonl" 2>&1)
  [ -z "$bad" ] && pass || fail "$1: attempts.jsonl has a broken line: $bad"
}

cd disk
run_tpuci run -j 2 ../big.lua
check_full "filling up"
expect_out "/big10/attempt-1.log: No space left on device"
# A log that could not be written whole says so in the attempt's cause.
expect_out "[pass   ] big10: exit 0; log incomplete: No space left on device"

# Full before the run starts: nothing can be recorded.
rm -rf .tpuci
dd if=/dev/zero of=fill bs=64k >/dev/null 2>&1
run_tpuci run -j 2 ../big.lua
check_full "already full"
expect_out "/attempts.jsonl: No space left on device"
expect_out "summary: not written"
[ ! -s .tpuci/runs/latest/attempts.jsonl ] && pass || fail "attempts.jsonl is not empty on a full disk?"
n=$(printf '%s\n' "$out" | grep -c '^tpuci: cannot write ')
# 10 logs, attempts.jsonl, junit.xml, report.html, summary.json.
[ "$n" = 14 ] && pass || fail "already full: $n files told, want 14"

# A failed job on a full disk: 4 wins over 1, and the verdict still says
# FAILED.
cat > ../small.lua <<'LUA'
job "a" { run = "echo a" }
job "b" { run = "echo b; exit 1" }
LUA
rm -rf .tpuci
run_tpuci run ../small.lua
expect_code 4 "a failure on a full disk"
expect_out "verdict: FAILED"
expect_out "[failed ] b: exit 1"

# With room again, the records are whole and the exit code is 1.
rm -f fill
rm -rf .tpuci
run_tpuci run ../small.lua
expect_code 1 "room again: a failure is 1"
expect_not_out "cannot write"
expect_not_out "records incomplete"
expect_out "summary: .tpuci/runs/$(basename "$(readlink -f .tpuci/runs/latest)")/summary.json"
[ "$(/usr/bin/python3 -c 'import json; s = json.load(open(".tpuci/runs/latest/summary.json")); print(s["exit_code"], s["verdict"], s["write_errors"])')" = "1 failed []" ] &&
  pass || fail "summary.json of a whole run: $(cat .tpuci/runs/latest/summary.json)"
cd "$WORK"
finish
