#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz_*.c) with clang, ASan and UBSan
# (cmake -DTPUCI_FUZZ=ON, the whole library instrumented) and runs each
# for N seconds (default 60), starting from its seed
# corpus (corpus/<name>/ and the fixtures CMakeLists.txt names),
# TPUCI_FUZZ_PARALLEL (default TPUCI_FUZZ_JOBS, 2) at a time:
#   junit   JUnit XML, pytest --collect-only output, timings files
#   spec    a spec through the real loader, with small caps
#   engine  the Docker Engine's answers (HTTP, JSON, the output stream)
#   pattern the spec's copy of Lua's pattern matcher, against Lua's
#   state   the files someone else can write (a gcloud host file, a cache
#           entry, history.jsonl, a quarantine file, timings.json,
#           collections.json) and text made safe to print
#   pyconf  pytest's configuration files `tpuci init` reads, and the
#           spec it writes from them
#   pyblocks the top-level functions of Python source (function-level
#           selection)
#   deps    the selection's record (.tpuci/deps/), read back and written
#   wildmatch the glob matcher (inputs, CODEOWNERS, quarantine patterns)
# New inputs go to $TPUCI_FUZZ_BUILD/corpus-<name> (default
# /tmp/tpuci-fuzz), not to the tree; a crash to
# $TPUCI_FUZZ_BUILD/<name>-crash-*. Fix it, then copy the input into
# corpus/<name>/ so that ctest's fuzz_<name>_replay keeps running it.
# TPUCI_FUZZ_SEED=N (N > 0, as tests/run-all.sh sets it) makes a run the
# same on every machine: libFuzzer's -seed=N, from the seed corpus alone
# (the new inputs go to corpus-<name>.seeded, emptied first), so a slower
# machine explores a prefix of what a faster one does. Unset or 0: a
# random seed, growing corpus-<name> across runs (finding new crashes).
# Prints libFuzzer's final stats (runs, coverage) for each; exits 1 when
# a harness found a crash, 77 when clang is missing.
# Needs clang and libclang-rt-dev (apt-get install -y clang libclang-rt-14-dev).
# Usage: tests/fuzz/run.sh [seconds] [name...] [-- extra libFuzzer flags...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=60
case "${1:-}" in [0-9]*) secs=$1; shift ;; esac
names=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do names+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
[ ${#names[@]} -gt 0 ] || names=(junit spec engine pattern state pyconf pyblocks deps wildmatch)
out=${TPUCI_FUZZ_BUILD:-/tmp/tpuci-fuzz}
cc=${CC_FUZZ:-clang}
jobs=${TPUCI_FUZZ_JOBS:-2}

if ! command -v "$cc" >/dev/null; then
  echo "run.sh: $cc not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 77
fi
mkdir -p "$out"
echo "run.sh: building the harnesses in $out/build" >&2
if ! { cmake -S "$root" -B "$out/build" -DCMAKE_C_COMPILER="$cc" -DTPUCI_FUZZ=ON \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPUCI_BUILD_SHARED=OFF >/dev/null &&
       cmake --build "$out/build" -j "$jobs" --target "${names[@]/#/fuzz_}" \
         > "$out/build.log" 2>&1; }; then
  tail -n 40 "$out/build.log" >&2
  exit 1
fi

# The seed folders of each harness: corpus/<name> and what CMakeLists.txt adds.
seeds() {
  case "$1" in
    junit) echo "$here/corpus/junit $root/tests/junit/data" ;;
    spec) echo "$here/corpus/spec $root/tests/spec/bad $root/tests/e2e/specs" ;;
    engine) echo "$here/corpus/engine" ;;
    pattern) echo "$here/corpus/pattern" ;;
    state) echo "$here/corpus/state" ;;
    pyconf) echo "$here/corpus/pyconf" ;;
    pyblocks) echo "$here/corpus/pyblocks" ;;
    deps) echo "$here/corpus/deps" ;;
    wildmatch) echo "$here/corpus/wildmatch" ;;
  esac
}
# One harness: its run, its stats, its verdict (0, or 1 with the reason).
fuzz_one() {
  local name=$1 bin dict rc corpus seed
  shift
  bin=$out/build/tests/fuzz/fuzz_$name
  dict=()
  [ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
  corpus=$out/corpus-$name
  seed=()
  if [ "${TPUCI_FUZZ_SEED:-0}" != 0 ]; then
    corpus=$out/corpus-$name.seeded
    rm -rf "$corpus"
    seed=(-seed="$TPUCI_FUZZ_SEED")
  fi
  mkdir -p "$corpus"
  echo "run.sh: fuzz_$name for ${secs}s${seed:+ (${seed[0]})}" >&2
  # -timeout: one input may not take 10 s (the spec harness's loads are
  # capped at 50 ms: a slow one is a deadline that did not hold).
  # shellcheck disable=SC2046
  (cd "$out" &&
   ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/$name-" \
       "${seed[@]}" "${dict[@]}" "$@" "$corpus" $(seeds "$name")) \
    > "$out/$name.log" 2>&1
  rc=$?
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|^#[0-9]+[[:space:]]+DONE' \
    "$out/$name.log" | sed "s/^/fuzz_$name: /"
  if [ $rc -ne 0 ]; then
    echo "run.sh: fuzz_$name failed (exit $rc); see $out/$name.log and $out/$name-crash-*" >&2
    grep -E "ERROR|check failed|SUMMARY|took|^fuzz_$name: " "$out/$name.log" | head -n 10 >&2
    # The input itself, so that a crash CI found is reproduced from its log:
    # base64 -d > x && fuzz_<name> x (or copy it into corpus/<name>/).
    local crash
    for crash in "$out/$name"-crash-* "$out/$name"-timeout-* "$out/$name"-oom-*; do
      if [ ! -f "$crash" ] || [ ! "$crash" -nt "$out/.started" ]; then continue; fi
      if [ "$(wc -c < "$crash")" -le 4096 ]; then
        echo "run.sh: $(basename "$crash") in base64:" >&2
        base64 -w 76 "$crash" >&2
      fi
    done
    return 1
  fi
}

# TPUCI_FUZZ_PARALLEL harnesses at a time (default: the jobs, one per
# core): each is one process on one core.
parallel=${TPUCI_FUZZ_PARALLEL:-$jobs}
rm -f "$out"/*.failed
touch "$out/.started"
for name in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  { fuzz_one "$name" "$@" || touch "$out/$name.failed"; } &
done
wait
status=0
for name in "${names[@]}"; do [ -e "$out/$name.failed" ] && status=1; done
exit $status
