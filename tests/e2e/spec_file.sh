#!/usr/bin/env bash
# What tpuci accepts as a spec file: a regular file of at most 4 MiB.
. "$TESTS/e2e/lib.sh"

# Not a regular file, or too large: one line naming the file, exit 2, at
# once (a FIFO must not wait for a writer).
mkfifo fifo.lua
for f in /dev/zero fifo.lua "$WORK"; do
  out=$(timeout 20 "$TPUCI" plan "$f" 2>&1)
  code=$?
  expect_code 2 "plan $f"
  expect_out "$f: cannot read spec: it is a" "plan $f"
  expect_out "not a regular file" "plan $f"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass || fail "plan $f: not one line: $out"
done
run_tpuci plan /dev/zero
expect_out "/dev/zero: cannot read spec: it is a character device, not a regular file"
{ printf -- '--'; head -c 4194304 /dev/zero | tr '\0' ' '; printf '\njob "a" { run = "true" }\n'; } > big.lua
out=$(timeout 20 "$TPUCI" run big.lua 2>&1)
code=$?
expect_code 2 "a spec over 4 MiB"
expect_out "big.lua: the spec is larger than 4 MiB (the most a spec may have)"
# Exactly 4 MiB is fine.
printf 'job "a" { run = "true" }\n--' > max.lua
head -c $((4194304 - $(wc -c < max.lua))) /dev/zero | tr '\0' ' ' >> max.lua
[ "$(wc -c < max.lua)" = 4194304 ] && pass || fail "max.lua is not 4 MiB"
run_tpuci plan max.lua
expect_code 0 "a spec of exactly 4 MiB"

finish
