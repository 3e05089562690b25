#!/usr/bin/env bash
# A job that fails on its first attempt only is flaky: it passes the run,
# unless --strict-flaky, and both attempts are recorded.
. "$TESTS/e2e/lib.sh"

mkdir out
OUT="$WORK/out" run_tpuci run "$SPECS/flaky.lua"
expect_code 0 "flaky passes"
expect_out "[retry  ] flaky: attempt 2/3"
expect_out "flaky: passed on attempt 2 after failing"
expect_json 's["instances"][0]["outcome"]' flaky
expect_json '[a["outcome"] for a in s["instances"][0]["attempts"]]' "['failed', 'passed']"
expect_json 's["counts"]["flaky"]' 1

rm -f out/marker
OUT="$WORK/out" run_tpuci run --strict-flaky "$SPECS/flaky.lua"
expect_code 1 "--strict-flaky"
expect_json 's["instances"][0]["outcome"]' flaky
finish
