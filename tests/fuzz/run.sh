#!/usr/bin/env bash
# Builds the libFuzzer harness (fuzz_junit.c) with clang, ASan and UBSan,
# and fuzzes the JUnit, --collect-only and timings parsers for N seconds
# (default 60), starting from corpus/ and the fixtures in tests/junit/data.
# New inputs go to $TPUCI_FUZZ_BUILD/corpus (default /tmp/tpuci-fuzz), not
# to the tree; crashes to $TPUCI_FUZZ_BUILD/crash-*. Copy the ones worth
# keeping into corpus/ so the ctest replay (fuzz_junit_replay) runs them.
# Needs clang and libclang-rt-dev (apt-get install -y clang libclang-rt-14-dev).
# Usage: tests/fuzz/run.sh [seconds] [extra libFuzzer flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
shift || true
out=${TPUCI_FUZZ_BUILD:-/tmp/tpuci-fuzz}
cc=${CC_FUZZ:-clang}
mkdir -p "$out/corpus"

if ! command -v "$cc" >/dev/null; then
  echo "run.sh: $cc not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 77
fi

srcs=(core/base/util.c core/base/duration.c core/base/error.c core/base/idmap.c core/plan/outcome.c
      core/pytest/junit.c core/pytest/junit_history.c core/pytest/junit_report.c
      core/pytest/timings.c core/pytest/shard.c)
flags=(-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
       -DTPUCI_VERSION_STRING=\"fuzz\" -I"$root/include" -I"$root/core"
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer)
echo "run.sh: building $out/fuzz_junit" >&2
(cd "$root" && "$cc" "${flags[@]}" "${srcs[@]}" tests/fuzz/fuzz_junit.c \
   $(pkg-config --cflags --libs expat jansson libuv) -lm -o "$out/fuzz_junit")

cd "$out"
# -max_len covers the fixtures (the largest is ~14 KB).
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ./fuzz_junit -max_total_time="$secs" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -dict="$here/junit.dict" -print_final_stats=1 \
    "$@" corpus "$here/corpus" "$root/tests/junit/data"
