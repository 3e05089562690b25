#!/usr/bin/env bash
# A pytest job whose environment lacks python3 or pytest (issue 42.3;
# docs/pytest.md, "Setup errors"): not a failing test. The attempt ends
# infra with one cause naming the image (or this machine) and what is
# missing, and is not retried though retries.on has "failed" and "infra";
# the same for a sharded job, whose collection pass meets it first. `tpuci
# doctor` says it before any run: a FAIL line per image, exit 3. An image
# that has both passes, and its doctor line is ok.
. "$TESTS/e2e/lib.sh"
need_python_image tpuci-test/python:1
docker image inspect tpuci-test/busybox:1 > /dev/null 2>&1 ||
  { echo "SKIP: image tpuci-test/busybox:1 is missing (bash tests/images/build-busybox.sh)"; exit 77; }

# The test image without pytest (the engine's layer cache keeps it).
mkdir nopytest
cat > nopytest/Dockerfile <<'DOCKER'
FROM tpuci-test/python:1
RUN rm -rf /usr/lib/python3/dist-packages/pytest /usr/lib/python3/dist-packages/_pytest
DOCKER
docker build -q -t tpuci-test/nopytest:1 nopytest > build.log 2>&1 ||
  { cat build.log; fail "building tpuci-test/nopytest:1"; finish; }

mkdir -p proj/tests
printf 'def test_a():\n    assert True\n' > proj/tests/test_a.py
cat > spec.lua <<'LUA'
image "bb" { ref = "tpuci-test/busybox:1", pull = "never" }
image "nopt" { ref = "tpuci-test/nopytest:1", pull = "never" }
image "py" { ref = "tpuci-test/python:1", pull = "never" }
local function pyjob(img, extra)
  local j = {
    image = img, workdir = "/src",
    mounts = { [tpuci.spec_dir .. "/proj"] = { target = "/src", readonly = true } },
    pytest = { args = { "tests/" }, shards = extra },
    retries = { attempts = 3, on = { "failed", "infra" }, backoff = "10ms" },
  }
  return j
end
job "nopython" (pyjob("bb"))
job "nopytest" (pyjob("nopt"))
job "nopython-sharded" (pyjob("bb", 2))
job "nopytest-sharded" (pyjob("nopt", 2))
job "ok" (pyjob("py"))
job "local" {
  pytest = { python = "python3-not-here", args = { "tests/" } },
  workdir = tpuci.spec_dir .. "/proj",
  retries = { attempts = 2, on = { "failed", "infra" }, backoff = "10ms" },
}
LUA

run_tpuci run -j 4 spec.lua
expect_code 1 "a run with setup errors"
expect_out "[pass   ] ok"
for name in nopython nopytest "nopython-sharded[shard=1/2]" "nopython-sharded[shard=2/2]" \
            "nopytest-sharded[shard=1/2]" "nopytest-sharded[shard=2/2]" local; do
  expect_json "[i['outcome'] for i in s['instances'] if i['name'] == '$name']" "['infra']"
  expect_json "[len(i['attempts']) for i in s['instances'] if i['name'] == '$name']" "[1]"
done
no_python="setup: image 'tpuci-test/busybox:1' has no python3 (exit 127)"
no_pytest="setup: image 'tpuci-test/nopytest:1': python3 cannot import pytest (ModuleNotFoundError: No module named 'pytest')"
cause() { echo "[i['attempts'][0]['cause'] for i in s['instances'] if i['name'] == '$1'][0]"; }
expect_json "$(cause nopython)" "$no_python"
expect_json "$(cause nopytest)" "$no_pytest"
expect_json "$(cause 'nopython-sharded[shard=2/2]')" "$no_python"
expect_json "$(cause 'nopytest-sharded[shard=1/2]')" "$no_pytest"
expect_json "$(cause local)" "setup: this machine has no python3-not-here (exit 127)"
expect_out "[infra  ] nopython: $no_python"
expect_not_out "[failed "

# doctor finds both images before any run.
run_tpuci doctor spec.lua
expect_code 3 "doctor with images lacking python3 or pytest"
expect_out "FAIL pytest in image tpuci-test/busybox:1: the image has no python3 (exit 127)"
expect_out "FAIL pytest in image tpuci-test/nopytest:1: python3 cannot import pytest (ModuleNotFoundError: No module named 'pytest')"
expect_out "ok   pytest in image tpuci-test/python:1: python3 imports pytest"
sed -n '/^job "local"/q;p' spec.lua | grep -v '^job "no' > ok.lua
run_tpuci doctor ok.lua
expect_code 0 "doctor of the job whose image has pytest"
expect_not_out "FAIL"
finish
