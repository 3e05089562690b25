#!/usr/bin/env bash
# The console styles: GitHub Actions groups, annotations and step summary;
# the status board on a terminal.
. "$TESTS/e2e/lib.sh"

# Under GitHub Actions.
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/step.md" run_tpuci run "$SPECS/basic.lua"
expect_code 1 "github run"
expect_out "::group::bad (attempt 1/1): failed
about to fail
broken
::endgroup::"
expect_out "::error file=$SPECS/basic.lua,line=3,title=tpuci%3A bad failed::exit 3"
expect_not_out "::error file=$SPECS/basic.lua,line=2"
summary=$(cat "$WORK/step.md" 2>/dev/null)
case "$summary" in
  *'| `bad` | failed | 1 |'*'| `unit[python=3.11]` | passed | 1 |'*) pass ;;
  *) fail "step summary: $summary" ;;
esac

# On a terminal (script(1) gives tpuci a pty): the board is drawn and
# redrawn in place, finished attempts scroll above it.
if command -v script >/dev/null; then
  cat > board.lua <<'LUA'
job "slow" { matrix = { n = { 1, 2, 3 } }, run = "echo step ${matrix.n}; sleep 1; echo done ${matrix.n}" }
LUA
  # Outside CI (CI runs this test with CI=true set).
  env -u CI -u GITHUB_ACTIONS script -qec "'$TPUCI' run -j 2 board.lua" /dev/null > tty.out 2>&1 < /dev/null
  out=$(cat tty.out)
  expect_out "running, 1 queued, 0 done"
  expect_out $'\033[' "cursor movement"
  expect_out "slow[n=1] #1"
  expect_out "verdict: PASSED"
  # CI set: plain lines even on a terminal.
  env -u GITHUB_ACTIONS CI=true script -qec "'$TPUCI' run --color=never -j 2 board.lua" /dev/null > tty2.out 2>&1 < /dev/null
  out=$(cat tty2.out)
  expect_not_out "running, " "board under CI"
  expect_out "--- output of slow[n=1], attempt 1/1 ---"
  # CI=true and TERM=dumb each turn colours and cursor codes off on a
  # terminal (--color=auto, the default); --color=always still wins.
  cat > colors.lua <<'LUA'
job "ok" { run = "echo fine" }
job "bad" { run = "echo broken; exit 3" }
LUA
  env -u GITHUB_ACTIONS -u NO_COLOR CI=true TERM=xterm-256color \
    script -qec "'$TPUCI' run -j 2 colors.lua" /dev/null > tty3.out 2>&1 < /dev/null
  out=$(cat tty3.out)
  expect_out "verdict: FAILED" "CI=true on a terminal"
  expect_not_out $'\033' "CI=true: an escape code"
  env -u GITHUB_ACTIONS -u NO_COLOR -u CI TERM=dumb \
    script -qec "'$TPUCI' run -j 2 colors.lua" /dev/null > tty4.out 2>&1 < /dev/null
  out=$(cat tty4.out)
  expect_out "verdict: FAILED" "TERM=dumb on a terminal"
  expect_out "--- output of bad, attempt 1/1 ---" "TERM=dumb: plain lines"
  expect_not_out $'\033' "TERM=dumb: an escape code"
  env -u GITHUB_ACTIONS -u NO_COLOR -u CI TERM=xterm-256color \
    script -qec "'$TPUCI' run -j 2 colors.lua" /dev/null > tty5.out 2>&1 < /dev/null
  out=$(cat tty5.out)
  expect_out $'\033[1m\033[31mverdict: FAILED' "a colour terminal outside CI"
  env -u GITHUB_ACTIONS -u NO_COLOR CI=true TERM=dumb \
    script -qec "'$TPUCI' run --color=always -j 2 colors.lua" /dev/null > tty6.out 2>&1 < /dev/null
  out=$(cat tty6.out)
  expect_out $'\033[31m' "--color=always under CI and TERM=dumb"
  expect_not_out $'\033[J' "--color=always: no board under CI and TERM=dumb"
else
  fail "script(1) is missing (util-linux): cannot test the terminal board"
fi
finish
