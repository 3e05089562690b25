#!/bin/bash
# The shell scripts tpuci runs in containers (CMakeLists.txt's
# tpuci_sh_files): each file parses (sh -n, and dash's when sh is
# another), as does the copy the build embedded without its comment
# lines (BUILD/sh/, cmake/embed_sh.cmake), and shellcheck finds nothing
# in it as POSIX sh. Without shellcheck that part is skipped, said so.
#   shcheck.sh BUILD_DIR SCRIPT...
set -u
build=$1
shift
fail=0
for f in "$@"; do
  copy=$build/sh/$(basename "$f")
  for s in "$f" "$copy"; do
    if [ ! -f "$s" ]; then
      echo "FAIL $s: missing"; fail=1; continue
    fi
    for shell in sh dash; do
      command -v "$shell" >/dev/null 2>&1 || continue
      if ! out=$("$shell" -n "$s" 2>&1); then
        echo "FAIL $shell -n $s: $out"; fail=1
      fi
    done
  done
  if command -v shellcheck >/dev/null 2>&1; then
    if ! shellcheck -s sh "$f"; then
      echo "FAIL shellcheck $f"; fail=1
    fi
  fi
  # The copy is the file without its comment lines, nothing else.
  if ! diff <(grep -v '^[[:space:]]*#' "$f") "$copy" >/dev/null; then
    echo "FAIL $copy is not $f without its comment lines"; fail=1
  fi
done
command -v shellcheck >/dev/null 2>&1 || echo "shellcheck is not installed: skipped"
[ "$fail" = 0 ] && echo "ok: $# scripts"
exit "$fail"
