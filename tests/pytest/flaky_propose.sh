#!/usr/bin/env bash
# Issue 35.5: a job's run in which more than half of its tests failed is
# an infra run, left out of flip rates and named by `tpuci flaky`; `tpuci
# flaky --propose` prints quarantine entries for the tests above a flip
# rate, with the owner CODEOWNERS gives and an expiry 14 days out, which
# tpuci's quarantine reads as they are, and writes nothing.
. "$TESTS/e2e/lib.sh"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || { echo "SKIP: /usr/bin/python3 has no pytest (apt-get install python3-pytest)"; exit 77; }

mkdir -p proj/tests proj/.github
cd proj || exit 1
git init -q .
cat > spec.lua <<'LUA'
job "g" { pytest = { python = "/usr/bin/python3", args = { "tests/" } },
          workdir = tpuci.spec_dir,
          env = { RUN_FILE = tpuci.env("RUN_FILE", "/nonexistent"),
                  INFRA = tpuci.env("INFRA", "") } }
LUA
cat > tests/conftest.py <<'PY'
import os

import pytest


@pytest.fixture(autouse=True)
def machine():
    # An infra run: the device is gone, every test errors.
    if os.environ.get("INFRA"):
        raise RuntimeError("device lost")
PY
cat > tests/test_g.py <<'PY'
import os


def run_number():
    return int(open(os.environ["RUN_FILE"]).read())


def test_flip():
    assert run_number() % 2 == 1, "fails on even runs"


def test_broken():
    assert False, "always broken"


def test_ok1():
    pass


def test_ok2():
    pass


def test_ok3():
    pass


def test_ok4():
    pass
PY
printf '# owners\n*  @everyone\ntests/  @team\n/tests/test_g.py  @alice @org/ml\n' > .github/CODEOWNERS
# One commit, and what changes from run to run (the run's number, its
# output) outside the repository: every run is of one tree (issue 42.6).
git add -A && git -c user.email=t@t -c user.name=t commit -qm init

for n in 1 2 3 4; do
  echo "$n" > "$WORK/run.txt"
  RUN_FILE=$WORK/run.txt "$TPUCI" run -q spec.lua > "$WORK/run$n.out" 2>&1
done
echo 5 > "$WORK/run.txt"
INFRA=1 RUN_FILE=$WORK/run.txt "$TPUCI" run -q spec.lua > "$WORK/run5.out" 2>&1
infra_run=$(/usr/bin/python3 -c 'import json; print(json.loads(open(".tpuci/history.jsonl").read().splitlines()[-1])["run"])')

run_tpuci flaky
expect_code 0 "flaky"
expect_out "left out of flip rates: run $infra_run of g: 6 of its 6 tests failed (an infra run)"
expect_out "0.75      2/4     pfpfx" "test_flip's row: the infra run is x and not counted"
expect_out "0.00      4/4     ffffx" "test_broken's row"
expect_not_out "test_ok1" "a test that failed only in the infra run is not listed"
run_tpuci flaky --json
got=$(printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
print([(x["run"] == sys.argv[1], x["instance"], x["tests"], x["failed"]) for x in r["left_out"]],
      sorted(t["id"].split("::")[1] for t in r["tests"]))' "$infra_run")
want="[(True, 'g', 6, 6)] ['test_broken', 'test_flip']"
[ "$got" = "$want" ] && pass || fail "flaky --json: $got, want $want"

# The proposals: test_flip only (test_broken is broken, not flaky), its
# owner from the last CODEOWNERS line that covers it, 14 days out.
until=$(date -u -d '+14 days' +%F)
run_tpuci flaky --propose
expect_code 0 "--propose"
printf '%s\n' "$out" > proposed.yaml
expect_out '# tpuci flaky --propose: 1 test flipped in at least 10% of its runs in the last 5 runs'
expect_out '- test: "tests/test_g.py::test_flip"'
expect_out '  owner: "@alice @org/ml"  # '"$PWD"'/.github/CODEOWNERS:4'
expect_out "  until: $until"
expect_out '  reason: "flaky: flip rate 0.75 (3 flips in 4 runs of g), last failed in run '
# The runs the proposal rests on: the four of the one tree (the infra
# run is left out).
tree=$(/usr/bin/python3 -c 'import json; t = json.loads(open(".tpuci/history.jsonl").read().splitlines()[0])["tree"]; c, f = t.split(":"); print(c[:7] + ":" + f[:8])')
runs=$(/usr/bin/python3 -c 'import json; print(", ".join("run %s %s" % (json.loads(l)["run"], "pfpf"[i]) for i, l in enumerate(open(".tpuci/history.jsonl").read().splitlines()[:4])))')
expect_out "- test: \"tests/test_g.py::test_flip\"
  # tree $tree: $runs
  reason: "
expect_not_out "test_broken" "a test that always fails is not flaky"
[ ! -e tpuci-quarantine.yaml ] && pass || fail "--propose wrote a quarantine file"
# What it prints is a quarantine tpuci reads: as it is, it holds test_flip.
run_tpuci flaky --release --quarantine proposed.yaml
expect_code 0 "the proposals read as a quarantine"
cp proposed.yaml tpuci-quarantine.yaml
run_tpuci flaky --propose
expect_out "0 tests flipped in at least 10% of their runs in the last 5 runs (.tpuci/history.jsonl), 1 more already quarantined"
expect_not_out "- test:" "a quarantined test is not proposed again"
rm tpuci-quarantine.yaml

# No CODEOWNERS line gives an owner: said, and the entry still reads.
: > empty_owners
run_tpuci flaky --propose --codeowners empty_owners
expect_out '  owner: "unowned"  # no line of empty_owners covers tests/test_g.py'
printf 'docs/*  @docs\n' > owners2
run_tpuci flaky --propose --codeowners owners2 --min-rate 0.8
expect_out "0 tests flipped in at least 80% of their runs"
run_tpuci flaky --propose --min-rate 0.5 --codeowners owners2
expect_out '  owner: "unowned"  # no line of owners2 covers tests/test_g.py'

# From a folder below, the file above is found; paths are the folder's.
mkdir -p sub && cp -r .tpuci sub/ && cd sub || exit 1
printf '/sub/tests/  @subteam\n' >> ../.github/CODEOWNERS
run_tpuci flaky --propose
expect_out '  owner: "@subteam"'
cd .. || exit 1

# No CODEOWNERS here or above (to the git top): said in the entry.
mv .github/CODEOWNERS owners.bak
run_tpuci flaky --propose
expect_out '  owner: "unowned"  # no CODEOWNERS file: set one'

# Bad uses.
run_tpuci flaky --propose --json
expect_code 2 "--propose --json"
run_tpuci flaky --propose --min-rate 0
expect_code 2 "--min-rate 0"
run_tpuci flaky --min-rate 0.5
expect_code 2 "--min-rate without --propose"
run_tpuci flaky --propose --release
expect_code 2 "--propose --release"
run_tpuci flaky --propose --codeowners /nonexistent/CODEOWNERS
expect_code 2 "a --codeowners file that is not there"
expect_out "/nonexistent/CODEOWNERS: cannot read"
run_tpuci flaky --propose --state-dir /nonexistent
expect_code 2 "no history"
finish
