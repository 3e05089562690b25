#!/usr/bin/env bash
# select = "affected" on a gang (issue 41; docs/pytest.md): a 2-host
# topology in real containers of the Python test image, each host running
# the suite. Every host's record is merged into the instance's record: the
# first run records, a second with nothing changed leaves every test out,
# and an edit inside one function's body reruns only the test that ran it.
. "$TESTS/e2e/lib.sh"
image=${TPUCI_PYTEST_IMAGE:-tpuci-test/python:1}
need_python_image "$image"

mkdir -p proj/pkg proj/tests && cd proj || exit 1
WORK=$PWD
: > pkg/__init__.py
printf 'def one():\n    return 1\n\n\ndef two():\n    return 2\n' > pkg/m.py
printf 'from pkg import m\n\n\ndef test_one():\n    assert m.one() == 1\n\n\ndef test_two():\n    assert m.two() == 2\n' > tests/test_m.py
cat > spec.lua <<LUA
image "py" { ref = "$image", pull = "never" }
topology "v4-16" {}
job "g" {
  image = "py", topology = "v4-16", timeout = "2m", grace = "1s",
  mounts = { [tpuci.spec_dir] = { target = "/src", readonly = true } }, workdir = "/src",
  pytest = { args = { "tests/" }, select = "affected" },
}
LUA
ran() { json '" ".join(sorted(t["id"].split("::")[1] for t in s["instances"][0]["tests"] if t["outcome"] != "unaffected"))'; }

run_tpuci run --plain spec.lua
expect_code 0 "the recording run of a gang"
expect_out "g: select affected: no record yet"
[ "$(ran)" = "test_one test_two" ] && pass || fail "first run ran '$(ran)'"

run_tpuci run --plain --no-cache spec.lua
expect_code 0 "nothing changed"
expect_out "g: select affected: 0 of 2 recorded tests run"
[ "$(ran)" = "" ] && pass || fail "nothing changed: ran '$(ran)'"

printf 'def one():\n    return 1\n\n\ndef two():\n    return 3\n' > pkg/m.py
run_tpuci run --plain --no-cache spec.lua
expect_code 1 "two() broken"
expect_out "g: select affected: 1 of 2 recorded tests runs: 1 affected (changed since: pkg/m.py)"
[ "$(ran)" = "test_two" ] && pass || fail "two() broken: ran '$(ran)'"
finish
