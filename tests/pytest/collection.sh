#!/usr/bin/env bash
# Shards without a collection pass (issue 23.4): a run splits a sharded
# suite from the collection the last run recorded (.tpuci/collections.json)
# when its key (what selects the tests) matches, and every shard collects
# the suite itself and keeps its part, so nothing the record does not
# know can vanish: a test file added between runs runs (in one shard), a
# file removed is gone (not failed, not "not run"), a shard whose files
# are all gone passes, a whole suite gone fails as pytest's exit 5, a
# changed selection collects first again, a shard that dies before
# collecting is retried with its part, not with node ids it never knew,
# the tests that failed last time gather in one shard with less other
# work when a retry will run them again, and shards that collect
# different tests are told; a split too big to pass collects first.
. "$TESTS/e2e/lib.sh"
# Every run here runs its spec again and means it to run: what a run
# records changes what the next one does (docs/cache.md: a stored pass
# would answer instead).
export TPUCI_NO_CACHE=1
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

# test_a.py is the longest file by far: with durations recorded it is
# shard 1's alone, the other files shard 2's.
suite() {
  local m
  for m in a b c d; do
    cat > "tests/test_$m.py" <<PY
import time

import pytest


@pytest.mark.parametrize("i", range(4))
def test_$m(i):
    time.sleep(0.2 if "$m" == "a" else 0)
PY
  done
}
mkdir tests
suite
cat > spec.lua <<'LUA'
job "suite" {
  workdir = tpuci.spec_dir,
  pytest = { python = "/usr/bin/python3", args = { "tests/" }, shards = 2,
             markers = tpuci.env("MARKERS", "not nothing") },
  retries = { attempts = 2, on = { "failed" }, backoff = "0s" },
}
LUA

# ran: each test id the latest run reported, with how many times (over
# both shards) and its final outcome, sorted.
ran() {
  json 'sorted("%s %s" % (t["id"], t["outcome"]) for i in s["instances"] for t in i["tests"])' |
    tr -d "[]'," | tr ' ' '\n' | paste - - | sort
}
# expect_tests N FILES: the latest run reported N tests, each once and
# passed, and exactly FILES' tests.
expect_tests() {
  local got files
  got=$(json 'len([t for i in s["instances"] for t in i["tests"]])')
  [ "$got" = "$1" ] && pass || fail "$1 tests wanted, the run reported $got: $(ran)"
  got=$(json 'len({t["id"] for i in s["instances"] for t in i["tests"]})')
  [ "$got" = "$1" ] && pass || fail "some test ran in two shards: $(ran)"
  files=$(json '" ".join(sorted({t["id"].split("::")[0].split("_")[1][0] for i in s["instances"] for t in i["tests"]}))')
  [ "$files" = "$2" ] && pass || fail "tests of files '$files' ran, want '$2'"
  got=$(json '[t["outcome"] for i in s["instances"] for t in i["tests"] if t["outcome"] != "passed"]')
  [ "$got" = "[]" ] && pass || fail "tests that did not pass: $got"
}
collect_log() { ls .tpuci/runs/latest/suite/collect.log 2>/dev/null; }

# 1. Nothing recorded: the collection pass, then the record.
run_tpuci run -j 2 spec.lua
expect_code 0 "first run"
expect_out "suite: 16 tests in 2 shards (by count: no recorded durations)"
expect_not_out "from the last run's collection"
[ -n "$(collect_log)" ] && pass || fail "the first run made no collect.log"
expect_tests 16 "a b c d"
got=$(/usr/bin/python3 -c 'import json; print(len(json.load(open(".tpuci/collections.json"))["groups"]["suite"]["ids"]))')
[ "$got" = 16 ] && pass || fail "collections.json records $got ids, want 16"

# 2. The record matches: no collection pass, every test once.
run_tpuci run -j 2 spec.lua
expect_code 0 "second run"
expect_out "suite: 16 tests in 2 shards (by recorded durations)"
expect_out "from the last run's collection"
[ -z "$(collect_log)" ] && pass || fail "the second run collected first though the record matches"
expect_tests 16 "a b c d"

# 3. A file added since: its tests run, in one shard.
cat > tests/test_e.py <<'PY'
def test_e1():
    pass


def test_e2():
    pass
PY
run_tpuci run -j 2 spec.lua
expect_code 0 "a file added"
[ -z "$(collect_log)" ] && pass || fail "the run with a new file collected first"
expect_tests 18 "a b c d e"

# 4. A file removed since: its tests are gone, not failed, not "not run".
rm tests/test_b.py
run_tpuci run -j 2 spec.lua
expect_code 0 "a file removed"
expect_not_out "not run"
expect_tests 14 "a c d e"

# 5. Every file of one shard removed (test_a.py, by the durations):
# that shard has nothing left and passes; the other runs its part.
expect_json '[t["id"] for i in s["instances"] if i["name"] == "suite[shard=1/2]" for t in i["tests"]]' \
  "['tests/test_a.py::test_a[0]', 'tests/test_a.py::test_a[1]', 'tests/test_a.py::test_a[2]', 'tests/test_a.py::test_a[3]']"
rm tests/test_a.py
run_tpuci run -j 2 spec.lua
expect_code 0 "shard 1's files removed"
expect_json '[i["outcome"] for i in s["instances"]]' "['passed', 'passed']"
log=$(json '[i for i in s["instances"] if i["name"] == "suite[shard=1/2]"][0]["attempts"][0]["log"]')
grep -q "no test is left for this shard" "$log" && pass || fail "shard 1 did not say it had nothing left: $(tail -n 3 "$log")"
expect_tests 10 "c d e"

# 6. Another selection (the key changes): the collection pass again.
MARKERS="not other" run_tpuci run -j 2 spec.lua
expect_code 0 "another selection"
[ -n "$(collect_log)" ] && pass || fail "a changed selection used the old record"
expect_not_out "from the last run's collection"

# 7. A shard that dies before it collects is retried with its part of
# the suite (it never said what it was to run), not with the whole suite
# and not with node ids that would miss a new test.
rm tests/test_e.py
suite
run_tpuci run -j 2 spec.lua          # records the four files again
cat > tests/conftest.py <<'PY'
import os


def pytest_sessionstart(session):
    flag = os.path.join(os.path.dirname(__file__), "..", "died-once")
    if os.environ.get("TEST_SHARD_INDEX") == "1" and not os.path.exists(flag):
        open(flag, "w").close()
        os._exit(3)
PY
printf 'def test_new():\n    pass\n' > tests/test_f.py
run_tpuci run -j 2 spec.lua
expect_code 0 "a shard that died before collecting, retried"
expect_json '[len(i["attempts"]) for i in s["instances"]]' "[1, 2]"
expect_tests 17 "a b c d f"
log=$(json '[i for i in s["instances"] if i["name"] == "suite[shard=2/2]"][0]["attempts"][1]["log"]')
grep -q "deselected" "$log" && pass || fail "the retry of shard 2 did not keep its part: $(grep collected "$log")"
rm tests/conftest.py

# 8. Retries planned: two files' tests failed last time and a retry on
# failed runs them again, so both go to one shard, which gets less of the
# other work (its retry ends with the other shard, not after it).
mkdir r r/tests
for m in 1 2; do printf 'def test_fails_%s():\n    assert False\n' "$m" > "r/tests/test_f$m.py"; done
for m in 1 2 3 4; do printf 'import time\n\n\ndef test_w():\n    time.sleep(0.3)\n' > "r/tests/test_w$m.py"; done
cat >> spec.lua <<'LUA'
job "retrying" {
  workdir = tpuci.spec_dir .. "/r",
  pytest = { python = "/usr/bin/python3", args = { "tests/" }, shards = 2 },
  retries = { attempts = 2, on = { "failed" }, backoff = "0s" },
}
LUA
run_tpuci run -j 2 --only retrying spec.lua
expect_code 1 "retrying, first run"
got=$(/usr/bin/python3 -c 'import json; print(json.load(open(".tpuci/collections.json"))["groups"]["retrying"]["overhead_s"] >= 0)')
[ "$got" = True ] && pass || fail "no overhead_s recorded for retrying: $got"
# The split weighs a retry's own cost (the record's overhead_s, pytest's
# start here: 0.2 s to 1 s by the machine's load) against the tests'
# durations (0.3 s each): the record says 2 s, so the plan does not hang
# on this machine's speed.
/usr/bin/python3 - <<'PY'
import json
p = ".tpuci/collections.json"
c = json.load(open(p))
c["groups"]["retrying"]["overhead_s"] = 2.0
json.dump(c, open(p, "w"))
PY
run_tpuci run -j 2 --only retrying spec.lua
expect_code 1 "retrying, second run"
expect_out "(with the retry of the tests that failed last time, in 1 shard)"
expect_json '[sorted(t["id"] for t in i["tests"] if t["outcome"] == "failed") for i in s["instances"]]' \
  "[['tests/test_f1.py::test_fails_1', 'tests/test_f2.py::test_fails_2'], []]"
expect_json '[len(i["attempts"]) for i in s["instances"]]' "[2, 1]"

# 9. Shards that collect different tests (ids that depend on the
# process) are told: a test only some of them saw may have been lost.
printf 'import os\nimport pytest\n\n\n@pytest.mark.parametrize("i", range(2 + int(os.environ["TEST_SHARD_INDEX"])))\ndef test_g(i):\n    pass\n' > tests/test_g.py
run_tpuci run -j 2 --only 'suite*' spec.lua
expect_out "warning: suite: its shards collected different tests (suite[shard="
rm tests/test_g.py
run_tpuci run -j 2 --only 'suite*' spec.lua
expect_not_out "collected different tests"

# 10. A split too big to pass as one argument (over 100 KiB: here 1,200
# tests of 100-character ids, test by test) is not used from the record:
# the shards run node ids, which only a collection pass may give.
mkdir h h/tests
printf 'import pytest\n\n\n@pytest.mark.parametrize("i", ["%%s-%%090d" %% ("x", i) for i in range(1200)])\ndef test_h(i):\n    pass\n' > h/tests/test_h.py
cat >> spec.lua <<'LUA'
job "huge" {
  workdir = tpuci.spec_dir .. "/h",
  pytest = { python = "/usr/bin/python3", args = { "tests/" }, shards = 2, shard_by = "test" },
}
LUA
for n in 1 2; do
  run_tpuci run -j 2 --only 'huge*' spec.lua
  expect_code 0 "huge, run $n"
  [ -e .tpuci/runs/latest/huge/collect.log ] && pass || fail "huge, run $n: no collection pass"
  expect_not_out "from the last run's collection"
  expect_json 'len({t["id"] for i in s["instances"] for t in i["tests"] if t["outcome"] == "passed"})' 1200
done

# 11. The whole suite gone: nothing is selected anywhere, pytest's exit 5
# fails the shards as it would without a record.
rm tests/test_*.py
run_tpuci run -j 2 spec.lua
expect_code 1 "no test left at all"
expect_out "no test selected by -m 'not nothing' tests/ (pytest exit 5"
finish
