#!/usr/bin/env bash
# Runs the sample suite in pytest_suite/ with real pytest and writes its
# reports: OUTDIR/pytest7_xunit2.xml (junit_logging=all),
# OUTDIR/pytest7_xunit1.xml (file and line attributes), and the output
# of --collect-only -q, with and without a collection error. Host names,
# time stamps and absolute paths are replaced so the files can be
# committed (data/ holds the committed copies).
# Usage: gen_pytest_fixtures.sh [OUTDIR]   (default: data/)
# Exit status 77 when pytest is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/data}
mkdir -p "$out"
out=$(cd "$out" && pwd)

py=
for cand in "${PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$cand" ] || continue
  if "$cand" -m pytest --version >/dev/null 2>&1; then py=$cand; break; fi
done
if [ -z "$py" ]; then
  echo "gen_pytest_fixtures: pytest is not installed (apt-get install python3-pytest)" >&2
  exit 77
fi

suite=$here/pytest_suite
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$suite"
export TPUCI_JUNIT_SAMPLE=1 PYTHONDONTWRITEBYTECODE=1
pyt() { "$py" -m pytest -p no:cacheprovider --rootdir="$suite" "$@"; }

sanitize() { # in out
  sed -e 's/hostname="[^"]*"/hostname="ci-host"/' \
      -e 's/timestamp="[^"]*"/timestamp="2026-01-01T00:00:00.000000"/' \
      -e "s#$suite#/src#g" -e "s#$(dirname "$(command -v "$py")")#/usr/bin#g" "$1" > "$2"
}

# pytest exits 1 here: the suite fails on purpose.
pyt -q --continue-on-collection-errors -o junit_logging=all \
    --junitxml="$tmp/x2.xml" suite >/dev/null 2>&1 || true
pyt -q --continue-on-collection-errors -o junit_family=xunit1 \
    --junitxml="$tmp/x1.xml" suite >/dev/null 2>&1 || true
pyt -q --collect-only suite/test_mod.py suite/sub > "$tmp/c1.txt" 2>&1 || true
pyt -q --collect-only suite > "$tmp/c2.txt" 2>&1 || true
for f in x2.xml x1.xml c1.txt c2.txt; do
  [ -s "$tmp/$f" ] || { echo "gen_pytest_fixtures: pytest wrote no $f" >&2; exit 1; }
done
sanitize "$tmp/x2.xml" "$out/pytest7_xunit2.xml"
sanitize "$tmp/x1.xml" "$out/pytest7_xunit1.xml"
sanitize "$tmp/c1.txt" "$out/collect_ok.txt"
sanitize "$tmp/c2.txt" "$out/collect_errors.txt"
echo "gen_pytest_fixtures: wrote $out ($("$py" -m pytest --version 2>&1))" >&2
