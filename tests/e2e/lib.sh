# Helpers for end-to-end tests of the tpuci binary. Source it first.
# Needs: TPUCI (the binary) and TESTS (the tests folder) in the environment.
set -u
: "${TPUCI:?TPUCI must name the tpuci binary}"
: "${TESTS:?TESTS must name the tests folder}"
SPECS="$TESTS/e2e/specs"
# Scenarios run with the results cache on, as users run (docs/cache.md):
# one that runs a spec again and means it to run says so (--no-cache, or
# TPUCI_NO_CACHE=1 for that command). A TPUCI_NO_CACHE of the caller's
# is not inherited.
unset TPUCI_NO_CACHE
WORK=$(mktemp -d /tmp/tpuci-e2e.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
checks=0
# Debian's python3, where tests/deps.sh installs what the checks import
# (PyYAML, pytest, the Kubernetes client), rather than whatever python3
# comes first on PATH: a version manager's shim (pyenv's) takes seconds a
# call on a loaded machine, which turned bounded wait loops into minutes.
# A link first on PATH, not a shell function: `python3 ... &` must leave
# the python process itself in $! for the kill that ends it. The link is
# in the build folder (ctest sets TPUCI_BUILD): tests look at what is in
# $WORK.
if [ -x /usr/bin/python3 ] && [ -n "${TPUCI_BUILD:-}" ] && [ -d "$TPUCI_BUILD" ]; then
  if [ ! -L "$TPUCI_BUILD/test-bin/python3" ]; then
    mkdir -p "$TPUCI_BUILD/test-bin" && ln -sfn /usr/bin/python3 "$TPUCI_BUILD/test-bin/python3"
  fi
  PATH="$TPUCI_BUILD/test-bin:$PATH"
fi

# Where an exported workflow gets tpuci (`tpuci export github
# "${GH_SOURCE[@]}" ...`): a build names its checkout's remote and commit
# (docs/github.md), and tests must not depend on where the tree under
# test was cloned from, nor fail in a checkout without a remote.
GH_SOURCE=(--source https://git.example.com/acme/tpuci.git --ref 0123456789abcdef0123456789abcdef01234567)

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { checks=$((checks + 1)); }

# run_tpuci ARGS...: runs tpuci, sets $out (stdout+stderr) and $code.
run_tpuci() {
  out=$("$TPUCI" "$@" 2>&1)
  code=$?
}

expect_code() {
  if [ "$code" = "$1" ]; then pass; else fail "$2: exit $code, want $1; output:"; printf '%s\n' "$out" | tail -n 30 >&2; fi
}

expect_out() {
  case "$out" in
    *"$1"*) pass ;;
    *) fail "${2:-output}: no '$1' in output:"; printf '%s\n' "$out" | tail -n 30 >&2 ;;
  esac
}

expect_not_out() {
  case "$out" in
    *"$1"*) fail "${2:-output}: unexpected '$1' in output" ;;
    *) pass ;;
  esac
}

# python_with MODULE...: prints the first python3 (the one on PATH, then
# Debian's) that imports every MODULE, or nothing.
python_with() {
  local p mods
  mods=$(IFS=,; echo "$*")
  for p in "$(type -P python3)" /usr/bin/python3; do
    if [ -n "$p" ] && [ -x "$p" ] && "$p" -c "import $mods" 2> /dev/null; then echo "$p"; return; fi
  done
}

# json QUERY: evaluates a Python expression over the latest summary.json
# (bound to `s`) and prints the result.
json() {
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$WORK/.tpuci/runs/latest/summary.json" "$1"
}

expect_json() {
  local got
  got=$(json "$1" 2>&1)
  if [ "$got" = "$2" ]; then pass; else fail "summary.json: $1 = '$got', want '$2'"; fi
}

# need_python_image IMAGE: skips (exit 77) unless the engine at
# DOCKER_HOST answers and has IMAGE (tests/images/build-python.sh).
need_python_image() {
  local sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
  curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping >/dev/null 2>&1 ||
    { echo "SKIP: no engine at $sock"; exit 77; }
  docker image inspect "$1" >/dev/null 2>&1 ||
    { echo "SKIP: image $1 is missing (bash tests/images/build-python.sh)"; exit 77; }
}

finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed, $checks passed" >&2
    exit 1
  fi
  echo "all $checks checks passed"
  exit 0
}
