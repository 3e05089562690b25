#!/usr/bin/env bash
# The tests test the tree, not a copy the image holds (issue 42.1;
# docs/pytest.md, "The tree under test"). The image tpuci-test/stale:1 has
# an installed copy of the package `mean` (correct); the tree's mean is
# broken. A job that imports the installed copy ends infra, naming both
# paths and the fix, instead of passing; with PYTHONPATH = "src", or with
# a pytest.setup that installs the tree, the broken tree is red, and
# once the tree is fixed, green. A setup command that fails is infra and
# not retried, in a sharded job's collection pass too.
. "$TESTS/e2e/lib.sh"
need_python_image tpuci-test/python:1

mkdir -p img/mean proj/src/mean proj/tests
printf 'def mean(xs):\n    return sum(xs) / len(xs)\n' > img/mean/__init__.py
printf 'FROM tpuci-test/python:1\nCOPY mean /usr/lib/python3/dist-packages/mean\n' > img/Dockerfile
docker build -q -t tpuci-test/stale:1 img > build.log 2>&1 ||
  { cat build.log; fail "building tpuci-test/stale:1"; finish; }
printf 'def mean(xs):\n    return 42\n' > proj/src/mean/__init__.py
printf 'from mean import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n' \
  > proj/tests/test_mean.py

cat > spec.lua <<'LUA'
image "stale" { ref = "tpuci-test/stale:1", pull = "never" }
local function j(t)
  return { image = "stale", workdir = "/src", env = t.env,
    mounts = { [tpuci.spec_dir .. "/proj"] = { target = "/src", readonly = true } },
    pytest = { args = { "tests/" }, setup = t.setup, shards = t.shards },
    retries = { attempts = 2, on = { "failed", "infra" }, backoff = "10ms" } }
end
job "installed" (j({}))
job "path" (j({ env = { PYTHONPATH = "src" } }))
job "setup" (j({ setup = { "echo installing the tree", "cp -r src/mean /usr/lib/python3/dist-packages/" } }))
job "setup-fails" (j({ setup = { "false" } }))
job "setup-fails-sharded" (j({ setup = { "exit 3" }, shards = 2 }))
LUA

run_tpuci run -j 4 spec.lua
expect_code 1 "a broken tree"
outcome() { echo "dict((i['name'], (i['outcome'], len(i['attempts']))) for i in s['instances'])['$1']"; }
cause() { echo "[i['attempts'][-1]['cause'] for i in s['instances'] if i['name'] == '$1'][0]"; }
expect_json "$(outcome installed)" "('infra', 1)"
expect_json "$(cause installed)" "setup: image 'tpuci-test/stale:1': package 'mean' is imported from /usr/lib/python3/dist-packages/mean, not from the tree under test (/src/src/mean): the tests would test an installed copy; install the tree in the attempt (pytest.setup = { \"pip install --no-deps -e .\" }) or put it first on the path (env = { PYTHONPATH = \"src\" })"
expect_json "$(outcome path)" "('failed', 2)"
expect_json "$(outcome setup)" "('failed', 2)"
expect_out "[test   ] setup: FAILED tests/test_mean.py::test_mean - assert 42 == 2"
expect_out "installing the tree"
expect_json "$(outcome setup-fails)" "('infra', 1)"
expect_json "$(cause setup-fails)" "setup: image 'tpuci-test/stale:1': pytest.setup command failed (exit 1): false"
expect_json "$(outcome 'setup-fails-sharded[shard=2/2]')" "('infra', 1)"
expect_json "$(cause 'setup-fails-sharded[shard=1/2]')" "setup: image 'tpuci-test/stale:1': pytest.setup command failed (exit 3): exit 3"
expect_not_out "[pass   ]"

# The tree fixed: the jobs that test it pass; the installed copy still
# stops the one that does not.
printf 'def mean(xs):\n    return sum(xs) / len(xs) + 0\n' > proj/src/mean/__init__.py
run_tpuci run -j 4 --no-cache --only path --only setup spec.lua
expect_code 0 "the fixed tree"
expect_json "sorted((i['name'], i['outcome']) for i in s['instances'] if i['outcome'] != 'none')" \
  "[('path', 'passed'), ('setup', 'passed')]"

# pytest.setup's mistakes, at load.
cat > bad.lua <<'LUA'
job "b" { pytest = { setup = "pip install -e ." } }
LUA
run_tpuci plan bad.lua
expect_code 2 "pytest.setup as a string"
expect_out "bad.lua:1"
expect_out "pytest.setup"
finish
