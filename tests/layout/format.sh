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
bad=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for f in "${files[@]}"; do
  if ! clang-format --style=file --dry-run -Werror "$f" > /dev/null 2> "$err"; then
    bad=$((bad + 1))
    [ "$bad" -le 10 ] && head -n 6 "$err"
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "FAIL: $bad of ${#files[@]} files are not formatted (clang-format -i FILE formats one)"
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says"
