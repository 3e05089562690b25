#!/usr/bin/env bash
# The whole test suite, as CI runs it (tests/README.md): installs what is
# missing (tests/deps.sh: specs/deps.sh's and the suite's own packages), starts a private Docker Engine (and stops it
# again), makes it a single-node Docker Swarm (.ci/swarm-up.sh), builds
# the test images while tpuci builds, then:
#   - the plain optimised build (build/): the static tests, the
#     embedding tests and the benchmarks' smoke runs (ctest -L
#     'static|embed|bench'; the unit tests run once, in the sanitizer
#     build), beside
#   - the ASan+UBSan build (build-sanitize/): every test but the
#     benchmarks' (measured in the optimised build) and those whose result
#     does not depend on the build (static, once), each scenario once, so the drivers' memory is checked where the scenarios drive
#     them; the scenarios wait on engines, not on the CPU, so they run
#     TPUCI_TEST_JOBS at a time (default 3 per core), the longest first;
#   - each libFuzzer harness for TPUCI_FUZZ_SECONDS (15), two at a time;
# and prints a time table: each step's and each label's wall time and
# the ten slowest tests.
#
#   tests/run-all.sh           everything, as CI
#   tests/run-all.sh --quick   the inner loop: the plain build, its unit
#                              and static tests and one scenario per
#                              engine (ctest -L quick), the small images
#
# Build folders: build/, build-sanitize/, build-fuzz/ (under
# TPUCI_BUILD_DIR if set). Exit status: that of the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cores=$(nproc 2>/dev/null || echo 2)
quick=0
[ "${1:-}" = --quick ] && quick=1
bdir=${TPUCI_BUILD_DIR:-$root}
times=$(mktemp -d /tmp/tpuci-times.XXXXXX)
t0=$SECONDS

# step NAME COMMAND...: runs a step and records its wall time.
step() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "$name $((SECONDS - start))" >> "$times/steps"
  return $rc
}

bash tests/deps.sh

# What the machine did in the run (the time table's last lines): every
# core's busy time from /proc/stat, dockerd's and the containers' too,
# and how long a fixed piece of CPU work takes here, so a slower machine
# is told apart from a change that costs more.
head -n 1 /proc/stat > "$times/cpu.start"
python3 -c 'import time
t = time.perf_counter()
n = 0
for i in range(3000000): n += i * i
print("calibration %.2f" % (time.perf_counter() - t))' >> "$times/steps.extra"

started_engine=0
bg_images=
cleanup() {
  [ -n "$bg_images" ] && kill "$bg_images" 2> /dev/null
  if [ "$started_engine" = 1 ]; then bash .ci/engine-down.sh || true; fi
  rm -rf "$times"
}
trap cleanup EXIT
engine() {
  if [ -z "${DOCKER_HOST:-}" ] || ! curl -sf --max-time 2 --unix-socket "${DOCKER_HOST#unix://}" http://localhost/_ping > /dev/null 2>&1; then
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
}
step engine engine

# The images build (debootstrap: the network and the disk) while tpuci
# compiles (the CPU). --quick leaves out the torch image.
images() {
  local img
  for img in tests/images/build-*.sh; do
    if [ "$quick" = 1 ] && [ "$img" = tests/images/build-torch.sh ]; then continue; fi
    bash "$img"
  done
}
images > "$times/images.log" 2>&1 &
bg_images=$!
images_start=$SECONDS

# compile NAME CMAKE-ARGS...: configures and builds $bdir/NAME, warning-free.
compile() {
  local dir=$bdir/$1
  shift
  echo "== configure and build $dir" >&2
  # The tests are wanted: without cmocka the configure fails rather than
  # leave them out (a quickstart's build/ has them AUTO).
  # Ninja where the folder is new (a sixth less CPU than make's
  # generator, whose cmake steps per target cost as much as linking);
  # a folder configured before keeps its generator.
  local gen=()
  if [ ! -e "$dir/CMakeCache.txt" ] && command -v ninja > /dev/null; then gen=(-G Ninja); fi
  cmake -S "$root" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPUCI_BUILD_TESTS=ON "$@" > /dev/null
  if ! cmake --build "$dir" -j "$cores" > "$dir/build.log" 2>&1; then
    tail -n 60 "$dir/build.log" >&2
    return 1
  fi
  if grep -q 'warning:' "$dir/build.log"; then
    grep -A3 'warning:' "$dir/build.log" >&2
    echo "build in $dir has compiler warnings" >&2
    return 1
  fi
}
step "build (plain)" compile build
if [ "$quick" = 0 ]; then
  step "build (asan+ubsan)" compile build-sanitize -DTPUCI_SANITIZE=ON
fi

wait_images() {
  local rc=0
  wait "$bg_images" || rc=$?
  bg_images=
  echo "images $((SECONDS - images_start))" >> "$times/steps"
  if [ $rc != 0 ]; then
    tail -n 30 "$times/images.log" >&2
    echo "run-all: building the test images failed" >&2
    return $rc
  fi
}
wait_images

# tests NAME DIR CTEST-ARGS...: ctest in DIR, each line stamped with the
# time (for the time table), its labels kept beside.
tests() {
  local name=$1 dir=$2 rc=0
  shift 2
  echo "== test $dir ($*)" >&2
  (cd "$dir" && ctest --show-only=json-v1 > "$times/$name.tests.json")
  (cd "$dir" && ctest --output-on-failure --timeout 900 "$@") 2>&1 |
    while IFS= read -r line; do
      printf '%s\n' "$line"
      printf '%(%s)T %s\n' -1 "$line" >> "$times/$name.log"
    done
  rc=${PIPESTATUS[0]}
  return "$rc"
}

status=0
# For the sanitizer build (the plain one has no sanitizer runtime to read them).
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "$quick" = 1 ]; then
  step "tests (plain, quick)" tests plain "$bdir/build" -j "$cores" -L quick || status=$?
else
  # The plain build's tests (short CPU work, and benchmarks' smoke runs
  # that mostly wait) beside the sanitizer build's scenarios (which wait
  # on engines): one wall time for both. The unit tests are the
  # sanitizer build's: run twice, they cost a core for minutes and found
  # nothing the sanitized run did not.
  step "tests (plain)" tests plain "$bdir/build" -j "$cores" -L '^(static|embed|bench)$' \
    > "$times/plain.out" 2>&1 &
  plain_pid=$!
  step "tests (asan+ubsan)" tests sanitize "$bdir/build-sanitize" -LE '^(bench|static|once)$' \
    -j "${TPUCI_TEST_JOBS:-$((3 * cores))}" || status=$?
  plain_rc=0
  wait "$plain_pid" || plain_rc=$?
  echo "== the plain build's tests" >&2
  if [ "$plain_rc" != 0 ]; then
    cat "$times/plain.out" >&2
    [ "$status" = 0 ] && status=$plain_rc
  else
    tail -n 3 "$times/plain.out" >&2
  fi
  # The fuzzers (tests/fuzz/run.sh): each harness for a bounded time,
  # built with clang into build-fuzz/; a crash fails the run. The corpora
  # they grow stay in build-fuzz/, the inputs to keep go into
  # tests/fuzz/corpus/. The same seed every run (TPUCI_FUZZ_SEED, 1), so
  # that a change passes or fails here as it did on its author's machine:
  # a clean clone explores the same inputs, a slower machine fewer of
  # them. Finding new crashes is a longer run's work, with a random seed
  # (TPUCI_FUZZ_SEED=0 TPUCI_FUZZ_SECONDS=600).
  if [ "$status" = 0 ]; then
    echo "== fuzz (${TPUCI_FUZZ_SECONDS:-15} s per harness, seed ${TPUCI_FUZZ_SEED:-1})" >&2
    fuzz_rc=0
    step fuzz env TPUCI_FUZZ_BUILD="$bdir/build-fuzz" TPUCI_FUZZ_JOBS="$cores" \
      TPUCI_FUZZ_SEED="${TPUCI_FUZZ_SEED:-1}" \
      bash tests/fuzz/run.sh "${TPUCI_FUZZ_SECONDS:-15}" || fuzz_rc=$?
    if [ "$fuzz_rc" = 77 ]; then
      echo "run-all: the fuzzers were skipped: no clang" >&2
    elif [ "$fuzz_rc" != 0 ]; then
      echo "run-all: a fuzzer failed" >&2
      status=$fuzz_rc
    fi
  fi
fi
echo "total $((SECONDS - t0))" >> "$times/steps"
head -n 1 /proc/stat > "$times/cpu.end"
python3 tests/timetable.py "$times" >&2 || true
if [ "$status" = 0 ]; then echo "run-all: every suite passed" >&2; fi
exit "$status"
