#!/usr/bin/env bash
# --fail-fast stops the run after the first failure.
. "$TESTS/e2e/lib.sh"

start=$(date +%s)
run_tpuci run -j 2 --fail-fast "$SPECS/failfast.lua"
elapsed=$(( $(date +%s) - start ))
expect_code 1 "fail-fast"
expect_out "fail-fast: 'fails' failed"
expect_json '[i["outcome"] for i in s["instances"]]' "['failed', 'cancelled', 'cancelled', 'cancelled', 'cancelled']"
expect_json 'len(s["instances"][4]["attempts"])' 0
# "long" sleeps 60 s: it must have been stopped, not waited for.
[ "$elapsed" -lt 30 ] && pass || fail "fail-fast took ${elapsed}s"

run_tpuci run -j 2 --deadline 1s "$SPECS/failfast.lua"
expect_code 1 "deadline"
expect_out "deadline of 1s reached"
finish
