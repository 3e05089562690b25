#!/usr/bin/env bash
# The run folder gives every instance, and every pytest shard group's
# collection, a folder of its own: names that differ only in characters
# that cannot be in a file name, names of the run folder's own files, "..",
# a 300-character name and matrix values with '/' or ".." never share a
# folder, never fail as infra and never write outside the run folder; and
# everything that reads log paths back (attempts.jsonl, summary.json, the
# HTML report, show, rerun) finds each attempt's own log.
. "$TESTS/e2e/lib.sh"

cat > names.lua <<'LUA'
job "lint/ruff" { run = "echo out:lint/ruff" }
job "lint_ruff" { run = "echo out:lint_ruff" }
job "lint:ruff" { run = "echo out:lint:ruff" }
job "summary.json" { run = "echo out:summary.json" }
job "attempts.jsonl" { run = "echo out:attempts.jsonl" }
job ".." { run = "echo out:.." }
job (string.rep("x", 300)) { run = "echo out:long" }
job (string.rep("x", 299) .. "y") { run = "echo out:long2" }
job "m" { run = "echo out:m=${matrix.v}",
          matrix = { v = { "../../../escape", "/abs/path", "a b", "a_b" } } }
job "bad/one" { run = "echo out:bad/one; exit 3" }
LUA
run_tpuci run -j 4 names.lua
expect_code 1 "names run"
expect_not_out "cannot write"
expect_json 's["counts"]["infra"]' 0
expect_json 's["counts"]["passed"]' 12
expect_json 's["counts"]["failed"]' 1

run=$(readlink -f .tpuci/runs/latest)
# Each attempt's log is its own: it holds that instance's output and
# nothing else, it lies directly in its own folder in the run folder,
# and no two instances share a folder.
check=$(/usr/bin/python3 - "$run" <<'PY' 2>&1
import json, os, sys
run = sys.argv[1]
s = json.load(open(os.path.join(run, "summary.json")))
lines = [json.loads(l) for l in open(os.path.join(run, "attempts.jsonl"))]
assert len(lines) == 13, len(lines)
by_jsonl = {l["instance"]: l["log"] for l in lines}
folders = set()
for inst in s["instances"]:
    name, log = inst["name"], inst["attempts"][0]["log"]
    assert by_jsonl[name] == log, (name, by_jsonl[name], log)
    real = os.path.realpath(log)
    folder = os.path.dirname(real)
    assert os.path.dirname(folder) == run, ("outside the run folder", name, real)
    assert os.path.basename(real) == "attempt-1.log", real
    assert folder not in folders, ("shared folder", name, folder)
    folders.add(folder)
    want = "out:" + (name if not name.startswith("m[") else "m=" + inst["matrix"]["v"])
    want = {"x" * 300: "out:long", "x" * 299 + "y": "out:long2"}.get(name, want)
    got = open(real).read().splitlines()
    assert got[0] == want, (name, got, want)
    base = os.path.basename(folder)
    assert len(base.encode()) <= 100, base
    safe = all(c.isascii() and (c.isalnum() or c in "._=,+-") for c in name)
    if safe and len(name) <= 100 and not name.startswith(".") and name not in ("summary.json", "attempts.jsonl"):
        assert base == name, ("a safe name changed", name, base)
    else:
        assert "~" in base and base != name, ("an unsafe name kept", name, base)
# The run folder's own files are still files.
for f in ("summary.json", "attempts.jsonl", "report.html"):
    assert os.path.isfile(os.path.join(run, f)), f
print("ok")
PY
)
[ "$check" = ok ] && pass || fail "log folders: $check"
# Nothing was written outside the run folder (.. and / in names).
extra=$(ls -A "$WORK" | grep -v -x -e .tpuci -e names.lua)
[ -z "$extra" ] && pass || fail "files outside the run folder: $extra"
[ ! -e "$WORK/.tpuci/escape" ] && [ ! -e "$WORK/.tpuci/runs/escape" ] && [ ! -e /abs/path ] && pass ||
  fail "a matrix value escaped the run folder"
[ "$(ls "$run" | grep -c '^lint_ruff')" = 3 ] && pass || fail "lint/ruff, lint_ruff and lint:ruff do not have three folders: $(ls "$run")"

# The console names each failure's own log; the HTML report lists the logs.
badlog=$(json '[i for i in s["instances"] if i["name"] == "bad/one"][0]["attempts"][0]["log"]')
expect_out "    log: ${badlog#"$(pwd -P)"/}" "the log's path, relative to the current folder"
grep -qx "out:bad/one" "$badlog" && pass || fail "bad/one's log: $(cat "$badlog")"
grep -qF "$(basename "$(dirname "$badlog")")/attempt-1.log" "$run/report.html" && pass ||
  fail "report.html does not name bad/one's log"

# show reads it back; rerun --failed selects by name and logs apart.
run_tpuci show
expect_code 1 "show"
expect_out "bad/one"
run_tpuci rerun --failed names.lua
expect_code 1 "rerun --failed"
expect_json '[i["name"] for i in s["instances"]]' "['bad/one']"
log2=$(json 's["instances"][0]["attempts"][0]["log"]')
[ "$(basename "$(dirname "$log2")")" = "$(basename "$(dirname "$badlog")")" ] && grep -qx "out:bad/one" "$log2" &&
  pass || fail "rerun's log of bad/one: $log2"

# pytest shard groups "py/t" and "py_t": each collection gets its own
# folder (they used to share py_t/collect.log and read each other's tests).
if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
  mkdir -p proj/tests
  for i in 1 2 3; do printf 'def test_one_%s():\n    pass\n' "$i"; done > proj/tests/test_one.py
  for i in 1 2 3 4 5; do printf 'def test_two_%s():\n    pass\n' "$i"; done > proj/tests/test_two.py
  cat > shards.lua <<LUA
job "py/t" { workdir = "$WORK/proj", pytest = { python = "/usr/bin/python3", args = { "tests/test_one.py" }, shards = 2 } }
job "py_t" { workdir = "$WORK/proj", pytest = { python = "/usr/bin/python3", args = { "tests/test_two.py" }, shards = 2 } }
LUA
  run_tpuci run -j 2 shards.lua
  expect_code 0 "two shard groups"
  expect_out "py/t: 3 tests in 2 shards"
  expect_out "py_t: 5 tests in 2 shards"
  n=$(ls .tpuci/runs/latest/*/collect.log | wc -l)
  [ "$n" = 2 ] && pass || fail "want 2 collect.log files, got $n: $(ls .tpuci/runs/latest)"
  rm -rf proj shards.lua
else
  echo "note: /usr/bin/python3 has no pytest; shard group folders not checked"
fi
finish
