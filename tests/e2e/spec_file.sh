#!/usr/bin/env bash
# What tpuci accepts as a spec file: a regular file of at most 4 MiB that
# declares a job; a byte order mark or a shebang line is fine.
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

# No jobs: said so, for every command that loads a spec.
: > empty.lua
printf 'image "py" { ref = "python:3.11" }\ntopology "v4-8" {}\n' > nojobs.lua
for spec in empty.lua nojobs.lua; do
  for cmd in plan run "export github" doctor "rerun --failed"; do
    run_tpuci $cmd $spec
    expect_code 2 "$cmd $spec"
    expect_out "tpuci: $spec: the spec declares no jobs" "$cmd $spec"
    expect_not_out "no job instance matches" "$cmd $spec"
  done
done

# A byte order mark and a shebang line; line numbers stay the file's.
printf '\xef\xbb\xbfjob "a" { run = "true" }\n' > bom.lua
run_tpuci run bom.lua
expect_code 0 "BOM"
expect_json 's["instances"][0]["where"]' "bom.lua:1"
printf '#!/usr/bin/env tpuci\n-- a comment\njob "a" { run = "true" }\n' > shebang.lua
run_tpuci run shebang.lua
expect_code 0 "shebang"
expect_json 's["instances"][0]["where"]' "shebang.lua:3"
printf '\xef\xbb\xbf#!/usr/bin/env tpuci\njob "a" { run = "true" }\n' > both.lua
run_tpuci plan both.lua
expect_code 0 "BOM and shebang"
expect_out "a  (both.lua:2)"
printf '#!/usr/bin/env tpuci\njob "a" { run = "true" }\njob "b" { run = = }\n' > shebang_bad.lua
run_tpuci plan shebang_bad.lua
expect_code 2 "shebang and a syntax error"
expect_out "shebang_bad.lua:3: unexpected symbol near '='"
printf '\xef\xbb\xbf\njob "a" { rnu = "true" }\n' > bom_bad.lua
run_tpuci plan bom_bad.lua
expect_code 2 "BOM and an unknown key"
expect_out "bom_bad.lua:2: job 'a': rnu: unknown key, did you mean 'run'?"

finish
