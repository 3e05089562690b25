#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, starts a
# private Docker Engine (and stops it again), makes it a single-node
# Docker Swarm (.ci/swarm-up.sh), builds the test images,
# then builds tpuci twice (plain, and with ASan+UBSan) and runs ctest on
# each, then runs each libFuzzer harness for TPUCI_FUZZ_SECONDS (60).
# Build folders: build/, build-sanitize/ and build-fuzz/ (under
# TPUCI_BUILD_DIR if set). Exit status: that of the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

bash tests/deps.sh

started_engine=0
if [ -z "${DOCKER_HOST:-}" ] || ! curl -sf --max-time 2 --unix-socket "${DOCKER_HOST#unix://}" http://localhost/_ping >/dev/null 2>&1; then
  # An engine that was already up (another session's) is left running.
  TPUCI_ENGINE_STARTED=0
  eval "$(bash .ci/engine-up.sh)"
  started_engine=$TPUCI_ENGINE_STARTED
fi
export DOCKER_HOST
# The swarm runtime's tests (tests/swarm/) run on this engine made a
# single-node swarm; TPUCI_NO_SWARM=1 leaves the engine alone (they skip).
if [ "${TPUCI_NO_SWARM:-0}" != 1 ]; then
  bash .ci/swarm-up.sh
fi
cleanup() {
  if [ "$started_engine" = 1 ]; then bash .ci/engine-down.sh || true; fi
}
trap cleanup EXIT

for img in tests/images/build-*.sh; do
  bash "$img"
done

build() { # name, extra cmake args...
  local dir=${TPUCI_BUILD_DIR:-$root}/$1
  shift
  echo "== configure and build $dir" >&2
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  if ! cmake --build "$dir" -j "$jobs" > "$dir/build.log" 2>&1; then
    tail -n 60 "$dir/build.log" >&2
    return 1
  fi
  if grep -q 'warning:' "$dir/build.log"; then
    grep -A3 'warning:' "$dir/build.log" >&2
    echo "build in $dir has compiler warnings" >&2
    return 1
  fi
  echo "== test $dir" >&2
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 900)
}

build build
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  build build-sanitize -DTPUCI_SANITIZE=ON

# The fuzzers (tests/fuzz/run.sh): each harness for a bounded time, built
# with clang into build-fuzz/; a crash fails the run. The corpora they
# grow stay in build-fuzz/, the inputs to keep go into tests/fuzz/corpus/.
echo "== fuzz (${TPUCI_FUZZ_SECONDS:-60} s per harness)" >&2
fuzz_rc=0
TPUCI_FUZZ_BUILD=${TPUCI_BUILD_DIR:-$root}/build-fuzz TPUCI_FUZZ_JOBS=$jobs \
  bash tests/fuzz/run.sh "${TPUCI_FUZZ_SECONDS:-60}" || fuzz_rc=$?
if [ "$fuzz_rc" = 77 ]; then
  echo "run-all: the fuzzers were skipped: no clang" >&2
elif [ "$fuzz_rc" != 0 ]; then
  echo "run-all: a fuzzer failed" >&2
  exit "$fuzz_rc"
fi
echo "run-all: every suite passed" >&2
