#!/usr/bin/env bash
# Every malformed spec in tests/spec/bad is refused with exit 2 and a
# message naming file:line (its first line: "-- expect: <text>").
. "$TESTS/e2e/lib.sh"

n=0
for spec in "$TESTS"/spec/bad/*.lua; do
  [ -e "$spec" ] || break
  n=$((n + 1))
  want=$(head -n 1 "$spec" | sed -n 's/^-- expect: //p')
  run_tpuci plan "$spec"
  expect_code 2 "$(basename "$spec")"
  base=$(basename "$spec")
  case "$out" in
    *"$base:"[0-9]*) pass ;;
    *) fail "$base: message lacks $base:LINE: $out" ;;
  esac
  [ -n "$want" ] && expect_out "$want" "$base"
  # One clear line, not a traceback.
  [ "$(printf '%s\n' "$out" | wc -l)" -le 2 ] && pass || fail "$base: message is more than two lines: $out"
  [ ! -d .tpuci ] && pass || fail "$base: a run folder was created"
done
[ "$n" -ge 25 ] && pass || fail "only $n malformed specs (want at least 25)"
finish
