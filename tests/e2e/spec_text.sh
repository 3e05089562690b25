#!/usr/bin/env bash
# Every string of the plan is valid UTF-8 without NUL bytes: a spec that
# gives another is refused at load (exit 2, file:line and key path), so no
# run can record an instance without its name.
. "$TESTS/e2e/lib.sh"

# Invalid UTF-8 in a matrix value, through plan and run.
printf 'job "j" {\n  run = "exit 1",\n  matrix = { v = { "caf\xe9" } },\n}\n' > latin1.lua
for cmd in plan run; do
  run_tpuci $cmd latin1.lua
  expect_code 2 "$cmd latin1.lua"
  expect_out "latin1.lua:1: job 'j': matrix.v[1]: not valid UTF-8 (byte 0xE9 at position 4)" "$cmd latin1.lua"
  [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && pass || fail "$cmd latin1.lua: not one line: $out"
done
[ ! -d .tpuci ] && pass || fail "a refused spec created a run folder"
# The same through an escape, in env, run and cmd, and NUL bytes.
cat > strings.lua <<'EOF'
job "ok" { run = "echo caf\u{e9}" }
job "e" { run = "true", env = { A = "\xff" } }
EOF
run_tpuci plan strings.lua
expect_code 2 "env value not UTF-8"
expect_out "strings.lua:2: job 'e': env.A: not valid UTF-8 (byte 0xFF at position 1)"
printf 'job "r" {\n  run = "echo a\\0b",\n}\n' > nul_run.lua
run_tpuci run nul_run.lua
expect_code 2 "NUL in run"
expect_out "nul_run.lua:1: job 'r': run: contains a NUL byte (at position 7)"
printf 'job "c" { cmd = { "echo", "x\\0" } }\n' > nul_cmd.lua
run_tpuci plan nul_cmd.lua
expect_code 2 "NUL in cmd"
expect_out "nul_cmd.lua:1: job 'c': cmd[2]: contains a NUL byte (at position 2)"
printf 'job "v" { run = "true", env = { A = "x\\0y" } }\n' > nul_env.lua
run_tpuci plan nul_env.lua
expect_code 2 "NUL in env"
expect_out "nul_env.lua:1: job 'v': env.A: contains a NUL byte (at position 2)"
# Valid UTF-8 goes through to the plan and the summary untouched.
printf 'job "u" { cmd = { "true" }, matrix = { v = { "caf\xc3\xa9" } } }\n' > utf8.lua
run_tpuci run utf8.lua
expect_code 0 "valid UTF-8"
expect_json 's["instances"][0]["name"]' "u[v=café]"

finish
