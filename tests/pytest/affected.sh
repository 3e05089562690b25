#!/usr/bin/env bash
# Only what a change can affect (issue 35; docs/pytest.md): a project of
# two modules (pkg/a.py calls pkg/b.py) and a third (pkg/c.py), tests of
# each, a test that opens a data file, a test that fails, a conftest.py.
# With pytest.select = "affected", the first run runs and records every
# test; then a change to one module runs exactly the tests that need it
# plus the tests that failed last time and any new test; a data file a
# test opens runs that test; a conftest.py change runs everything;
# select_always, --no-select and --affected do what they say; a record
# made with another image runs everything. The tests left out are
# `unaffected` in summary.json (with the run they last passed in), on the
# console, in the merged JUnit (skipped, with the reason), the HTML and the
# GitHub step summary, and are no runs in `tpuci flaky`.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest"; exit 77; }
gitc() { git -c user.email=t@t -c user.name=t "$@"; }

mkdir -p proj/pkg proj/tests proj/data && cd proj || exit 1
git init -q
: > pkg/__init__.py
printf 'from pkg import b\n\n\ndef fa():\n    return b.fb() - 1\n' > pkg/a.py
printf 'def fb():\n    return 2\n' > pkg/b.py
printf 'def fc():\n    return 3\n' > pkg/c.py
printf 'from pkg import a\n\n\ndef test_a1():\n    assert a.fa() == 1\n\n\ndef test_a2():\n    assert a.fa() + 1 == 2\n' > tests/test_a.py
printf 'from pkg import b\n\n\ndef test_b1():\n    assert b.fb() == 2\n' > tests/test_b.py
printf 'from pkg import c\n\n\ndef test_c1():\n    assert c.fc() == 3\n' > tests/test_c.py
printf 'def test_data():\n    with open("data/d.txt") as f:\n        assert f.read().strip() == "ok"\n' > tests/test_data.py
printf 'import os\n\n\ndef test_fail():\n    assert os.environ.get("AFFECTED_GOOD") == "1"\n' > tests/test_fail.py
echo ok > data/d.txt
printf 'import pytest\n' > conftest.py
cat > spec.lua <<'EOF'
job "p" { pytest = { python = "/usr/bin/python3", args = { "tests" }, select = "affected" } }
EOF
gitc add . && gitc commit -qm init

# run WHAT [ARGS...]: a run; $ran becomes the tests that ran (not
# unaffected), sorted, and $left the ones left out.
run_aff() {
  local what=$1
  shift
  run_tpuci run --plain "$@" spec.lua
  ran=$(/usr/bin/python3 -c 'import json; s=json.load(open(".tpuci/runs/latest/summary.json"))
print(" ".join(sorted(t["id"].split("::")[1] for i in s["instances"] for t in i.get("tests", []) if t["outcome"] != "unaffected")))')
  left=$(/usr/bin/python3 -c 'import json; s=json.load(open(".tpuci/runs/latest/summary.json"))
print(" ".join(sorted(t["id"].split("::")[1] for i in s["instances"] for t in i.get("tests", []) if t["outcome"] == "unaffected")))')
}
expect_ran() { # WHAT WANT
  if [ "$ran" = "$2" ]; then pass; else fail "$1: ran '$ran', want '$2' (left out: '$left')"; printf '%s\n' "$out" | grep 'select affected' >&2; fi
}

# 1. Nothing recorded yet: every test runs, and is recorded.
run_aff first
expect_code 1 "first run (test_fail fails)"
expect_ran "first run" "test_a1 test_a2 test_b1 test_c1 test_data test_fail"
expect_out "select affected: no record yet"
[ "$(ls .tpuci/deps/*.json 2> /dev/null | wc -l)" = 1 ] && pass || fail "no record in .tpuci/deps/"

# 2. Nothing changed: only the test that failed last time.
run_aff unchanged
expect_ran "nothing changed" "test_fail"
expect_out "p: select affected: 1 of 6 recorded tests runs: 0 affected, 1 failed last time"
expect_out "p: 6 tests, 1 failed, 0 flaky, 5 unaffected"
# summary.json: counted apart, with the run they last passed in.
/usr/bin/python3 - <<'EOF' && pass || fail "summary.json: unaffected tests"
import json, os
s = json.load(open(".tpuci/runs/latest/summary.json"))
first = sorted(r for r in os.listdir(".tpuci/runs") if r != "latest")[0]
t = {x["id"].split("::")[1]: x for x in s["instances"][0]["tests"]}
assert t["test_a1"]["outcome"] == "unaffected", t["test_a1"]
assert t["test_a1"]["unaffected_since"] == first, (t["test_a1"], first)
assert t["test_fail"]["outcome"] == "failed"
EOF

# 3. One module changed: the tests that need it (pkg/b.py: test_b1, and
# test_a* through pkg/a.py), and the test that failed last time.
echo '# changed' >> pkg/b.py
run_aff "pkg/b.py changed"
expect_ran "pkg/b.py changed" "test_a1 test_a2 test_b1 test_fail"
expect_out "3 affected (changed since: pkg/b.py)"
echo '# changed' >> pkg/c.py
run_aff "pkg/c.py changed"
expect_ran "pkg/c.py changed" "test_c1 test_fail"

# 4. A data file a test opens.
echo ok > data/d.txt.new && mv data/d.txt.new data/d.txt && printf 'ok\n\n' > data/d.txt
run_aff "data file changed"
expect_ran "data/d.txt changed" "test_data test_fail"

# 5. A new test runs; a renamed one too.
printf 'def test_new():\n    pass\n' > tests/test_new.py
run_aff "a new test"
expect_ran "a new test" "test_fail test_new"
run_aff "the new test recorded"
expect_ran "the new test recorded" "test_fail"

# 6. select_always: those files always run.
sed -i 's/select = "affected" }/select = "affected", select_always = { "tests\/test_c.py" } }/' spec.lua
run_aff "select_always"
expect_ran "select_always" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
expect_out "the record was made with other inputs"
run_aff "select_always, recorded"
expect_ran "select_always, recorded" "test_c1 test_fail"

# 7. --no-select runs everything (and records); --affected on a job
# without select.
run_aff "--no-select" --no-select
expect_ran "--no-select" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
expect_out "--no-select: every test runs"
sed -i 's/, select = "affected", select_always = { "tests\/test_c.py" }//' spec.lua
run_aff "no select" --no-cache
expect_ran "select = all" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
expect_not_out "select affected"
run_aff "--affected, first" --affected
run_aff "--affected" --affected
expect_ran "--affected" "test_fail"

# 8. The reports: the merged JUnit has them as skipped, with the reason;
# the HTML and the step summary count them apart; the history has no run
# of them.
run_tpuci run --plain --affected --junit "$WORK/j.xml" --report-html "$WORK/r.html" spec.lua
grep -q '<skipped>unaffected: nothing it needs changed since it passed in run' "$WORK/j.xml" && pass ||
  fail "junit: no unaffected skip: $(grep -c '<skipped' "$WORK/j.xml") skips"
grep -q 'unaffected (not run: nothing they need changed)' "$WORK/r.html" && pass || fail "html: no unaffected count"
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$WORK/step.md" run_tpuci run --affected spec.lua
grep -q 'Tests left out as unaffected: 6' "$WORK/step.md" && pass || fail "step summary: $(grep -i unaffected "$WORK/step.md")"
run_tpuci flaky --json
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["tests"]:
    if t["id"].endswith("test_fail"):
        assert "f" in t["outcomes"], t
' && pass || fail "tpuci flaky: $out"

# 9. A conftest.py change runs everything.
echo '# changed' >> conftest.py
run_aff "conftest.py changed" --affected
expect_ran "conftest.py changed" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
expect_out "conftest.py changed, which the whole session needs"

# 10. A record from another image: everything runs (containers).
sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
if curl -sf --max-time 3 --unix-socket "${sock#unix://}" http://localhost/_ping > /dev/null 2>&1 &&
  docker image inspect tpuci-test/python:1 > /dev/null 2>&1; then
  tag="tpuci-affected-test/python:$$"
  trap 'docker rmi -f "$tag" > /dev/null 2>&1; rm -rf "$WORK"' EXIT
  build_image() {
    printf 'FROM tpuci-test/python:1\nLABEL tpuci.affected.test="%s"\n' "$1" |
      DOCKER_BUILDKIT=0 docker build -q -t "$tag" - > /dev/null 2>&1 || fail "docker build"
  }
  build_image one
  cat > spec.lua <<EOF
image "py" { ref = "$tag", pull = "never" }
job "p" { image = "py", mounts = { ["."] = { target = "/src", readonly = true } }, workdir = "/src",
          pytest = { args = { "tests" }, select = "affected" }, env = { AFFECTED_GOOD = "1" } }
EOF
  # (--no-cache: these runs pass, and a stored pass would answer instead.)
  run_aff "container, first" --no-cache
  expect_ran "container, first" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
  run_aff "container, again" --no-cache
  expect_ran "container, nothing changed" ""
  expect_out "p: select affected: 0 of 7 recorded tests run"
  echo '# changed' >> pkg/c.py
  run_aff "container, pkg/c.py" --no-cache
  expect_ran "container, pkg/c.py changed" "test_c1"
  build_image two
  run_aff "container, another image" --no-cache
  expect_ran "another image" "test_a1 test_a2 test_b1 test_c1 test_data test_fail test_new"
  expect_out "the record was made with other inputs"
fi
finish
