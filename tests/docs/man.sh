#!/usr/bin/env bash
# docs/tpuci.1: renders without a warning, names every command of
# `tpuci --help`, every long option of every command's help and of the
# CLI's option tables (core/cli/main.c), every exit code and environment
# variable; and installs with the binary. So the page cannot silently fall
# behind the CLI.
. "$TESTS/e2e/lib.sh"
src=$(cd "$TESTS/.." && pwd)
page="$src/docs/tpuci.1"
command -v groff >/dev/null || { echo "SKIP: no groff (apt-get install groff-base)"; exit 77; }

# 1. No warnings, from groff itself and (where man-db is) from man.
warn=$(groff -man -ww -z "$page" 2>&1)
[ -z "$warn" ] && pass || fail "groff warns: $warn"
if command -v man >/dev/null; then
  warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warn" ] && pass || fail "man warns: $warn"
fi

# The page as text, one paragraph per line (no wrapping or hyphenation
# can split an option).
render() { groff -man -Tutf8 -rLL=2000n -P-cbou "$1" 2>/dev/null; }
render "$page" > page.txt
[ -s page.txt ] && pass || fail "the page renders to nothing"

# section NAME FILE: the lines of one section (up to the next heading).
section() { awk -v s="$1" '/^[A-Z]/ { on = ($0 == s) ; next } on' "$2"; }

# The CLI's commands and long options.
commands=$("$TPUCI" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
[ "$(printf '%s\n' "$commands" | wc -l)" -ge 9 ] && pass || fail "tpuci --help lists too few commands: $commands"
options=$( { "$TPUCI" --help
             for c in $commands; do "$TPUCI" help "$c"; done
             sed -n 's/^ *{"\([a-z][a-z-]*\)", *\(no\|required\|optional\)_argument.*/--\1/p' \
               "$src/core/cli/main.c"
           } | grep -oE -- '--[a-z][a-z-]*[a-z]' | sort -u)
for o in --jobs --only --fail-fast --deadline --grace --strict-flaky --keep-failed \
         --state-dir --verbose --quiet --plain --color --report-json --report-yaml \
         --report-html --junit --failed --run --json --yaml --per-job --dry-run --emulate; do
  printf '%s\n' "$options" | grep -qx -- "$o" && pass || fail "the CLI's option list lacks $o (extraction broken?)"
done

# check_page FILE: every command and option is in the page; prints what
# is missing and returns non-zero when something is.
check_page() {
  local missing=0 c o
  section COMMANDS "$1" > commands.txt
  for c in $commands; do
    grep -qE "^ {7}$c( |$)" commands.txt || { echo "command '$c' has no entry in COMMANDS"; missing=1; }
  done
  for o in $options; do
    grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$1" || { echo "option $o is not in the page"; missing=1; }
  done
  section OPTIONS "$1" > options.txt
  for o in $("$TPUCI" help run | grep -oE -- '--[a-z][a-z-]*[a-z]' | sort -u); do
    grep -qE -- "^ {7}(-[a-zA-Z] [a-z]+, |-[a-zA-Z], )?$o( |,|$)" options.txt ||
      { echo "run option $o has no entry in OPTIONS"; missing=1; }
  done
  return $missing
}
report=$(check_page page.txt)
[ -z "$report" ] && pass || fail "docs/tpuci.1 is behind the CLI: $report"

# The check itself catches a page that lost an option or a command.
sed -e '/^\.B \\-\\-plain$/,/^Plain lines/d' "$page" > no-plain.1
render no-plain.1 > no-plain.txt
out=$(check_page no-plain.txt)
expect_out "option --plain is not in the page" "a page without --plain"
sed -e 's/^\.B gc$/.B gcx/' "$page" > no-gc.1
render no-gc.1 > no-gc.txt
out=$(check_page no-gc.txt)
expect_out "command 'gc' has no entry in COMMANDS" "a page without gc"

# Exit codes and the environment.
section "EXIT STATUS" page.txt > exit.txt
for c in 0 1 2 3 4 130; do
  grep -qE "^ {7}$c( |$)" exit.txt && pass || fail "EXIT STATUS lacks $c"
done
section ENVIRONMENT page.txt > env.txt
for v in DOCKER_HOST NO_COLOR CI GITHUB_ACTIONS GITHUB_STEP_SUMMARY; do
  grep -qE "^ {7}$v( |$)" env.txt && pass || fail "ENVIRONMENT lacks $v"
done
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
  grep -qx "$s" page.txt && pass || fail "no section $s"
done

# It installs with the binary.
if [ -n "${TPUCI_BUILD:-}" ] && [ -f "$TPUCI_BUILD/cmake_install.cmake" ]; then
  cmake --install "$TPUCI_BUILD" --prefix "$WORK/prefix" >/dev/null 2>&1
  man1=$(find "$WORK/prefix" -path '*/man1/tpuci.1' | head -n 1)
  [ -n "$man1" ] && cmp -s "$man1" "$page" && pass ||
    fail "cmake --install does not put tpuci.1 into .../man/man1"
fi
finish
