#!/usr/bin/env bash
# The python test image: pytest runs in it on a mounted folder, and a
# failing test fails the job. Skipped when tpuci-test/python:1 is missing
# (tests/images/build-python.sh makes it; CI always does).
. "$TESTS/docker/lib.sh"

if ! api "/images/tpuci-test/python:1/json" >/dev/null 2>&1; then
  echo "SKIP: no tpuci-test/python:1 (run tests/images/build-python.sh)"
  exit 77
fi
mkdir src
cat > src/test_ok.py <<'PY'
def test_adds():
    assert 1 + 1 == 2
PY
cat > src/test_bad.py <<'PY'
def test_fails():
    assert 1 + 1 == 3
PY
cat > spec.lua <<'LUA'
image "py" { ref = "tpuci-test/python:1", pull = "never" }
job "good" { image = "py", network = "none", mounts = { ["src"] = "/src" }, workdir = "/src",
  run = "python3 -m pytest -q -p no:cacheprovider test_ok.py" }
job "bad" { image = "py", network = "none", mounts = { ["src"] = "/src" }, workdir = "/src",
  run = "python3 -m pytest -q -p no:cacheprovider test_bad.py" }
LUA
tpuci_run run -j 2 spec.lua
expect_code 1 "one pytest job fails"
expect_json '{i["name"]: i["outcome"] for i in s["instances"]}' "{'good': 'passed', 'bad': 'failed'}"
expect_json '[i for i in s["instances"] if i["name"] == "bad"][0]["attempts"][0]["exit_code"]' 1
expect_no_leftovers "$(latest_run_id)" "$tp" "after pytest"
finish
