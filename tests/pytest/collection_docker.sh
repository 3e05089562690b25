#!/usr/bin/env bash
# Shards without a collection pass (issue 23.4), in containers: a sharded
# suite on a read-only mount runs its second time from the recorded
# collection (no collect.log), each shard collecting the suite in the
# image and keeping its part; a file added between runs runs once.
. "$TESTS/e2e/lib.sh"
# Every run here runs its spec again and means it to run: what a run
# records changes what the next one does (docs/cache.md: a stored pass
# would answer instead).
export TPUCI_NO_CACHE=1
need_python_image tpuci-test/python:1

mkdir src src/tests
for m in a b c; do
  printf 'import pytest\n\n\n@pytest.mark.parametrize("i", range(3))\ndef test_%s(i):\n    pass\n' "$m" > "src/tests/test_$m.py"
done
cat > spec.lua <<'LUA'
image "py" { ref = "tpuci-test/python:1", pull = "never" }
job "suite" {
  image = "py", workdir = "/src",
  mounts = { ["src"] = { target = "/src", readonly = true } },
  pytest = { args = { "tests/" }, shards = 2 },
}
LUA
# The tests that passed, over every instance (a shard whose part is
# empty has no "tests").
ids() { json 'sorted(t["id"] for i in s["instances"] for t in i.get("tests", []) if t["outcome"] == "passed")' | tr -d "[]'," | wc -w; }
# What each instance was, for a failure's message.
instances() { json '[(i["name"], i["outcome"], len(i.get("tests", [])), [(a["outcome"], a.get("cause")) for a in i["attempts"]]) for i in s["instances"]]'; }

run_tpuci run -j 2 spec.lua
expect_code 0 "first run"
[ -e .tpuci/runs/latest/suite/collect.log ] && pass || fail "the first run did not collect first"
run_tpuci run -j 2 spec.lua
expect_code 0 "second run"
expect_out "from the last run's collection"
[ ! -e .tpuci/runs/latest/suite/collect.log ] && pass || fail "the second run collected first"
[ "$(ids)" = 9 ] && pass || fail "the second run passed $(ids) tests, want 9: $(instances); $out"
# Both shards ran some of the 3 files, whatever durations the first run
# recorded (tests too quick to measure are 0 s: test_timings_shard).
expect_json 'sorted(len(i.get("tests", [])) for i in s["instances"])' "[3, 6]"
printf 'def test_new():\n    pass\n' > src/tests/test_new.py
run_tpuci run -j 2 spec.lua
expect_code 0 "a file added"
[ "$(ids)" = 10 ] && pass || fail "with a new file $(ids) tests passed, want 10: $(instances); $out"
expect_json 'len({t["id"] for i in s["instances"] for t in i.get("tests", [])})' 10
expect_json '[t["id"] for i in s["instances"] for t in i["tests"] if "new" in t["id"]]' "['tests/test_new.py::test_new']"
finish
