#!/usr/bin/env bash
# Every malformed spec in tests/spec/bad is refused with exit 2 and a
# message naming file:line (its first line: "-- expect: <text>").
. "$TESTS/e2e/lib.sh"

n=0
for spec in "$TESTS"/spec/bad/*.lua; do
  [ -e "$spec" ] || break
  n=$((n + 1))
  want=$(head -n 1 "$spec" | sed -n 's/^-- expect: //p')
  base=$(basename "$spec")
  # From the spec's folder, so messages name it as the user did.
  (cd "$TESTS/spec/bad" && "$TPUCI" plan "$base" > "$WORK/out.txt" 2>&1)
  code=$?
  out=$(cat "$WORK/out.txt")
  expect_code 2 "$base"
  case "$out" in
    *"$base:"[0-9]*) pass ;;
    *) fail "$base: message lacks $base:LINE: $out" ;;
  esac
  [ -n "$want" ] && expect_out "$want" "$base"
  # One clear line, not a traceback.
  [ "$(printf '%s\n' "$out" | wc -l)" -le 2 ] && pass || fail "$base: message is more than two lines: $out"
  [ ! -d "$TESTS/spec/bad/.tpuci" ] && pass || fail "$base: a run folder was created"
done
[ "$n" -ge 25 ] && pass || fail "only $n malformed specs (want at least 25)"
finish
