#!/usr/bin/env bash
# The tree is formatted as .clang-format says: `clang-format --dry-run
# -Werror` on every C file of core/ and include/ (tracked by git, so
# generated files in a build folder inside the tree are left out).
# Format a file with `clang-format -i FILE`. Skipped without clang-format
# (apt-get install clang-format).
set -u
root=${1:?the source folder}
command -v clang-format > /dev/null || { echo "SKIP: no clang-format (apt-get install clang-format)"; exit 77; }
cd "$root" || exit 1
[ -f .clang-format ] || { echo "FAIL: no .clang-format at $root"; exit 1; }
mapfile -t files < <(git ls-files 'core/*.c' 'core/*.h' 'include/*.h' 2>/dev/null)
[ "${#files[@]}" -ge 100 ] || { echo "FAIL: only ${#files[@]} C files found under core/ and include/"; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# One clang-format for every file: it names each offending file in its
# errors ("FILE:LINE:COL: error: code should be clang-formatted").
clang-format --style=file --dry-run -Werror "${files[@]}" > /dev/null 2> "$err"
rc=$?
bad=$(grep -E '^[^:]+:[0-9]+:[0-9]+: error: ' "$err" | cut -d: -f1 | sort -u | wc -l)
if [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
  echo "FAIL: clang-format exited $rc without naming a file:"
  head -n 20 "$err"
  exit 1
fi
[ "$bad" -gt 0 ] && head -n 60 "$err"
if [ "$bad" -gt 0 ]; then
  echo "FAIL: $bad of ${#files[@]} files are not formatted (clang-format -i FILE formats one)"
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says"
