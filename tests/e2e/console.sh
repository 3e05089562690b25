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

# Annotation paths are relative to the repository ($GITHUB_WORKSPACE); a
# flaky instance is a ::warning at its job's line.
mkdir flaky_out
GITHUB_ACTIONS=true GITHUB_WORKSPACE="$TESTS/e2e" GITHUB_STEP_SUMMARY="$WORK/step2.md" \
  run_tpuci run "$SPECS/basic.lua"
expect_out "::error file=specs/basic.lua,line=3,title=tpuci%3A bad failed::exit 3"
(cd "$TESTS" && GITHUB_ACTIONS=true GITHUB_WORKSPACE="$TESTS" OUT="$WORK/flaky_out" \
  "$TPUCI" run --state-dir "$WORK/.tpuci" e2e/specs/flaky.lua) > flaky.out 2>&1
out=$(cat flaky.out)
expect_out "::warning file=e2e/specs/flaky.lua,line=2,title=tpuci%3A flaky flaky::exit 1"

# Markdown in names cannot break the step summary: rendered by cmark-gfm
# (GitHub's Markdown), each name comes out whole in its own code cell.
cat > md.lua <<'LUA'
job "m" { matrix = { v = { "a`b", "x|y", "*em* <b>z</b> [l](u)", "``q", " sp ", "e\\|f" } }, run = "exit 1" }
LUA
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/md.md" run_tpuci run md.lua
if command -v cmark-gfm >/dev/null; then
  cmark-gfm --extension table md.md > md.html
  check=$(/usr/bin/python3 - md.html <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.rows = []; self.cell = None; self.tags = []
    def handle_starttag(self, tag, attrs):
        if tag == "tr": self.rows.append([])
        elif tag in ("td", "th"): self.cell = ""; self.tags = []
        elif self.cell is not None: self.tags.append(tag)
    def handle_endtag(self, tag):
        if tag in ("td", "th"): self.rows[-1].append((self.cell, self.tags)); self.cell = None
    def handle_data(self, data):
        if self.cell is not None: self.cell += data
p = P(); p.feed(open(sys.argv[1]).read())
want = ["m[v=a`b]", "m[v=x|y]", "m[v=*em* <b>z</b> [l](u)]", "m[v=``q]", "m[v= sp ]", "m[v=e\\|f]"]
rows = [r for r in p.rows if r and r[0][0] != "instance"]
got = [r[0][0] for r in rows]
bad = [r for r in rows if len(r) != 4 or r[0][1] != ["code"]]
print("ok" if got == want and not bad else f"got {got} bad {bad}")
PY
)
  [ "$check" = ok ] && pass || fail "step summary Markdown: $check"
else
  fail "cmark-gfm is missing (Debian package cmark-gfm; tests/deps.sh)"
fi

# The jobs' own escape codes (pytest --color=yes, a hyperlink): left out of
# plain output, -v's lines and the counts, kept with --color=always.
cat > esc.lua <<'LUA'
job "esc" { run = "printf '\\033[33mwarn\\033[0m plain \\033]8;;http://x\\033\\\\link\\033]8;;\\007 done\\n'; exit 1" }
LUA
run_tpuci run esc.lua
expect_out "--- output of esc, attempt 1/1 ---
warn plain link done
--- end of esc ---" "plain output without the job's escape codes"
expect_not_out $'\033' "plain output: an escape code"
expect_out "instances: passed 0, flaky 0, failed 1, timeout 0, oom 0, infra 0, cancelled 0 (of 1) in " "the counts line says it counts instances"
run_tpuci run -v esc.lua
expect_out "[esc] warn plain link done" "-v without the job's escape codes"
expect_not_out $'\033' "-v: an escape code"
run_tpuci run --color=always esc.lua
expect_out $'\033[33mwarn\033[0m plain' "--color=always keeps the job's colours"

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
  # The board's line shows a coloured last line without its escape codes
  # (not "[33m" with ESC made a space).
  cat > boardesc.lua <<'LUA'
job "col" { run = "printf '\\033[33mstep\\033[0m one \\033]0;title\\007two\\n'; sleep 2" }
LUA
  env -u CI -u GITHUB_ACTIONS script -qec "'$TPUCI' run boardesc.lua" /dev/null > tty9.out 2>&1 < /dev/null
  out=$(cat tty9.out)
  expect_out "col #1 " "the board's line"
  expect_out "  step one two" "the board shows the coloured line's text"
  stripped=${out//$'\033['/}
  case $stripped in
    *'[33m'*|*']0;title'*) fail "the board shows a job's escape code without its ESC" ;;
    *) pass ;;
  esac
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
  # NO_COLOR counts when it is set and not empty (no-color.org).
  env -u GITHUB_ACTIONS -u CI NO_COLOR= TERM=xterm-256color \
    script -qec "'$TPUCI' run -j 2 colors.lua" /dev/null > tty7.out 2>&1 < /dev/null
  out=$(cat tty7.out)
  expect_out $'\033[1m\033[31mverdict: FAILED' "an empty NO_COLOR"
  env -u GITHUB_ACTIONS -u CI NO_COLOR=1 TERM=xterm-256color \
    script -qec "'$TPUCI' run -j 2 colors.lua" /dev/null > tty8.out 2>&1 < /dev/null
  out=$(cat tty8.out)
  expect_not_out $'\033[31m' "NO_COLOR=1"
  env -u GITHUB_ACTIONS -u NO_COLOR CI=true TERM=dumb \
    script -qec "'$TPUCI' run --color=always -j 2 colors.lua" /dev/null > tty6.out 2>&1 < /dev/null
  out=$(cat tty6.out)
  expect_out $'\033[31m' "--color=always under CI and TERM=dumb"
  expect_not_out $'\033[J' "--color=always: no board under CI and TERM=dumb"
else
  fail "script(1) is missing (util-linux): cannot test the terminal board"
fi
finish
