#!/usr/bin/env bash
# Runs real pytest on pytest_suite/ and checks that its reports parse to
# the same node ids and outcomes as the committed fixtures in data/.
# Usage: check_real_pytest.sh TEST_JUNIT_PARSE_BINARY
# Exit status 77 (skipped) when pytest is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

set +e
bash "$here/gen_pytest_fixtures.sh" "$tmp"
rc=$?
set -e
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || exit "$rc"

for f in pytest7_xunit2.xml pytest7_xunit1.xml; do
  "$bin" --dump "$tmp/$f" > "$tmp/$f.fresh"
  "$bin" --dump "$here/data/$f" > "$tmp/$f.committed"
  if ! diff -u "$tmp/$f.committed" "$tmp/$f.fresh"; then
    echo "check_real_pytest: $f from a fresh pytest run differs from data/$f" >&2
    exit 1
  fi
  echo "check_real_pytest: $f: $(wc -l < "$tmp/$f.fresh") tests, same ids and outcomes"
done
