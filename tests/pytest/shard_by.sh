#!/usr/bin/env bash
# pytest.shard_by (issue 23.5): by default a file's tests stay together
# in one shard, in their order, so a test that leans on its file's order
# passes as in serial pytest; test by test (shard_by = "test") the same
# suite splits a file and its order-dependent tests fail.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }
spec=$TESTS/pytest/shard_by/spec.lua

run_tpuci run --only byfile "$spec"
expect_code 0 "by file"
expect_out "byfile: 6 tests in 2 shards"
# Each shard ran one whole file.
for s in 1 2; do
  files=$(/usr/bin/python3 -c 'import json,sys
s = json.load(open(sys.argv[1]))
i = [i for i in s["instances"] if i["name"] == "byfile[shard=%s/2]" % sys.argv[2]][0]
print(" ".join(sorted({t["id"].split("::")[0] for t in i["tests"]})), len(i["tests"]))' \
    .tpuci/runs/latest/summary.json "$s" 2>&1)
  case "$files" in
    "tests/test_a.py 3" | "tests/test_b.py 3") pass ;;
    *) fail "shard $s of byfile ran: $files" ;;
  esac
done

# No durations known: dealt round-robin (a1 a3 b2 | a2 b1 b3).
rm -f .tpuci/timings.json
run_tpuci run --only bytest "$spec"
expect_code 1 "test by test splits test_a.py"
expect_out "test_1 did not run before me in this process"
expect_json '[i["outcome"] for i in s["instances"] if i["name"].startswith("bytest")]' "['passed', 'failed']"

run_tpuci plan --json "$spec"
expect_out '"shard_by": "file"'
expect_out '"shard_by": "test"'
printf 'job "x" { pytest = { shards = 2, shard_by = "module" } }\n' > bad.lua
run_tpuci plan bad.lua
expect_code 2 "a bad shard_by"
expect_out "bad.lua:1: job 'x': pytest.shard_by: unknown value 'module'"
finish
